"""Speaker labels, prompt doctrine and the exact message layouts sent to the model.

The consolidation and summary messages are plain text in a fixed layout, so the offline
stand-in model can read them back exactly as a real model would receive them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

CONSOLIDATION_TASK = "TASK: exia_seed_consolidation"
SUMMARY_TASK = "TASK: exia_seed_summary"

LABELS = {"en": ("User", "Assistant"), "fr": ("Utilisateur", "Agent")}
"""(user label, agent label) per language."""

DEFAULT_NODE = {"en": "user", "fr": "utilisateur"}
"""Subject for facts about the speaker when no other entity is named."""

_DOCTRINE_EN = """You consolidate a personal assistant's memory into subject pages.
From the numbered sources, extract exhaustive, concrete, self-contained facts, with their dates.
Cite the refs of the sources that state each fact exactly, as given in brackets; never invent a ref.
Do not invent names or numbers that the cited sources do not contain.
A fact that rests only on the assistant's words is not a memory of the user.
Choose the target node (the entity the fact is about) from the existing nodes when one fits,
and a section: "procedural" for lasting rules and behavioural corrections, "episodic" for events,
"semantic" for stable knowledge. "etat_agent" = a lasting correction of the assistant's behaviour
by the user. An ordinary event does NOT create an "evenement" node: attach it to the entity
concerned, section "episodic". Mark plans and intentions type "prospective" with their deadline
("echeance"). Respect privacy labels ("normal", "private", "confidential").
Answer with JSON only:
{"faits": [{"fait": str, "sources": [ref, ...], "noeud": str, "section": str, "type": str,
  "date_evenement": "YYYY-MM-DD"|null, "echeance": "YYYY-MM-DD"|null,
  "confidentialite": str, "concepts": [str], "alias_de": str|null}],
 "nouveaux_concepts": [str]}"""

_DOCTRINE_FR = """Tu consolides la mémoire d'un assistant personnel en fiches de sujets.
À partir des sources numérotées, extrais des faits exhaustifs, concrets et autonomes, datés.
Cite exactement les références des sources, telles qu'entre crochets ; n'invente aucune référence.
N'invente ni nom ni nombre absent des sources citées.
Un fait qui ne repose que sur les paroles de l'agent n'est pas un souvenir de l'utilisateur.
Choisis le noeud cible parmi les noeuds existants quand il convient, et une section :
"procedural" pour les règles durables et corrections de comportement, "episodic" pour les
événements, "semantic" pour les connaissances stables. "etat_agent" = une correction durable du
comportement de l'assistant par l'utilisateur. Un événement ordinaire ne crée PAS de noeud
"evenement" : rattache-le à l'entité concernée, section "episodic". Les projets et intentions sont
de type "prospective" avec leur "echeance". Respecte la confidentialité.
Réponds uniquement en JSON :
{"faits": [{"fait": str, "sources": [ref, ...], "noeud": str, "section": str, "type": str,
  "date_evenement": "AAAA-MM-JJ"|null, "echeance": "AAAA-MM-JJ"|null,
  "confidentialite": str, "concepts": [str], "alias_de": str|null}],
 "nouveaux_concepts": [str]}"""

_SUMMARY_EN = """Write a one-sentence identity summary of this subject from these excerpts: what it is,
before the details. Use no names, numbers or paths that the excerpts do not contain.
Answer with JSON only: {"resume": str, "mots_cles": [str]}"""

_SUMMARY_FR = """Écris en une phrase ce qu'est ce sujet, d'après ces extraits, avant les détails.
N'utilise aucun nom, nombre ou chemin absent des extraits.
Réponds uniquement en JSON : {"resume": str, "mots_cles": [str]}"""

_SOURCE_LINE = re.compile(
    r"^\[(?P<ref>[^\]]+)\] (?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d\d:\d\d|--:--) "
    r"(?P<who>agent|user|note) \| (?P<text>.*)$"
)
_NODE_LINE = re.compile(r"^- (?P<name>[^|]+?)(?: \| aliases: (?P<aliases>.*))?$")


@dataclass(frozen=True)
class Source:
    """One numbered source as the consolidator hands it to the model and the checker."""

    ref: str
    """`brut:<batch>:<line>` or `registre:<note id>`."""
    text: str
    """Source text without its timestamp (`sans_horodatage`)."""
    is_agent: bool
    day: str
    """Date the source was said or noted (`YYYY-MM-DD`)."""
    time: str | None = None
    """`HH:MM` for raw lines."""

    @property
    def who(self) -> str:
        if self.ref.startswith("registre:"):
            return "note"
        return "agent" if self.is_agent else "user"


def consolidation_messages(
    language: str, sources: Sequence[Source], nodes: Sequence[tuple[str, Sequence[str]]],
    vocabulary: Sequence[str],
) -> list[dict[str, str]]:
    """System doctrine, then sources and the existing-node/concept catalogue."""
    doctrine = _DOCTRINE_FR if language == "fr" else _DOCTRINE_EN
    lines = ["SOURCES"]
    lines += [f"[{s.ref}] {s.day} {s.time or '--:--'} {s.who} | {s.text}" for s in sources]
    lines.append("EXISTING NODES")
    for name, aliases in nodes:
        lines.append(f"- {name}" + (f" | aliases: {'; '.join(aliases)}" if aliases else ""))
    lines.append("CONCEPT VOCABULARY")
    lines += [f"- {c}" for c in vocabulary]
    return [
        {"role": "system", "content": f"{CONSOLIDATION_TASK}\n{doctrine}"},
        {"role": "user", "content": "\n".join(lines)},
    ]


def summary_messages(language: str, subject: str, excerpts: Sequence[str]) -> list[dict[str, str]]:
    doctrine = _SUMMARY_FR if language == "fr" else _SUMMARY_EN
    body = "\n".join([f"SUBJECT: {subject}", "EXCERPTS:", *excerpts])
    return [
        {"role": "system", "content": f"{SUMMARY_TASK}\n{doctrine}"},
        {"role": "user", "content": body},
    ]


def read_consolidation_request(content: str) -> tuple[list[Source], list[tuple[str, list[str]]], list[str]]:
    """Parse the user message of `consolidation_messages` back into its three parts."""
    sources: list[Source] = []
    nodes: list[tuple[str, list[str]]] = []
    vocabulary: list[str] = []
    part = ""
    for line in content.splitlines():
        if line in ("SOURCES", "EXISTING NODES", "CONCEPT VOCABULARY"):
            part = line
        elif part == "SOURCES" and (m := _SOURCE_LINE.match(line)):
            sources.append(Source(
                ref=m["ref"], text=m["text"], is_agent=m["who"] == "agent", day=m["date"],
                time=None if m["time"] == "--:--" else m["time"],
            ))
        elif part == "EXISTING NODES" and (m := _NODE_LINE.match(line)):
            aliases = [a.strip() for a in (m["aliases"] or "").split(";") if a.strip()]
            nodes.append((m["name"].strip(), aliases))
        elif part == "CONCEPT VOCABULARY" and line.startswith("- "):
            vocabulary.append(line[2:].strip())
    return sources, nodes, vocabulary


def read_summary_request(content: str) -> tuple[str, list[str]]:
    """Parse the user message of `summary_messages` back into subject and excerpts."""
    lines = content.splitlines()
    subject = lines[0].removeprefix("SUBJECT: ") if lines else ""
    return subject, lines[2:]
