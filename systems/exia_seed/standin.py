"""The offline stand-in model: a rule extractor behind the same `complete(messages)` interface.

It reads the consolidation or summary request exactly as a model would receive it and answers
in the same JSON shape, so parsing, the checker, alias resolution, pages and journals all run
for real without a model. Rules (CHOICE, seed-systems 4.4):

- each non-agent source sentence with at least `min_words` content words becomes a fact
  citing its own ref, verbatim;
- the node is a known page name or alias found in the sentence, else its first capitalised
  name, else the user;
- `procedural` when the sentence carries a rule or correction cue, else `episodic`;
- `prospective` when it carries a future cue or names a date after the day it was said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date

from .prompts import (
    CONSOLIDATION_TASK,
    DEFAULT_NODE,
    SUMMARY_TASK,
    read_consolidation_request,
    read_summary_request,
)
from .text import content_words, dates_in, fold, name_phrases, sentences

_PROCEDURAL = re.compile(
    r"\b(always|never|don'?t|do not|please stop|from now on|make sure|toujours|jamais|ne plus|désormais)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(will|plan(?:ning)? to|going to|next (?:week|month|year|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)|tomorrow|intend to|demain|la semaine prochaine|je vais|prévois)\b",
    re.IGNORECASE,
)
_PRIVATE = re.compile(r"\b(confidential|between us|keep (?:this|it) private|confidentiel|entre nous)\b", re.IGNORECASE)
_SPEAKER_PREFIX = re.compile(r"^[^:]{1,40}: ")
_HOST_NAME = re.compile(r"^\[([^\]\n]{1,40})\] ")


class StandInModel:
    """Deterministic `complete(messages) -> str` for consolidation and summary requests."""

    name = "exia-seed-standin"

    def __init__(self, *, language: str = "en", min_words: int = 4) -> None:
        self.language = language
        self.min_words = min_words

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        system = messages[0]["content"] if messages else ""
        user = messages[-1]["content"] if messages else ""
        if system.startswith(CONSOLIDATION_TASK):
            return json.dumps(self._consolidate(user), ensure_ascii=False)
        if system.startswith(SUMMARY_TASK):
            return json.dumps(self._summarise(user), ensure_ascii=False)
        return "{}"

    def _consolidate(self, content: str) -> dict:
        sources, nodes, vocabulary = read_consolidation_request(content)
        known = sorted(((fold(n), name) for name, aliases in nodes for n in [name, *aliases]),
                       key=lambda pair: -len(pair[0]))
        facts = []
        for source in sources:
            if source.who == "agent":
                continue
            said = date.fromisoformat(source.day)
            body = _SPEAKER_PREFIX.sub("", source.text, count=1)
            # A host may prefix the speaker's name (Hermes' gateway: "[Caroline] ...", or
            # "Caroline: ..."): keep it on every fact, not only on the turn's first sentence.
            named = _HOST_NAME.match(body) or _SPEAKER_PREFIX.match(body)
            speaker = (named[1] if named.re is _HOST_NAME else named[0][:-2]) if named else None
            for sentence in sentences(body[len(named[0]):] if named else body):
                if len(content_words(sentence)) < self.min_words:
                    continue
                if speaker:
                    sentence = f"{speaker}: {sentence}"
                days = dates_in(sentence, said.year)
                prospective = bool(_FUTURE.search(sentence)) or any(d > said for d in days)
                folded = fold(sentence)
                concepts = [c for c in vocabulary if re.search(rf"\b{re.escape(fold(c))}\b", folded)]
                facts.append({
                    "fait": sentence,
                    "sources": [source.ref],
                    "noeud": self._node(sentence, folded, known),
                    "section": "procedural" if _PROCEDURAL.search(sentence) else "episodic",
                    "type": "prospective" if prospective else "fait",
                    "date_evenement": days[0].isoformat() if days else None,
                    "echeance": days[0].isoformat() if days and prospective else None,
                    "confidentialite": "confidential" if _PRIVATE.search(sentence) else "normal",
                    "concepts": concepts,
                    "alias_de": None,
                })
        return {"faits": facts, "nouveaux_concepts": []}

    def _node(self, sentence: str, folded: str, known: list[tuple[str, str]]) -> str:
        for key, name in known:
            if key and re.search(rf"\b{re.escape(key)}\b", folded):
                return name
        names = name_phrases(sentence)
        if names:
            return names[0]
        speaker = _SPEAKER_PREFIX.match(sentence)
        return speaker[0][:-2] if speaker else DEFAULT_NODE.get(self.language, "user")

    def _summarise(self, content: str) -> dict:
        _, excerpts = read_summary_request(content)
        first = next((e.removeprefix("- ") for e in excerpts if e.strip()), "")
        summary = first if len(first) <= 160 else first[:157].rstrip() + "..."
        keywords = sorted(set(content_words(" ".join(excerpts))))[:5]
        return {"resume": summary, "mots_cles": keywords}
