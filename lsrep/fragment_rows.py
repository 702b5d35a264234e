"""Fragment rows of a unit, built once per distinct fragment and verdict, then copied; and a whole
context's rows reused while the same context comes back (`ContextRows`).

A system returns the same fragments to many probes and checkpoints (vector-RAG's top-k over a
slowly growing history, a full-context dump, a summary kept across sessions): on LoCoMo conv-26,
vector-RAG's 57,912 fragment rows hold 406 distinct texts. Every column of a fragment row but
`obs_id`, `rank` and `score` is a pure function of the fragment (text, citations, mechanisms,
kind, `derived`), its verdict (`lsrep.context_audit.fragment_fields`), whether it cites a turn
not yet replayed, and the turns whose content it carries; the JSON columns are encoded once
per such combination instead of once per row.

The row is the same, key for key and value for value, as building it afresh
(`FragmentRows.fresh_row`; `tests/core/test_fragment_rows.py` compares both on real contexts).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsrep.context_audit import ContextAudit, fragment_fields, same_items
from lsrep.contract import FidelityEvent, Fragment
from lsrep.provenance import FragmentVerdict, is_derived
from lsrep.text import estimate_tokens

MEMO_LIMIT = 50_000
"""Memoised rows before the memo is emptied (a bound on memory for very long units)."""


def json_list(items: Sequence[str]) -> str:
    """A tuple of ids as the store's JSON list column."""
    return json.dumps(list(items)) if items else "[]"


class FragmentRows:
    """Builds one unit's fragment rows; `row` is `fresh_row` with the recurring part memoised.

    Everything in a row but `obs_id`, `rank` and `score` is a function of the fragment (text,
    citations, mechanisms, kind, `derived`), its verdict, whether it cites a turn not yet replayed,
    and the turns it carries. That part is built once per distinct combination and copied.
    """

    def __init__(self, turn_index: Mapping[str, int], turn_ids: Sequence[str]) -> None:
        self.turn_index = turn_index
        self.turn_ids = turn_ids
        self._rows: dict[tuple, tuple[FragmentVerdict, dict[str, Any]]] = {}

    def row(self, obs_id: str, rank: int, frag: Fragment, verdict: FragmentVerdict, cites_future: bool,
            carried: tuple[str, ...]) -> dict[str, Any]:
        # The verdict is keyed by identity (the provenance index hands out cached verdicts); the
        # entry keeps it alive, so its id cannot be reused by another object while the entry exists.
        key = (frag.text, frag.source_turn_ids, frag.mechanisms, frag.kind, getattr(frag, "derived", False),
               id(verdict), cites_future, carried)
        hit = self._rows.get(key)
        if hit is None or hit[0] is not verdict:
            if len(self._rows) > MEMO_LIMIT:
                self._rows.clear()
            hit = self._rows[key] = (verdict, self.fresh_row(None, None, frag, verdict, cites_future, carried))
        out = hit[1].copy()
        out["obs_id"], out["rank"], out["score"] = obs_id, rank, frag.score
        return out

    def fresh_row(self, obs_id: str | None, rank: int | None, frag: Fragment, verdict: FragmentVerdict, cites_future: bool,
                  carried: tuple[str, ...]) -> dict[str, Any]:
        """The row computed from scratch (the reference `row` must equal)."""
        ids = frag.source_turn_ids
        return {
            "obs_id": obs_id, "rank": rank, "text": frag.text, "source_turn_ids": json_list(ids),
            "tokens": estimate_tokens(frag.text), "mechanisms": json_list(frag.mechanisms), "kind": frag.kind,
            "score": frag.score, "leak": int(verdict.leak or cites_future),
            "unknown_source": int(any(t not in self.turn_index for t in ids)),
            **fragment_fields(verdict, self.turn_ids),
            "derived": int(is_derived(frag)), "carried_turn_ids": json_list(carried),
        }


@dataclass(frozen=True)
class ContextRows:
    """One observation's fragment rows and what it sums from them, derived from the context a system
    returned, its audit and the fragments the answerer used.

    Reused as a whole when the next observation has all three again (`repeats`: the same fragment
    objects, `same_items`, and the audit's cached tuples by identity) — every probe of a checkpoint,
    for many systems. `tests/core/test_repeated_context.py` compares every stored row of runs with
    and without the reuse.
    """

    returned: tuple[Fragment, ...]
    used: tuple[Fragment, ...]
    verdicts: tuple
    citation_leaks: tuple
    carried: tuple
    rows: list[dict[str, Any]]
    """The first observation's fragment rows (stored as they are, never changed afterwards)."""
    proven_leak: int
    unattributed: int
    tokens: int
    sources: frozenset[str]
    in_prompt: tuple[FidelityEvent, ...]

    @classmethod
    def build(cls, obs_id: str, fragments: Sequence[Fragment], returned: tuple[Fragment, ...], audit: ContextAudit,
              fragment_rows: FragmentRows, in_prompt: tuple[FidelityEvent, ...]) -> ContextRows:
        """The plain rule: a row per used fragment; leaks over everything returned, recorded or cut."""
        sources: set[str] = set()
        tokens = unattributed = 0
        verdicts, citation_leaks, carried = audit.verdicts, audit.citation_leaks, audit.carried
        position = {id(f): i for i, f in enumerate(returned)}
        proven_leak = sum(v.leak or c for v, c in zip(verdicts, citation_leaks, strict=True))
        rows = []
        for rank, frag in enumerate(fragments):
            i = position[id(frag)]
            sources.update(carried[i])  # a citation counts only where the text carries the turn
            unattributed += not frag.source_turn_ids
            frow = fragment_rows.row(obs_id, rank, frag, verdicts[i], citation_leaks[i], carried[i])
            tokens += frow["tokens"]
            rows.append(frow)
        return cls(tuple(returned), tuple(fragments), verdicts, citation_leaks, carried, rows,
                   proven_leak, unattributed, tokens, frozenset(sources), in_prompt)

    def repeats(self, returned: tuple[Fragment, ...], audit: ContextAudit, used: Sequence[Fragment]) -> bool:
        """True when another observation has this very context, audit and cut again."""
        return (self.verdicts is audit.verdicts and self.citation_leaks is audit.citation_leaks
                and self.carried is audit.carried and same_items(self.returned, returned)
                and same_items(self.used, used))


class FragmentTable(Sequence):
    """A unit's fragment rows, in order: an observation's own rows, or another observation's rows
    again under its id (`add_copy`), held as a reference instead of a copy of every row.

    Read as a sequence it gives exactly the rows a list of copies held (`{**row, "obs_id": obs_id}`);
    the store writes a copy part as one SQL copy of the rows it has just written (`RunStore`),
    without building, binding or encoding a row in Python. A repeated context is every probe but
    the first of a checkpoint, for systems whose context does not depend on the question.
    """

    def __init__(self) -> None:
        self.parts: list[tuple[str | None, list[dict[str, Any]]]] = []
        """(None, rows): rows as they are; (obs_id, rows): `rows` again under `obs_id`."""
        self._len = 0

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        self.parts.append((None, rows))
        self._len += len(rows)

    def add_copy(self, obs_id: str, rows: list[dict[str, Any]]) -> None:
        """`rows` (rows added before, all of one observation) again under `obs_id`."""
        self.parts.append((obs_id, rows))
        self._len += len(rows)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for obs_id, rows in self.parts:
            if obs_id is None:
                yield from rows
            else:
                for r in rows:
                    yield {**r, "obs_id": obs_id}

    def __getitem__(self, i):
        return list(self)[i]

    def __eq__(self, other) -> bool:
        if isinstance(other, FragmentTable | list):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None
