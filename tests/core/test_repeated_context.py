"""A context returned again (the same fragment objects: every probe of a checkpoint, for many
systems) is recorded from the previous observation's rows, audit and totals; the stored rows are
the same as recording every observation afresh (the plain rule), row for row.

Covered: the adapter host's wire (a repeated result sent as `$query_again`, a repeated
`$query_json` body decoded once), the context audit's and the returned-token count's identity
shortcut, and the engine's fragment rows, totals and in-prompt events (`lsrep.fragment_rows.ContextRows`),
under persistent and isolated access, with a full-context window that cuts and an answerer window
that drops fragments. The plain run has the adapters in-process (no wire) and the shortcuts off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.core.golden import REPO, campaign_rows

CONDITIONS = '''
[[conditions]]
name = "full-context-cut"
system = "full-context"
options = { context_limit = 200 }

[[conditions]]
name = "exia-seed"
system = "exia-seed"
'''


def _campaign(root: Path, schedule: str, window: int) -> Path:
    shutil.copytree(REPO / "campaigns" / "quickstart", root / "campaigns" / "quickstart", dirs_exist_ok=True)
    shutil.copytree(REPO / "schedules", root / "schedules", dirs_exist_ok=True)
    text = (REPO / "campaigns" / "quickstart.toml").read_text()
    text = text.replace("[answerer]", CONDITIONS + "\n[answerer]").replace("session-end.toml", schedule)
    text = text.replace('overflow = "fail"', 'overflow = "truncate_oldest"')
    text = text.replace("context_window = 32768", f"context_window = {window}")
    path = root / "campaigns" / f"repeated-{schedule}-{window}.toml"
    path.write_text(text)
    return path


def _rows(path: Path, store: Path, adapter_host: str):
    from lsrep.runner import run_campaign
    from lsrep.store import RunStore

    out = run_campaign(path, fresh=True, store_path=store, adapter_host=adapter_host)
    return campaign_rows(RunStore(out.store_path), out.run_id, "")


@pytest.mark.parametrize("schedule,window", [("session-end.toml", 32768), ("session-end-isolated.toml", 700)])
def test_repeated_contexts_store_what_recording_afresh_stores(tmp_path, monkeypatch, schedule, window):
    import lsrep.context_audit as context_audit
    import lsrep.engine as engine
    from lsrep.host import wire

    path = _campaign(tmp_path, schedule, window)
    hits = {"rows": 0}
    plain_same = context_audit.same_items

    def counting(a, b):
        same = plain_same(a, b)
        hits["rows"] += same
        return same

    monkeypatch.setattr(engine, "same_items", counting)
    fast = _rows(path, tmp_path / "fast.sqlite", "process")
    # The shortcuts were taken: repeated contexts were recorded from the previous observation.
    assert hits["rows"] > 0
    monkeypatch.setattr(engine, "same_items", lambda a, b: False)
    monkeypatch.setattr(context_audit, "same_items", lambda a, b: False)
    monkeypatch.setattr(wire, "_query_from_json", wire.QueryResult.model_validate_json)
    plain = _rows(path, tmp_path / "plain.sqlite", "in-process")
    assert set(fast) == set(plain) and len(fast) == 5
    for condition in plain:
        for table, rows in plain[condition].items():
            assert fast[condition][table] == rows, (condition, table)
    assert sum(len(t["fragments"]) for t in plain.values()) > 0
    if window == 700:  # the answerer's window dropped fragments somewhere
        assert any(r["truncated_tokens"] for t in plain.values() for r in t["observations"])


def test_the_same_fragments_at_another_prefix_are_judged_again():
    # One list object asked at prefix 2 (its second fragment copies turn 4: a leak) and then at 5
    # (sourced): the identity shortcut must not carry the first verdict over.
    from lsrep.context_audit import audit_context
    from lsrep.contract import Fragment
    from lsrep.provenance import TurnIndex
    from lsrep.references import Expected
    from tests.core.test_fragment_rows import TURN_IDS, TURNS

    frags = [Fragment(text=TURNS[0], source_turn_ids=("t0",)), Fragment(text=TURNS[4], source_turn_ids=("t4",))]
    turn_index = {t: i for i, t in enumerate(TURN_IDS)}
    index = TurnIndex(TURNS)
    seen = []
    for prefix_len in (2, 2, 5, 5, 2):
        got = audit_context(frags, prefix_len, Expected(ask=True), index, turn_index)
        want = audit_context(list(frags), prefix_len, Expected(ask=True), TurnIndex(TURNS), turn_index)
        assert (got.row, got.verdicts, got.citation_leaks, got.carried) == (
            want.row, want.verdicts, want.citation_leaks, want.carried)
        seen.append(got.row["content_leaks"])
    assert seen == [1, 1, 0, 0, 1]


def test_the_turn_order_is_the_mapping_in_use():
    # The ids-by-position list is sorted once per mapping: another mapping (other ids) on the same
    # index names its own turns in `carried`.
    from lsrep.context_audit import audit_context
    from lsrep.contract import Fragment
    from lsrep.provenance import TurnIndex
    from lsrep.references import Expected
    from tests.core.test_fragment_rows import TURNS

    index = TurnIndex(TURNS)
    for prefix in ("t", "u", "t"):
        turn_index = {f"{prefix}{i}": i for i in range(len(TURNS))}
        frags = [Fragment(text=TURNS[4], source_turn_ids=(f"{prefix}4",))]
        got = audit_context(frags, 5, Expected(ask=True), index, turn_index)
        assert got.carried == ((f"{prefix}4",),)
