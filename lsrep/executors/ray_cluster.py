"""Ray executor (`--executor ray`): units as Ray tasks, locally or on a cluster.

Ray is an optional extra (`pip install 'lsrep[ray]'`). Workers return rows to the
driver, which stays the only writer to the store. A task whose worker dies
becomes a failed unit with failure rows; the campaign continues.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lsrep.engine import UnitResult, UnitTask, run_unit
from lsrep.errors import ConfigError
from lsrep.executors.local import Executor, crashed_unit


class RayExecutor(Executor):
    """Submit each unit as a Ray task; a bounded window keeps the driver's memory flat."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int = 1, window: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError("the Ray executor needs Ray: pip install 'lsrep[ray]'") from None
        self.ray = ray
        self.address = address
        self.workers = max(1, workers)
        self.window = window or 4 * self.workers
        self._started_here = False

    def _ensure(self) -> None:
        if self.ray.is_initialized():
            return
        kwargs = {"include_dashboard": False, "log_to_driver": False, "ignore_reinit_error": True}
        if self.address:
            self.ray.init(address=self.address, **kwargs)
        else:
            self.ray.init(num_cpus=self.workers, **kwargs)
        self._started_here = True

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        self._ensure()
        remote = self.ray.remote(max_retries=0)(run_unit)
        source = iter(tasks)
        pending: dict = {}

        def refill() -> None:
            for task in source:
                pending[remote.remote(task)] = task
                if len(pending) >= self.window:
                    break

        refill()
        while pending:
            ready, _ = self.ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    yield self.ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a lost worker is a failed unit
                    yield crashed_unit(task, exc)
            refill()

    def shutdown(self) -> None:
        if self._started_here and self.ray.is_initialized():
            self.ray.shutdown()
