"""A unit's own step bar: drawn only when asked, the same rows either way, and tqdm not imported
by the engine otherwise (a spawned worker imports the engine for every run)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from lsrep.engine import run_unit
from lsrep.executors.local import Executor

TIMINGS = {"elapsed_s", "elapsed_ms", "total_ms", "query_ms", "answer_ms", "latency_ms", "started_at",
           "finished_at", "created_at", "ms"}


class _Grab(Executor):
    def run(self, tasks):
        self.tasks = list(tasks)
        return iter(())


def _rows(result) -> dict:
    return {table: [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]
            for table, rows in result.tables.items()}


def test_the_step_bar_is_drawn_only_when_asked_and_changes_no_row(tmp_path, capfd):
    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=1, sessions_per_question=2, seed=3)
    grab = _Grab()
    run_longmemeval(spec_from_systems(["vector-rag"], data, store=tmp_path / "s.sqlite"), executor=grab, fresh=True)
    (task,) = grab.tasks
    quiet = run_unit(dataclasses.replace(task, progress=False))
    assert task.unit_id not in capfd.readouterr().err
    shown = run_unit(dataclasses.replace(task, progress=True))
    err = capfd.readouterr().err
    assert task.unit_id in err and "step" in err, "no step bar on stderr"
    assert quiet.unit["status"] == shown.unit["status"] == "finished"
    assert _rows(quiet) == _rows(shown)


def test_the_engine_does_not_import_tqdm():
    code = "import sys, lsrep.engine, lsrep.executors.local; sys.exit('tqdm' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent).returncode == 0
