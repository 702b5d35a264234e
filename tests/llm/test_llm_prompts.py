"""Prompt templates: pinned digests and rendering."""

from __future__ import annotations

import json
from pathlib import Path

from lsrep.answer.prompt import NO_CONTEXT, render_answer_messages
from lsrep.prompts import ANSWER_CONTEXT, TEMPLATES

GOLDEN = Path(__file__).parent / "golden" / "prompt_digests.json"


def test_template_digests_match_golden():
    """A changed prompt must get a new version and an updated golden file, deliberately."""
    current = {t.name: {"version": t.version, "sha256": t.digest} for t in TEMPLATES}
    assert current == json.loads(GOLDEN.read_text())


def test_names_are_unique():
    assert len({t.name for t in TEMPLATES}) == len(TEMPLATES)


def test_answer_prompt_content():
    messages = render_answer_messages("Which database?", "2026-03-05T10:00:00+00:00",
                                      ["We use SQLite.", "Ana likes $HOME and {braces}"])
    system, user = messages[0]["content"], messages[1]["content"]
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    assert "I don't know" in system and "briefly" in system
    assert "Current date and time: 2026-03-05T10:00:00+00:00" in user
    assert "[1] We use SQLite.\n\n[2] Ana likes $HOME and {braces}" in user
    assert user.endswith("Question: Which database?\nAnswer:")
    assert NO_CONTEXT in render_answer_messages("q", "now", [])[1]["content"]


def test_digest_covers_both_messages():
    changed = ANSWER_CONTEXT.model_copy(update={"system": ANSWER_CONTEXT.system + " "})
    assert changed.digest != ANSWER_CONTEXT.digest
