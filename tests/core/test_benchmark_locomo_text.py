"""`benchmarks/longmemeval_diagnostic.py --text locomo`: the file's shape kept, every turn rewritten
from LoCoMo turns (read in place), the same rewrite for the same seed."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import REPO


def _benchmark():
    spec = importlib.util.spec_from_file_location("longmemeval_diagnostic", REPO / "benchmarks" / "longmemeval_diagnostic.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_locomo_text_keeps_the_shape_and_rewrites_every_turn(tmp_path, shared):
    from lsrep.probes.generator import generate_longmemeval_file

    bench = _benchmark()
    locomo = shared / "datasets" / "locomo" / "locomo-dev7.json"
    assert bench.LOCOMO == locomo  # the default reads the shared data in place
    pool = {turn["text"] for conv in json.loads(locomo.read_text()) for key, session in conv["conversation"].items()
            if key.startswith("session_") and isinstance(session, list) for turn in session if turn.get("text")}
    src = generate_longmemeval_file(tmp_path / "lme.json", n_questions=4, sessions_per_question=3, seed=5)
    out = bench.with_locomo_text(src, tmp_path / "a.json", locomo)
    before, after = json.loads(src.read_text()), json.loads(out.read_text())
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        assert {k: v for k, v in new.items() if k != "haystack_sessions"} == \
            {k: v for k, v in old.items() if k != "haystack_sessions"}
        assert [len(s) for s in new["haystack_sessions"]] == [len(s) for s in old["haystack_sessions"]]
        for old_s, new_s in zip(old["haystack_sessions"], new["haystack_sessions"], strict=True):
            for o, n in zip(old_s, new_s, strict=True):
                assert {k: v for k, v in n.items() if k != "content"} == {k: v for k, v in o.items() if k != "content"}
                # Whole LoCoMo turns joined by a space, each counted with the space after it, until
                # the original length is reached: no more turns than that takes.
                assert len(n["content"]) + 1 >= len(o["content"]) and n["content"] != o["content"]
                last = max((t for t in pool if n["content"].endswith(t)), key=len)
                assert n["content"] == last or len(n["content"]) - len(last) < len(o["content"])
    assert bench.with_locomo_text(src, tmp_path / "b.json", locomo).read_text() == out.read_text()
    with pytest.raises(SystemExit, match="cannot read"):
        bench.with_locomo_text(src, tmp_path / "c.json", tmp_path / "missing.json")
