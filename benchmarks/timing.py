"""Wall-clock helper shared by the benchmarks."""
import gc
import time


def best_of(repeat, fn):
    """(best wall time in seconds over `repeat` calls of fn, the last result).

    The garbage collector runs before each call, outside the timing: a full collection owed to the objects of
    earlier runs (a recorded run keeps about ten per instruction) is not charged to this one."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result
