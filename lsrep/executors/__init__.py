"""Executors: where units run (`local`: in-process and process pool; `ray_cluster`: Ray).
`make_executor` picks one by name."""

from __future__ import annotations

from lsrep.executors.local import Executor, InProcessExecutor, ProcessPoolExecutor, crashed_unit

__all__ = ["Executor", "InProcessExecutor", "ProcessPoolExecutor", "crashed_unit", "make_executor"]


def make_executor(name: str, workers: int = 1, address: str | None = None) -> Executor:
    """`auto` with one worker: this process, two units overlapped where two cores are usable
    (see `lsrep.executors.overlap`); with more: a process pool. `in-process`: strictly one
    unit after another."""
    if name == "auto" and workers <= 1:
        from lsrep.executors.overlap import OverlappedExecutor, usable_cores

        return OverlappedExecutor(2) if usable_cores() >= 2 else InProcessExecutor()
    if name == "in-process":
        return InProcessExecutor()
    if name in ("process", "auto"):
        return ProcessPoolExecutor(workers)
    if name == "ray":
        from lsrep.executors.ray_cluster import RayExecutor

        return RayExecutor(address=address, workers=workers)
    from lsrep.errors import ConfigError

    raise ConfigError(f"unknown executor {name!r} (in-process, process, ray)")
