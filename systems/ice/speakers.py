"""Whose statement a first-person triple is: one `user` per conversation partner, not per dataset.

Extractors (the model prompt and the offline rules) write first-person statements with the
subject `user`. In a dialogue between two named people (LoCoMo) that merged both speakers into
one entity, so Melanie's "I live in X" superseded Caroline's. Here a named speaker keeps the
`user` subject only if the user entity is theirs: the first named speaker becomes an alias of
`user` (so "Where does Maya live?" and "Where do I live?" reach the same entity), and any other
named speaker's first-person triples get the speaker's name as their subject. A turn whose
speaker is only a role (`user`) stays `user`. The decision is read from the Codex's aliases, so
it persists with the graph and survives snapshots.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from .codex import USER, USER_ID, Codex, Triple, WriteOutcome
from .db import Transaction
from .text import normalise_name

ROLE_LABELS = frozenset({"user", "assistant", "system", "tool"})


def speaker_subject(codex: Codex, speaker: str | None, *, now: datetime, conv_id: str | None,
                    turn_id: str | None) -> str:
    """The subject of this speaker's first-person statements (`user` or the speaker's name)."""
    norm = normalise_name(speaker or "")
    if not norm or norm in ROLE_LABELS:
        return USER
    hit = codex.lookup(speaker)
    if hit is not None:
        return USER if hit[0] == USER_ID else speaker
    has_name = codex.conn.execute("SELECT 1 FROM aliases WHERE entity_id = ?", (USER_ID,)).fetchone()
    if has_name:
        return speaker
    with Transaction(codex.conn):
        codex.resolve(USER, type_=None, now=now, conv_id=conv_id, out=WriteOutcome(), turn_id=turn_id)
        codex.add_alias(USER_ID, speaker, now, turn_id)
    return USER


def attribute(triples: list[Triple], subject: str) -> list[Triple]:
    """Give the speaker's first-person triples (subject `user`) their speaker's subject."""
    if subject == USER:
        return triples
    return [replace(t, subject=subject) if normalise_name(t.subject) == USER else t for t in triples]
