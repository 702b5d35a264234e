"""Model-facing extraction and summary tasks: prompts, JSON parsing, and the offline stand-in.

Every model call goes through one method, `complete(messages) -> str`. The stand-in
(:class:`RuleBasedModel`) answers the same prompts with the same JSON shapes from the
deterministic rules in `rules.py`, so the write path runs identically with or without a
model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import rules
from .codex import Triple

TASK_EXTRACT = "ICE-TASK: extract"
TASK_SUMMARIZE = "ICE-TASK: summarize"

EXTRACT_PROMPT = f"""{TASK_EXTRACT}
You maintain a personal knowledge graph. From the user's message, extract:
- "triples": (subject, relation, object, type in {{property, multi, event}}, date) statements
  the user makes. The user is the subject "user". Relations are snake_case. "property" values
  are exclusive (a new value replaces the old one: lives_in, works_at, job_title, age, partner);
  "multi" relations accumulate (likes, uses, read, visited); "event" relations carry a date.
  Give "confidence" in [0, 1], and "object_type" (e.g. place, organization, book) when the
  object is a named thing, else null.
- "entities": named things mentioned, as {{"name", "type"}}.
- "procedures": instructions about how the assistant should behave, as
  {{"action": "add", "trigger", "instruction"}} or, for a revoked instruction,
  {{"action": "revoke", "about", "fallback_instruction"}}.
Reply with one JSON object with keys "triples", "entities", "procedures" and nothing else."""

SUMMARIZE_PROMPT = f"""{TASK_SUMMARIZE}
Summarize these turns into durable facts with dates. Reply with one JSON object:
{{"summary": "..."}} and nothing else."""


class LanguageModel(Protocol):
    """The one-method model interface ICE calls."""

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


@dataclass(frozen=True)
class ProcedureOp:
    """An instruction to add, or a revocation of earlier instructions."""

    action: str
    trigger: str = ""
    instruction: str = ""
    about: str = ""
    fallback_instruction: str | None = None


@dataclass(frozen=True)
class Extraction:
    """A parsed extraction result."""

    triples: list[Triple] = field(default_factory=list)
    mentions: list[tuple[str, str]] = field(default_factory=list)
    procedures: list[ProcedureOp] = field(default_factory=list)


class ExtractionError(ValueError):
    """The model's reply was not the JSON shape asked for."""


def extract_messages(text: str, *, speaker: str, date: str) -> list[dict[str, str]]:
    payload = json.dumps({"speaker": speaker, "date": date, "text": text}, ensure_ascii=False)
    return [{"role": "system", "content": EXTRACT_PROMPT}, {"role": "user", "content": payload}]


def summarize_messages(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    payload = json.dumps({"turns": turns}, ensure_ascii=False)
    return [{"role": "system", "content": SUMMARIZE_PROMPT}, {"role": "user", "content": payload}]


def _json_object(reply: str) -> dict[str, Any]:
    match = re.search(r"\{.*\}", reply, re.S)
    if not match:
        raise ExtractionError("no JSON object in the reply")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ExtractionError(f"invalid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ExtractionError("the reply is not a JSON object")
    return data


def parse_extraction(reply: str) -> Extraction:
    """Validate and convert an extraction reply; raises ExtractionError."""
    data = _json_object(reply)
    triples: list[Triple] = []
    for item in data.get("triples") or []:
        try:
            kind = str(item.get("type") or "property")
            triples.append(Triple(
                subject=str(item["subject"]), relation=_relation(str(item["relation"])),
                object=str(item["object"]),
                kind=kind if kind in {"property", "multi", "event"} else "property",
                date=item.get("date"), confidence=float(item.get("confidence", 0.9)),
                object_type=item.get("object_type"), subject_type=item.get("subject_type"),
            ))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ExtractionError(f"bad triple {item!r}: {exc}") from exc
    mentions = [(str(e["name"]), str(e.get("type") or "entity"))
                for e in data.get("entities") or [] if isinstance(e, dict) and e.get("name")]
    procedures = [ProcedureOp(
        action=str(p.get("action")), trigger=str(p.get("trigger") or ""),
        instruction=str(p.get("instruction") or ""), about=str(p.get("about") or ""),
        fallback_instruction=p.get("fallback_instruction"),
    ) for p in data.get("procedures") or [] if isinstance(p, dict)
        and p.get("action") in {"add", "revoke"}]
    return Extraction(triples=triples, mentions=mentions, procedures=procedures)


def parse_summary(reply: str) -> str:
    summary = _json_object(reply).get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise ExtractionError("no summary text")
    return summary.strip()


def _relation(name: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", name.lower())) or "related_to"


class RuleBasedModel:
    """Deterministic stand-in for the extraction and summary model (same JSON shapes)."""

    name = "ice-rules-v1"

    def __init__(self, summary_max_chars: int = 600) -> None:
        self.summary_max_chars = summary_max_chars

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        task = messages[0]["content"].splitlines()[0]
        payload = json.loads(messages[-1]["content"])
        if task == TASK_EXTRACT:
            text = payload["text"]
            return json.dumps({
                "triples": rules.extract_triples(text, payload.get("date")),
                "entities": rules.extract_mentions(text),
                "procedures": rules.extract_procedures(text),
            })
        if task == TASK_SUMMARIZE:
            return json.dumps({"summary": rules.extractive_summary(payload["turns"],
                                                                   self.summary_max_chars)})
        raise ValueError(f"unknown task {task!r}")
