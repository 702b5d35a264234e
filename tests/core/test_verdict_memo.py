"""The deterministic judge's verdict, memoised per unit (`lsrep.verdicts`): a verdict is reused only
for a row equal in every field the verdict reads, and never across units.

Each part of `verdict_key` has a test that fails when the part is left out of the key: the rows
differ only in that part, the verdicts differ (answer, references, kind, question) or the memo must
miss (category, judge version). `sim_time`, left out of the key, is shown not to be read by the judge.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lsrep.verdicts as verdicts
from lsrep.judge.campaign import case_from_row
from lsrep.judge.deterministic import judge_deterministic
from lsrep.verdicts import deterministic_judgement, verdict_key

REPO = Path(__file__).resolve().parents[2]


def _expected(*answers: str, superseded: tuple[str, ...] = (), aliases: tuple[str, ...] = ()) -> str:
    def version(a: str, al: tuple[str, ...] = ()) -> dict:
        return {"answer": a, "aliases": list(al), "valid_from": "2024-01-01", "valid_until": None, "evidence": []}

    return json.dumps({"expect_abstain": False, "in_force": [version(a, aliases) for a in answers],
                       "superseded": [version(s) for s in superseded], "later": []})


def _row(**over) -> dict:
    row = {"obs_id": "r:u:1:q1", "run_id": "r", "status": "ok", "question": "Where does Maya live?",
           "answer": "Berlin", "kind": "current", "category": "location", "expected": _expected("Berlin"),
           "sim_time": "2024-03-01T10:00:00+00:00"}
    return {**row, **over}


@pytest.fixture
def computed(monkeypatch) -> list[dict]:
    """The rows whose verdict was computed (a memo miss)."""
    seen: list[dict] = []
    plain = verdicts._verdict

    def counted(row):
        seen.append(row)
        return plain(row)

    monkeypatch.setattr(verdicts, "_verdict", counted)
    return seen


def _judged(row: dict, memo: dict | None) -> dict:
    out = deterministic_judgement(row, memo)
    return {k: out[k] for k in ("obs_id", "outcome", "correct", "exact", "f1")}


def test_same_fields_at_another_checkpoint_reuse_the_verdict(computed):
    memo: dict = {}
    first = _judged(_row(), memo)
    again = _judged(_row(obs_id="r:u:2:q1", sim_time="2024-06-01T10:00:00+00:00"), memo)
    assert len(computed) == 1
    assert first["outcome"] == again["outcome"] == "correct"
    assert again["obs_id"] == "r:u:2:q1"  # the row's own id, not the memoised one's
    assert again == _judged(_row(obs_id="r:u:2:q1", sim_time="2024-06-01T10:00:00+00:00"), None)


@pytest.mark.parametrize("field,first,second", [
    # The same answer against other references: correct, then wrong.
    ("expected", _expected("Berlin"), _expected("Paris")),
    # The same references, another answer.
    ("answer", "Berlin", "Paris"),
    # Both versions, out of order: one of them given (`current`), not the versions in order (`evolution`).
    ("kind", "current", "evolution"),
])
def test_a_row_differing_in_one_read_field_gets_its_own_verdict(computed, field, first, second):
    base = {"expected": _expected("Leeds", "Berlin"), "answer": "Berlin, then Leeds"} if field == "kind" else {}
    memo: dict = {}
    a = _judged(_row(**{**base, field: first}), memo)
    b = _judged(_row(**{**base, field: second}), memo)
    assert len(computed) == 2
    assert a == _judged(_row(**{**base, field: first}), None)
    assert b == _judged(_row(**{**base, field: second}), None)
    assert (a["outcome"], a["correct"], a["exact"], a["f1"]) != (b["outcome"], b["correct"], b["exact"], b["f1"])


def test_the_question_is_part_of_the_key(computed):
    # "her" in the question names whose value the answer gives: the same answer judged against two questions.
    expected = _expected("Maya's sister")
    memo: dict = {}
    a = _judged(_row(question="Who visited Maya?", answer="her sister", expected=expected), memo)
    b = _judged(_row(question="Who visited Tom?", answer="her sister", expected=expected), memo)
    assert len(computed) == 2
    assert a == _judged(_row(question="Who visited Maya?", answer="her sister", expected=expected), None)
    assert b == _judged(_row(question="Who visited Tom?", answer="her sister", expected=expected), None)


@pytest.mark.parametrize("field,second", [("category", "work"), ("question", "Where is Maya based?")])
def test_other_fields_the_case_carries_miss_the_memo(computed, field, second):
    memo: dict = {}
    _judged(_row(), memo)
    _judged(_row(**{field: second}), memo)
    assert len(computed) == 2


def test_the_judge_version_is_part_of_the_key(computed, monkeypatch):
    import lsrep.judge.deterministic as deterministic

    memo: dict = {}
    _judged(_row(), memo)
    monkeypatch.setattr(deterministic, "DETERMINISTIC_VERSION", "test-next")
    out = deterministic_judgement(_row(), memo)
    assert len(computed) == 2
    assert out["judge_version"] == "test-next"
    assert verdict_key(_row())[0] == "test-next"


class _Unreadable:
    """A value whose every use raises: the judge must not read the simulated now."""

    def __getattribute__(self, name):
        raise AssertionError(f"the deterministic judge read the simulated now ({name})")

    def __str__(self):
        raise AssertionError("the deterministic judge read the simulated now")

    def __eq__(self, other):
        raise AssertionError("the deterministic judge read the simulated now")

    __hash__ = None


@pytest.mark.parametrize("row", [
    _row(), _row(answer="Paris"), _row(answer="I don't know"),
    _row(kind="evolution", expected=_expected("Leeds", "Berlin"), answer="Leeds, then Berlin"),
    _row(expected=_expected("Berlin", superseded=("Paris",)), answer="Paris, or maybe Berlin"),
])
def test_the_judge_does_not_read_the_simulated_now(row):
    # `verdict_key` leaves `sim_time` out: this fails when the judge starts reading it (then add it).
    case = case_from_row(row)
    blind = case.model_copy(update={"now": _Unreadable()})
    assert judge_deterministic(blind) == judge_deterministic(case)


def test_error_rows_are_not_judged_nor_memoised(computed):
    memo: dict = {}
    out = deterministic_judgement(_row(status="error"), memo)
    assert (out["outcome"], out["correct"], out["f1"]) == ("error", 0, None)
    assert memo == {} and computed == []


def test_the_memo_is_bounded(computed, monkeypatch):
    monkeypatch.setattr(verdicts, "VERDICT_MEMO_LIMIT", 3)
    memo: dict = {}
    for i in range(7):
        _judged(_row(answer=f"answer {i}"), memo)
    assert 1 <= len(memo) <= 3
    assert len(computed) == 7


def test_each_unit_has_its_own_memo(tmp_path, computed):
    """Two repetitions of a unit store the same rows: a memo shared across units would compute each
    verdict once; one per unit computes it once per unit. The judgements stored are those of the
    plain rule (no memo)."""
    import shutil

    from lsrep.runner import run_campaign
    from lsrep.store import RunStore

    shutil.copytree(REPO / "campaigns" / "quickstart", tmp_path / "campaigns" / "quickstart")
    shutil.copytree(REPO / "schedules", tmp_path / "schedules")
    path = tmp_path / "campaigns" / "q.toml"
    path.write_text((REPO / "campaigns" / "quickstart.toml").read_text())
    out = run_campaign(path, fresh=True, store_path=tmp_path / "s.sqlite", conditions=["vector-rag"],
                       overrides=("repetitions=2",), adapter_host="in-process")
    store = RunStore(out.store_path)
    rows = store.rows("select o.*, j.outcome, j.correct, j.exact, j.f1 from observations o join judgements j "
                      "on j.obs_id = o.obs_id and j.judge = 'deterministic' where o.run_id = ? order by o.rowid",
                      [out.run_id])
    units = sorted({r["unit_id"] for r in rows})
    assert len(units) == 2
    per_unit = {u: {verdict_key(r) for r in rows if r["unit_id"] == u and r["status"] == "ok"} for u in units}
    assert per_unit[units[0]] == per_unit[units[1]]
    assert len(per_unit[units[0]]) < sum(r["unit_id"] == units[0] for r in rows)  # the memo is used
    assert len(computed) == 2 * len(per_unit[units[0]])
    for r in rows:
        plain = deterministic_judgement(r)
        assert (r["outcome"], r["correct"], r["exact"], r["f1"]) == (plain["outcome"], plain["correct"],
                                                                      plain["exact"], plain["f1"])
