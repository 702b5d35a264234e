"""The rules consolidator: a deterministic model behind `complete(messages)`, better than the stand-in.

CHOICE (not in the seed). It reads the consolidation request as a model would and answers in
the seed's JSON, so the checker, alias resolution, pages and journals run unchanged. Against
the stand-in (standin.py) it changes who a fact is about, which sentences count and what
dates a fact carries; the fact text stays the source sentence, verbatim, prefixed by its
speaker, so no fact says what its source does not.

- **Subject.** A first- or second-person sentence goes on its speaker's page (what a person
  says to someone is their own account); a third-person sentence naming an existing page other
  than a speaker's, or a name the batch writes capitalised mid-sentence, goes on that entity's
  page; anything else on the speaker's page. A speaker named in a sentence, or a short name
  beginning a speaker's name ("Mel"), is the one spoken to ("Woah, Maria, that sounds cool!"
  stays John's): putting it on Maria's page would show it as `Maria: John: Woah, ...`.
  Sentence-initial words ("Gonna", "Yeah") are never taken for names unless the batch writes
  them capitalised mid-sentence.
- **Text.** The source sentence verbatim, prefixed by its speaker (`Melanie: Oscar loves
  carrots.`), as the stand-in: the speaker's name stays searchable on every fact (measured:
  without it the search tool loses facts whose question names the person).
- **Sentences.** Greetings, reactions and the speakers' names do not count as content. A
  sentence naming something other than a speaker, or holding a number, is kept ("It was Matt
  Patterson!"); a first-person one from 3 counted words ("I played clarinet for years", not
  "Yeah, Maria, I agree."); others from `min_words` content words of which 3 counted. A
  question with no statement before a dash is kept only from `min_words` content words, as
  by the stand-in ("What's up with you?" is not). Measured on LoCoMo: shorter first-person
  facts and dropping long questions both cost the search tool evidence (BM25 ranks short
  facts that share the asked person's name high; a question carries its turn's topic).
- **Dates.** Absolute dates as the stand-in. Relative ones ("yesterday") are left in the text
  and not resolved into `date_evenement`: a page shows a fact's event date in place of the
  day it was said, and a reader who sees "yesterday" next to a date resolves it again from
  that date (measured: the offline answerer then answers a day early). The fact keeps the
  day it was said, from which "yesterday" is exact.
- **Supersession.** An exclusive first-person attribute ("I moved to Porto") is proposed with
  `attribut`/`valeur`; the consolidator marks the page's older value superseded (attributes.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date

from .attributes import attribute
from .prompts import (
    CONSOLIDATION_TASK,
    DEFAULT_NODE,
    SUMMARY_TASK,
    Source,
    read_consolidation_request,
)
from .standin import _FUTURE, _PRIVATE, _PROCEDURAL, StandInModel
from .text import NAME_STOPLIST, capitalised_names, content_words, dates_in, fold, sentences

_HOST_NAME = re.compile(r"^\[([^\]\n]{1,40})\] ")
_LABEL = re.compile(r"^[^:\[\]\n]{1,40}: ")
_FIRST = re.compile(r"\b(I|I'm|I've|I'll|I'd|me|my|mine|myself|we|we're|we've|our|us)\b", re.IGNORECASE)
_SECOND = re.compile(r"\b(you|you're|you've|you'll|your|yours|yourself)\b", re.IGNORECASE)
_DASH = re.compile(r"\s[-\u2013\u2014]+\s")
_NUMBER = re.compile(r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|hundred|thousand)\b",
                     re.IGNORECASE)
_GLUE = frozenset("hey hi hello thanks thank bye wow congrats yeah yep yes sure cool great oh awesome totally "
                  "agree nice".split())
"""Greeting and reaction words: "Hey Mel!" names someone and states nothing."""
_TOKEN = re.compile(r"[^\W\d_][\w'-]*")


def speaker_of(text: str) -> tuple[str | None, str]:
    """`("Caroline", body)` for a host-named line (`User: [Caroline] body`, the label optional),
    else `(None, body)` without the ingestion label."""
    label = _LABEL.match(text)
    if label:
        text = text[label.end():]
    m = _HOST_NAME.match(text)
    return (m[1], text[m.end():]) if m else (None, text)


def _asks_only(sentence: str) -> bool:
    """A question with no statement before it: "What's up?" yes; "Got married last week - how
    about you?" no (the clause before the dash states something)."""
    if not sentence.rstrip().endswith("?"):
        return False
    clauses = _DASH.split(sentence)
    return len(clauses) == 1 or all(c.rstrip().endswith("?") for c in clauses[:-1])


