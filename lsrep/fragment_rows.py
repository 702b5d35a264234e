"""Fragment rows of a unit, built with each recurring piece encoded once.

A system returns the same fragments to many probes and checkpoints (vector-RAG's top-k over a
slowly growing history, a full-context dump, a summary kept across sessions). A fragment row's
columns split into three parts, each a pure function of fewer inputs than the row:

- the fragment's own columns (its citations and mechanisms as JSON, the token estimate, whether
  a cited id is not a turn of the trajectory, whether it declares derived text), a function of
  its text, citations, mechanisms, kind and `derived` flag;
- the verdict's columns (`lsrep.context_audit.fragment_fields`), a function of the verdict;
- the carried turns as JSON, a function of that tuple.

`FragmentRows` computes each part once per distinct input within a unit and assembles the row
from them; the row is the same, key for key and value for value, as building it afresh
(`tests/core/test_fragment_rows.py` compares both on real contexts).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lsrep.context_audit import fragment_fields
from lsrep.contract import Fragment
from lsrep.provenance import FragmentVerdict, is_derived
from lsrep.text import estimate_tokens

MEMO_LIMIT = 200_000
"""Entries per memo before it is emptied (a bound on memory for very long units)."""


def json_list(items: Sequence[str]) -> str:
    """A tuple of ids as the store's JSON list column."""
    return json.dumps(list(items)) if items else "[]"


class FragmentRows:
    """Builds one unit's fragment rows; `row` is `fresh_row` with the recurring parts memoised."""

    def __init__(self, turn_index: Mapping[str, int], turn_ids: Sequence[str]) -> None:
        self.turn_index = turn_index
        self.turn_ids = turn_ids
        self._own: dict[tuple, tuple[str, int, str, int, int]] = {}
        self._verdicts: dict[int, tuple[FragmentVerdict, dict[str, Any]]] = {}
        self._lists: dict[tuple[str, ...], str] = {}

    def _listed(self, items: tuple[str, ...]) -> str:
        hit = self._lists.get(items)
        if hit is None:
            if len(self._lists) > MEMO_LIMIT:
                self._lists.clear()
            hit = self._lists[items] = json_list(items)
        return hit

    def own(self, frag: Fragment) -> tuple[str, int, str, int, int]:
        """(source ids JSON, tokens, mechanisms JSON, unknown source, derived) of a fragment."""
        key = (frag.text, frag.source_turn_ids, frag.mechanisms, frag.kind, getattr(frag, "derived", False))
        hit = self._own.get(key)
        if hit is None:
            if len(self._own) > MEMO_LIMIT:
                self._own.clear()
            ids = frag.source_turn_ids
            hit = self._own[key] = (
                self._listed(ids), estimate_tokens(frag.text), self._listed(frag.mechanisms),
                int(any(t not in self.turn_index for t in ids)), int(is_derived(frag)),
            )
        return hit

    def _verdict_fields(self, verdict: FragmentVerdict) -> dict[str, Any]:
        # Keyed by identity (the provenance index hands out cached verdicts); the memo keeps the
        # verdict alive, so its id cannot be reused by another object while the entry exists.
        hit = self._verdicts.get(id(verdict))
        if hit is None or hit[0] is not verdict:
            if len(self._verdicts) > MEMO_LIMIT:
                self._verdicts.clear()
            hit = self._verdicts[id(verdict)] = (verdict, fragment_fields(verdict, self.turn_ids))
        return hit[1]

    def row(self, obs_id: str, rank: int, frag: Fragment, verdict: FragmentVerdict, cites_future: bool,
            carried: tuple[str, ...]) -> dict[str, Any]:
        ids_json, tokens, mechs_json, unknown, derived = self.own(frag)
        return {
            "obs_id": obs_id, "rank": rank, "text": frag.text, "source_turn_ids": ids_json,
            "tokens": tokens, "mechanisms": mechs_json, "kind": frag.kind, "score": frag.score,
            "leak": int(verdict.leak or cites_future), "unknown_source": unknown,
            **self._verdict_fields(verdict),
            "derived": derived, "carried_turn_ids": self._listed(carried),
        }

    def fresh_row(self, obs_id: str, rank: int, frag: Fragment, verdict: FragmentVerdict, cites_future: bool,
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
