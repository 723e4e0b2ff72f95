"""Wall-clock helper shared by the benchmarks."""
import time


def best_of(repeat, fn):
    """(best wall time in seconds over `repeat` calls of fn, the last result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result
