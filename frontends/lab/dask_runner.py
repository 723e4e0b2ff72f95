"""--backend dask: the candidates on a dask.distributed cluster (the scheduler at an address, or a LocalCluster)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from frontends.lab.runner import simulate_one, windowed


class DaskRunner:
    """Simulates points on a dask.distributed cluster: the one at `address`, or a LocalCluster of `workers`
    single-threaded processes. The target is scattered to the workers once; each task carries one point, and
    as many tasks are in flight as the cluster has worker threads."""

    def __init__(self, target, workers: int, address: str | None = None):
        from dask.distributed import Client, LocalCluster  # lazily: only this backend needs dask

        self.cluster = None if address else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                         dashboard_address=":0")
        self.client = Client(address or self.cluster)
        self.target = self.client.scatter(target, broadcast=True)
        self.window = max(1, sum(self.client.nthreads().values()))

    def run(self, keyed_points: Iterable[tuple[int, dict]]) -> Iterator[tuple[int, dict]]:
        from dask.distributed import wait

        def finished(futures):
            done, _ = wait(futures, return_when="FIRST_COMPLETED")
            return [(future, future.result()) for future in done]

        yield from windowed(keyed_points, self.window,
                            lambda point: self.client.submit(simulate_one, self.target, point, pure=False), finished)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
