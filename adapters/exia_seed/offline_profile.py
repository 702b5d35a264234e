"""Offline-responder profile for EXIA SEED's consolidation and summary prompts (a test instrument).

EXIA describes the JSON it wants only in its prompt doctrine (systems/exia_seed/prompts.py),
so the generic responder cannot fill it. This profile recognises the two requests by their
task line (`TASK: exia_seed_consolidation`, `TASK: exia_seed_summary`) and answers with the
rules consolidator (systems/exia_seed/rules.py), which reads the request's own sources: every
fact is a source sentence, never invented. With `[memory_llm] kind = "offline"` an EXIA
condition therefore runs the LLM path end to end (gateway, booking, parsing, checker)
deterministically. Registered under the entry-point group `lsrep.offline_profiles` as `exia_seed`.
"""

from __future__ import annotations

from typing import Any

from lsrep.systems.exia_seed.prompts import CONSOLIDATION_TASK, SUMMARY_TASK
from lsrep.systems.exia_seed.rules import RulesModel


def exia_seed_profile(body: dict[str, Any]) -> dict[str, Any] | None:
    """The assistant message for an EXIA consolidation or summary request, or None for any other."""
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    if not messages or not all(isinstance(m.get("content"), str) for m in messages):
        return None
    system = messages[0]["content"] if messages[0].get("role") == "system" else ""
    if not system.startswith((CONSOLIDATION_TASK, SUMMARY_TASK)):
        return None
    language = "fr" if "Tu consolides" in system or "Écris en une phrase" in system else "en"
    return {"content": RulesModel(language=language).complete(messages)}
