"""Where the candidates are simulated: this process, or a pool of local worker processes.

Each worker receives the target once (at start-up) and then one point per task (a few field values), so the
per-task payload stays small. A worker that faults or crashes on a candidate reports the error for that
candidate only. Every backend keeps only as many points in flight as it has workers and takes the next point
from the caller's iterator when one finishes, so that the caller can decide about it (prune it) knowing the
results so far.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

_TARGET = None


def _start_worker(target) -> None:
    global _TARGET
    _TARGET = target


def _simulate(point: dict) -> dict:
    return simulate_one(_TARGET, point)


def simulate_one(target, point: dict) -> dict:
    """The target's timing-only run of one point, with its wall and CPU time (the CPU time is what to compare on
    a shared machine); an error becomes `error` in the row."""
    start, cpu = time.perf_counter(), time.process_time()
    try:
        result = target.simulate(point)
    except Exception as err:  # noqa: BLE001 - a fault on one candidate is that candidate's result
        result = {"error": f"{type(err).__name__}: {' '.join(str(err).split())}"}
    result["sim_seconds"] = time.perf_counter() - start
    result["sim_cpu_seconds"] = time.process_time() - cpu
    return result


def windowed(keyed_points: Iterable[tuple[int, dict]], window: int, submit: Callable,
             finished: Callable) -> Iterator[tuple[int, dict]]:
    """(key, result) for every (key, point) in the order they finish, with at most `window` points submitted
    and not yet returned. submit(point) -> handle; finished(handles) -> [(handle, result)] of at least one.
    The next point is taken only after the results before it were handed to the caller."""
    points = iter(keyed_points)
    in_flight: dict = {}
    while True:
        while len(in_flight) < window:
            item = next(points, None)
            if item is None:
                break
            in_flight[submit(item[1])] = item[0]
        if not in_flight:
            return
        for handle, result in finished(list(in_flight)):
            yield in_flight.pop(handle), result


class LocalRunner:
    """Simulates points on `workers` local processes (in this process when workers == 1)."""

    def __init__(self, target, workers: int):
        self.target, self.workers = target, workers
        self.pool = ProcessPoolExecutor(workers, initializer=_start_worker, initargs=(target,)) \
            if workers > 1 else None

    def run(self, keyed_points: Iterable[tuple[int, dict]]) -> Iterator[tuple[int, dict]]:
        if self.pool is None:
            for key, point in keyed_points:
                yield key, simulate_one(self.target, point)
            return
        yield from windowed(keyed_points, self.workers, lambda point: self.pool.submit(_simulate, point),
                            _first_completed)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _first_completed(futures):
    done, _ = wait(futures, return_when=FIRST_COMPLETED)
    return [(future, future.result()) for future in done]
