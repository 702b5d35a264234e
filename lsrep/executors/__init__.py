"""Executors: where units run (`local`: in-process and process pool; `ray_cluster`: Ray).
`make_executor` picks one by name."""

from __future__ import annotations

from lsrep.executors.local import Executor, InProcessExecutor, ProcessPoolExecutor, crashed_unit

__all__ = ["Executor", "InProcessExecutor", "ProcessPoolExecutor", "crashed_unit", "make_executor"]


def make_executor(name: str, workers: int | None = 1, address: str | None = None) -> Executor:
    """`auto`: in-process with one worker, a process pool with more, and with `workers=None`
    (`lsrep run` without `--workers`) chosen from the units and cores (`lsrep.executors.auto`).
    `overlapped`: this process, two hosted units at a time in threads (see
    `lsrep.executors.overlap`), where two cores are usable."""
    if name == "auto" and workers is None:
        from lsrep.executors.auto import AutoExecutor

        return AutoExecutor()
    workers = 1 if workers is None else workers
    if name == "in-process" or (name == "auto" and workers <= 1):
        return InProcessExecutor()
    if name == "overlapped":
        from lsrep.executors.overlap import OverlappedExecutor, usable_cores

        return OverlappedExecutor(2) if usable_cores() >= 2 else InProcessExecutor()
    if name in ("process", "auto"):
        return ProcessPoolExecutor(workers)
    if name == "ray":
        from lsrep.executors.ray_cluster import RayExecutor

        return RayExecutor(address=address, workers=workers)
    from lsrep.errors import ConfigError

    raise ConfigError(f"unknown executor {name!r} (in-process, overlapped, process, ray)")