class RulesModel:
    """Deterministic `complete(messages) -> str`: the rules consolidator, the stand-in's summaries."""

    name = "exia-seed-rules"

    def __init__(self, *, language: str = "en", min_words: int = 4) -> None:
        self.language = language
        self.min_words = min_words
        self._standin = StandInModel(language=language, min_words=min_words)

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        system = messages[0]["content"] if messages else ""
        if system.startswith(CONSOLIDATION_TASK):
            return json.dumps(self.consolidate(messages[-1]["content"]), ensure_ascii=False)
        if system.startswith(SUMMARY_TASK):
            return self._standin.complete(messages)
        return "{}"

    def consolidate(self, content: str) -> dict:
        sources, nodes, vocabulary = read_consolidation_request(content)
        speakers = {n for s in sources if (n := speaker_of(s.text)[0])}
        known = {fold(n): name for name, aliases in nodes for n in [name, *aliases]}
        known.update({fold(s): s for s in speakers})
        mid_names = {fold(n) for s in sources for n in capitalised_names(speaker_of(s.text)[1])}
        facts = []
        for source in sources:
            if source.who == "agent":
                continue
            speaker, body = (None, source.text) if source.who == "note" else speaker_of(source.text)
            said = date.fromisoformat(source.day)
            for sentence in sentences(body):
                fact = self._fact(sentence, source, speaker, said, known, mid_names, vocabulary, speakers)
                if fact is not None:
                    facts.append(fact)
        return {"faits": facts, "nouveaux_concepts": []}

    def _fact(self, sentence: str, source: Source, speaker: str | None, said: date,
              known: dict[str, str], mid_names: set[str], vocabulary: list[str], speakers: set[str]) -> dict | None:
        first = bool(_FIRST.search(sentence))
        if _asks_only(sentence):
            if len(content_words(sentence)) < self.min_words:  # as the stand-in: a long question
                return None  # carries its turn's topic; a short one ("What's up with you?") nothing
        elif not self._keeps(sentence, first, speakers):
            return None
        node, alias_of = self._node(sentence, first, speaker, known, mid_names, speakers)
        text = f"{speaker}: {sentence}" if speaker else sentence
        days = dates_in(sentence, said.year)
        prospective = bool(_FUTURE.search(sentence)) or any(d > said for d in days)
        folded = fold(sentence)
        fact = {
            "fait": text, "sources": [source.ref], "noeud": node,
            "section": "procedural" if _PROCEDURAL.search(sentence) else "episodic",
            "type": "prospective" if prospective else "fait",
            "date_evenement": days[0].isoformat() if days else None,
            "echeance": days[0].isoformat() if days and prospective else None,
            "confidentialite": "confidential" if _PRIVATE.search(sentence) else "normal",
            "concepts": [c for c in vocabulary if re.search(rf"\b{re.escape(fold(c))}\b", folded)],
            "alias_de": alias_of,
        }
        stated = attribute(sentence) if first else None  # first person: always the speaker's page
        if stated:
            fact["attribut"], fact["valeur"] = stated
        return fact

    def _keeps(self, sentence: str, first: bool, speakers: set[str]) -> bool:
        """Whether a sentence states enough to be a fact: `min_words`, fewer when it names something.

        Words that say nothing are not counted: greetings and reactions ("wow", "agree") and
        the speakers' names (said to someone: "Yeah, Maria, I agree."). A number ("for 10
        years"), or a name other than a speaker's with such a word beside it ("It was Matt
        Patterson, he is so talented!", not "Hey Mel!") or a two-word name ("It's Shia
        Labeouf!"), keeps the sentence; a first-person statement needs 3 counted words (not "I
        totally agree, Maria!"); any other sentence `min_words` content words of which 3
        counted (not "Woah, Maria, that sounds cool!").
        """
        folded = {fold(s) for s in speakers}
        said_to = {w for w in content_words(sentence) if any(s.startswith(w) for s in folded)}
        names = [n for n in (fold(n) for n in capitalised_names(sentence)) if n not in said_to]
        rest = [w for w in content_words(sentence) if w not in names and w not in said_to and w not in _GLUE]
        if _NUMBER.search(sentence) or (names and (rest or len(names) >= 2)):
            return True
        if first:
            return len(rest) >= min(3, self.min_words)
        return len(rest) >= min(3, self.min_words) and len(content_words(sentence)) >= self.min_words

    def _node(self, sentence: str, first: bool, speaker: str | None,
              known: dict[str, str], mid_names: set[str], speakers: set[str]) -> tuple[str, None]:
        default = speaker or DEFAULT_NODE.get(self.language, "user")
        if first or _SECOND.search(sentence):
            return default, None
        for i, token in enumerate(_TOKEN.findall(sentence)):
            key = fold(token)
            if not token[0].isupper() or len(key) < 3 or key in NAME_STOPLIST:
                continue
            if any(fold(s).startswith(key) for s in speakers):
                continue  # a speaker or a speaker's short name: the one spoken to ("Woah, Maria", "Mel")
            if key in known:
                return known[key], None
            if i > 0 or key in mid_names:
                return token, None
        return default, None
