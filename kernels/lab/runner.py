"""Where the candidates are simulated: this process, or a pool of local worker processes.

Each worker receives the target once (at start-up) and then one point per task (a few field values), so the
per-task payload stays small. A worker that faults or crashes on a candidate reports the error for that
candidate only.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

_TARGET = None


def _start_worker(target) -> None:
    global _TARGET
    _TARGET = target


def _simulate(point: dict) -> dict:
    return simulate_one(_TARGET, point)


def simulate_one(target, point: dict) -> dict:
    """The target's timing-only run of one point, with its wall time; an error becomes `error` in the row."""
    start = time.perf_counter()
    try:
        result = target.simulate(point)
    except Exception as err:  # noqa: BLE001 - a fault on one candidate is that candidate's result
        result = {"error": f"{type(err).__name__}: {' '.join(str(err).split())}"}
    result["sim_seconds"] = time.perf_counter() - start
    return result


class LocalRunner:
    """Simulates points on `workers` local processes (in this process when workers == 1)."""

    def __init__(self, target, workers: int):
        self.target, self.workers = target, workers
        self.pool = ProcessPoolExecutor(workers, initializer=_start_worker, initargs=(target,)) \
            if workers > 1 else None

    def run(self, keyed_points: Iterable[tuple[int, dict]]) -> Iterator[tuple[int, dict]]:
        """(key, result) for every (key, point), in the order they finish."""
        if self.pool is None:
            for key, point in keyed_points:
                yield key, simulate_one(self.target, point)
            return
        futures: dict[Future, int] = {self.pool.submit(_simulate, point): key for key, point in keyed_points}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield futures[future], future.result()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class DaskRunner:
    """Simulates points on a dask.distributed cluster: the one at `address`, or a LocalCluster of `workers`
    single-threaded processes. The target is scattered to the workers once; each task carries one point."""

    def __init__(self, target, workers: int, address: str | None = None):
        from dask.distributed import Client, LocalCluster  # lazily: only this backend needs dask

        self.cluster = None if address else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                         dashboard_address=":0")
        self.client = Client(address or self.cluster)
        self.target = self.client.scatter(target, broadcast=True)

    def run(self, keyed_points: Iterable[tuple[int, dict]]) -> Iterator[tuple[int, dict]]:
        from dask.distributed import as_completed

        futures = {self.client.submit(simulate_one, self.target, point, pure=False): key
                   for key, point in keyed_points}
        for future in as_completed(futures):
            yield futures[future], future.result()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
