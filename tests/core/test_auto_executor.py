"""`lsrep run`'s default executor: in-process or a pool, chosen from the units and the cores."""

from __future__ import annotations

import json
from pathlib import Path

from lsrep.executors import make_executor
from lsrep.executors.auto import POOL_MIN_UNITS, AutoExecutor, choose_workers
from lsrep.executors.local import InProcessExecutor, ProcessPoolExecutor
from lsrep.exporting import export_rows
from lsrep.protocol.campaign import AnswererSpec, EmbedderSpec, MemoryModelSpec
from lsrep.runner import run_campaign
from lsrep.store import RunStore

REPO = Path(__file__).resolve().parents[2]


class _Task:
    """The fields `choose_workers` reads, on a stand-in for a UnitTask."""

    def __init__(self, answerer=None, embedder=None, memory_llm=None, memory_embedder=None):
        self.answerer = answerer or AnswererSpec()
        self.embedder = embedder or EmbedderSpec()
        self.memory_llm, self.memory_embedder = memory_llm, memory_embedder


def test_few_units_or_one_core_stay_in_process():
    assert choose_workers([_Task()] * (POOL_MIN_UNITS - 1), cores=2) == 1
    assert choose_workers([_Task()] * 50, cores=1) == 1


def test_enough_offline_units_get_one_worker_per_core_but_never_more_than_units():
    assert choose_workers([_Task()] * POOL_MIN_UNITS, cores=2) == 2
    assert choose_workers([_Task()] * 5, cores=8) == 5
    assert choose_workers([_Task(memory_llm=MemoryModelSpec(kind="offline"))] * 6, cores=2) == 2


def test_a_unit_calling_a_model_keeps_the_run_in_process():
    llm = AnswererSpec(kind="llm", endpoint={"base_url": "http://127.0.0.1:1/v1", "model": "m"})
    assert choose_workers([_Task()] * 5 + [_Task(answerer=llm)], cores=2) == 1
    assert choose_workers([_Task(embedder=EmbedderSpec(kind="openai"))] * 6, cores=2) == 1
    endpoint = MemoryModelSpec(base_url="http://127.0.0.1:1/v1", model="m")
    assert choose_workers([_Task(memory_embedder=endpoint)] * 6, cores=2) == 1


def test_make_executor_auto_without_workers_defers_the_choice():
    assert isinstance(make_executor("auto", None), AutoExecutor)
    assert type(make_executor("auto", 1)) is InProcessExecutor
    assert isinstance(make_executor("auto", 2), ProcessPoolExecutor)


def _exports(out) -> str:
    rows = export_rows(RunStore(out.store_path), out.run_id)
    for row in rows:
        row.pop("obs_id"), row.pop("run_id")
    return json.dumps(rows, sort_keys=True)


def test_the_default_runs_a_pool_for_four_units_with_the_same_results(example, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    example.write_text(example.read_text().replace("repetitions = 1", "repetitions = 2"))
    serial = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    auto = AutoExecutor(cores=2)
    pooled = run_campaign(example, executor=auto, fresh=True)
    assert isinstance(auto.chosen, ProcessPoolExecutor) and auto.chosen.workers == 2
    assert _exports(serial) == _exports(pooled)
    few = AutoExecutor(cores=2)
    run_campaign(example, executor=few, fresh=True, conditions=("null",))
    assert type(few.chosen) is InProcessExecutor


def test_lsrep_run_without_workers_uses_the_automatic_choice():
    from lsrep.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["run", "campaign.toml"])
    assert args.executor == "auto" and args.workers is None
    assert isinstance(make_executor(args.executor, args.workers, args.address), AutoExecutor)
    pinned = parser.parse_args(["run", "campaign.toml", "--workers", "1"])
    assert type(make_executor(pinned.executor, pinned.workers, pinned.address)) is InProcessExecutor
