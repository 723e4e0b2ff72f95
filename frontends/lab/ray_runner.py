"""--backend ray: the candidates on a Ray cluster (the one at an address, one already joined, or a local one)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from frontends.lab.runner import simulate_one, windowed


class RayRunner:
    """Simulates points as Ray tasks: on the cluster at `address` ("auto" for the one this machine belongs to),
    on the one this process already joined (ray.init() before the sweep), or else on a local Ray of `workers`
    CPUs that closes with the runner. The target goes to the object store once; each task carries one point,
    and as many tasks are in flight as the cluster has CPUs."""

    def __init__(self, target, workers: int, address: str | None = None):
        import ray  # lazily: only this backend needs ray

        self.ray = ray
        self.owns = not ray.is_initialized()
        if self.owns:
            ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False,
                     log_to_driver=False, logging_level="ERROR")
        self.target = ray.put(target)
        self.task = ray.remote(num_cpus=1)(simulate_one)
        self.window = max(1, int(ray.cluster_resources().get("CPU", workers)))

    def run(self, keyed_points: Iterable[tuple[int, dict]]) -> Iterator[tuple[int, dict]]:
        ray = self.ray

        def finished(refs):
            ready, _ = ray.wait(refs, num_returns=1)
            return [(ref, ray.get(ref)) for ref in ready]

        yield from windowed(keyed_points, self.window, lambda point: self.task.remote(self.target, point), finished)

    def close(self) -> None:
        if self.owns:
            self.ray.shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
