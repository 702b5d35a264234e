"""Worker processes open the same fresh response cache at once (a process pool's units share the
campaign's cache): none may fail with "database is locked" while the file switches to WAL."""

from __future__ import annotations

import multiprocessing as mp


def _open(path: str, barrier, errors) -> None:
    from lsrep.llm.cache import ResponseCache

    barrier.wait()
    try:
        cache = ResponseCache(path)
        cache.get("k")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        errors.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_one_fresh_cache_at_once_all_succeed(tmp_path):
    ctx = mp.get_context("fork")
    for round_ in range(12):
        path = str(tmp_path / f"cache-{round_}.sqlite")
        barrier, errors = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open, args=(path, barrier, errors)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        found = []
        while not errors.empty():
            found.append(errors.get())
        assert found == [], (round_, found)
        assert all(p.exitcode == 0 for p in procs)
