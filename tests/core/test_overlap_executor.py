"""The overlapped executor: two hosted units at a time in threads, the same rows in the same order."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import lsrep.executors.overlap as overlap
from lsrep.executors import make_executor
from lsrep.executors.local import InProcessExecutor
from lsrep.executors.overlap import OverlappedExecutor
from lsrep.exporting import export_rows
from lsrep.runner import run_campaign
from lsrep.store import RunStore


def _rows_in_store_order(out) -> str:
    """Observations and fragments as stored (rowid order), run ids removed."""
    store = RunStore(out.store_path)
    rows = export_rows(store, out.run_id)
    for row in rows:
        row.pop("obs_id"), row.pop("run_id")
    units = [r["unit_id"] for r in store.rows("select unit_id from units where run_id = ? order by rowid",
                                              [out.run_id])]
    frags = [{k: v for k, v in r.items() if k != "obs_id"} | {"obs": r["obs_id"].split(":", 1)[1]}
             for r in store.rows("select f.* from fragments f join observations o on o.obs_id = f.obs_id "
                                 "where o.run_id = ? order by f.rowid", [out.run_id])]
    return json.dumps({"units": units, "rows": rows, "fragments": frags}, sort_keys=True, default=str)


def test_overlapped_matches_in_process_row_for_row(example: Path):
    serial = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    overlapped = run_campaign(example, executor=OverlappedExecutor(2), fresh=True)
    assert serial.units_run == overlapped.units_run > 2
    assert _rows_in_store_order(serial) == _rows_in_store_order(overlapped)


def test_overlapped_runs_two_hosted_units_at_once_and_yields_in_task_order(monkeypatch):
    active, peak, lock = [0], [0], threading.Lock()

    def fake_run_unit(task):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05 * (5 - task))  # earlier tasks finish later
        with lock:
            active[0] -= 1
        return task

    class Task(int):
        adapter_host = "process"

    monkeypatch.setattr(overlap, "run_unit", fake_run_unit)
    assert list(OverlappedExecutor(2).run(Task(i) for i in range(5))) == list(range(5))
    assert peak[0] == 2


def test_in_process_hosted_units_run_alone_in_the_calling_thread(monkeypatch):
    seen = []

    def fake_run_unit(task):
        seen.append((int(task), threading.current_thread() is threading.main_thread()))
        return task

    class Hosted(int):
        adapter_host = "process"

    class Inline(int):
        adapter_host = "in-process"

    monkeypatch.setattr(overlap, "run_unit", fake_run_unit)
    tasks = [Hosted(0), Inline(1), Hosted(2)]
    assert list(OverlappedExecutor(2).run(tasks)) == [0, 1, 2]
    assert (1, True) in seen and (0, False) in seen


def test_overlapped_is_chosen_by_name_where_two_cores_are_usable(monkeypatch):
    monkeypatch.setattr(overlap, "usable_cores", lambda: 2)
    assert isinstance(make_executor("overlapped", 1), OverlappedExecutor)
    assert type(make_executor("auto", 1)) is InProcessExecutor
    monkeypatch.setattr(overlap, "usable_cores", lambda: 1)
    assert type(make_executor("overlapped", 1)) is InProcessExecutor


def test_longmemeval_default_overlaps_short_questions_within_the_memory_budget(monkeypatch):
    from lsrep.longmemeval import MEMORY_BUDGET_MB, OVERLAP_MB, OVERLAP_TURNS, default_executor

    monkeypatch.setattr(overlap, "usable_cores", lambda: 2)
    default = default_executor("auto", 1, MEMORY_BUDGET_MB)
    assert isinstance(default, OverlappedExecutor) and default.max_turns == OVERLAP_TURNS
    assert default_executor("auto", 1, OVERLAP_MB).max_turns is None
    assert type(default_executor("auto", 1, MEMORY_BUDGET_MB - 1)) is InProcessExecutor
    assert type(default_executor("in-process", 1, OVERLAP_MB)) is InProcessExecutor
    monkeypatch.setattr(overlap, "usable_cores", lambda: 1)
    assert type(default_executor("auto", 1, MEMORY_BUDGET_MB)) is InProcessExecutor


def test_a_unit_longer_than_max_turns_runs_alone(monkeypatch):
    """Two short units overlap; a long one waits for the units before it and none starts beside it."""
    active, log, lock = [0], [], threading.Lock()

    def fake_run_unit(task):
        with lock:
            active[0] += 1
            log.append((task.n, active[0]))
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return task.n

    class Task:
        adapter_host = "process"

        def __init__(self, n: int, turns: int) -> None:
            self.n = n
            self.trajectory = type("T", (), {"turns": (None,) * turns})()

    monkeypatch.setattr(overlap, "run_unit", fake_run_unit)
    tasks = [Task(0, 10), Task(1, 10), Task(2, 50), Task(3, 10), Task(4, 10)]
    assert list(OverlappedExecutor(2, max_turns=20).run(tasks)) == [0, 1, 2, 3, 4]
    alone = dict(log)
    assert alone[2] == 1, "the long unit ran beside another"
    assert max(alone.values()) == 2, "short units did not overlap"


def test_in_task_order_submits_at_most_depth_ahead_and_runs_long_units_alone_after_the_rest():
    import concurrent.futures as cf
    from collections import deque
    from types import SimpleNamespace

    def task(name, turns=1, host="process"):
        return SimpleNamespace(name=name, trajectory=SimpleNamespace(turns=[0] * turns), adapter_host=host)

    pending: deque = deque()
    ahead: list[int] = []
    events: list[str] = []

    def submit(t):
        ahead.append(len(pending))  # units already submitted and not yet yielded
        events.append(f"submit {t.name}")
        future = cf.Future()
        future.set_result(t.name)
        return future

    def alone(t):
        events.append(f"alone {t.name}")
        return t.name

    tasks = [task("a"), task("b"), task("c"), task("long", turns=5), task("d"), task("here", host="in-process"),
             task("e")]
    got = []
    for result in overlap.in_task_order(tasks, submit, alone, 2, 3, pending):
        events.append(f"yield {result}")
        got.append(result)
    assert got == ["a", "b", "c", "long", "d", "here", "e"]
    assert max(ahead) == 1  # depth 2: a third unit is never submitted before the first is yielded
    assert events.index("alone long") > events.index("yield c")  # the units before it come first
    assert events.index("submit d") > events.index("yield long")
    assert events.index("alone here") > events.index("yield d") and not pending
