"""Matched arms: the report says what text of a turn each condition embeds, and flags an arm that
embeds other text than the campaign's `[embedder] text` policy (issue #19, point 1)."""

from __future__ import annotations

import json

from lsrep.reports.model import build_report
from lsrep.reports.tree import Callout, Facts, Table

from lsrep.store import RunStore
from tests.fidelity.test_fidelity_cli import run_and_audit, write_campaign

ARMS = '''
[[conditions]]
name = "vector-rag"
system = "vector-rag"

[[conditions]]
name = "ice"
system = "ice"

[[conditions]]
name = "thalia"
system = "thalia"

[[conditions]]
name = "full-context"
system = "full-context"

[embedder]
text = "speaker"
'''


def manifest_blocks(campaign):
    run_and_audit(campaign)
    store = RunStore(campaign.parent / "runs.sqlite")
    run_id = store.latest_run()
    manifest = json.loads(store.rows("select manifest from runs where run_id = ?", [run_id])[0]["manifest"])
    return manifest, build_report(store, run_id, boot=20).section("manifest").blocks


def test_the_report_names_each_arms_embedding_text_and_flags_the_unmatched_one(tmp_path):
    manifest, blocks = manifest_blocks(write_campaign(tmp_path / "arms", ARMS))
    assert manifest["embedding_text"] == "speaker"
    assert {c: manifest["conditions"][c]["embeds"] for c in manifest["conditions"]} == {
        "vector-rag": "campaign", "ice": "campaign", "full-context": None,
        "thalia": "the window line as rendered: `[date] Speaker: content`"}
    run_facts = next(b for b in blocks if isinstance(b, Facts))
    assert ("Embedding text", "speaker", "code") in run_facts.items
    rows = {r["condition"]: r["embeds"] for r in next(
        b for b in blocks if isinstance(b, Table) and b.caption == "Conditions").rows}
    assert rows["vector-rag"] == rows["ice"] == "campaign policy: speaker"
    assert rows["full-context"] is None and rows["thalia"].endswith("(unmatched)")
    (warn,) = [b for b in blocks if isinstance(b, Callout) and b.title == "Arms not matched on embedding text"]
    assert warn.text.startswith("thalia embed(s)") and "(speaker)" in warn.text


def test_arms_on_one_policy_raise_no_warning(tmp_path):
    _, blocks = manifest_blocks(write_campaign(tmp_path / "matched", ARMS.replace(
        '[[conditions]]\nname = "thalia"\nsystem = "thalia"\n', "")))
    assert not [b for b in blocks if isinstance(b, Callout) and "not matched" in b.title]
