"""Per-observation context audit: content provenance, duplicates, budget and evidence, in one pass.

The engine calls :func:`audit_context` with the fragments a system returned (before any
truncation by the harness or the answerer). It returns the observation's integrity fields
and one verdict per fragment; nothing here trusts the fragments' citations except to check
them. The campaign-level aggregation is `lsrep.integrity`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsrep.contract import Fragment
from lsrep.evidence import evidence_metrics
from lsrep.host.wire import same_items
from lsrep.provenance import (
    FragmentVerdict,
    TurnIndex,
    cited_positions,
    duplicate_key,
    is_derived,
)
from lsrep.references import Expected
from lsrep.text import estimate_tokens


@dataclass(frozen=True)
class ContextAudit:
    """What the harness found in one returned context."""

    row: dict[str, Any]
    """Observation fields (see `OBSERVATION_FIELDS`)."""
    verdicts: tuple[FragmentVerdict, ...]
    """One per returned fragment, in rank order."""
    citation_leaks: tuple[bool, ...]
    """Per fragment: it cites a turn that had not been replayed."""
    carried: tuple[tuple[str, ...], ...] = ()
    """Per fragment: the cited turns whose content it carries (`TurnIndex.carried`)."""


OBSERVATION_FIELDS: tuple[str, ...] = (
    "content_leaks", "unsourced", "misattributed", "duplicate_citations", "context_sha256",
    "content_recall", "answer_in_context", "stale_in_context", "future_in_context", "citation_precision",
)
"""Observation columns this audit fills (migrations m006_provenance, m010_citation_precision).

`citation_precision`: over the context's fragments, the share of (fragment, cited turn) pairs
whose turn content the fragment carries (`TurnIndex.carried`; a citation of an id not in the
trajectory is not carried); None when no fragment cites anything."""


def context_digest(fragments: Sequence[Fragment]) -> str:
    """SHA-256 of the returned context: texts and citations in order (for determinism checks)."""
    texts = "\x1e".join([f.text for f in fragments])
    cites = "\x1e".join(["\x1f".join(f.source_turn_ids) for f in fragments])
    return hashlib.sha256(f"{texts}\x1d{cites}".encode()).hexdigest()


def audit_context(fragments: Sequence[Fragment], prefix_len: int, expected: Expected, index: TurnIndex,
                  turn_index: Mapping[str, int]) -> ContextAudit:
    last = index.last_context
    if last is not None and last[1] == prefix_len and same_items(last[0], fragments):
        # The very fragment objects of the previous context at the same prefix (a system handing
        # out the same context to every probe of a checkpoint): its judgement, without re-keying.
        texts, judged = last[2], last[3]
    else:
        texts = tuple([f.text for f in fragments])
        # The same context returned to every probe of a checkpoint is judged once. Each fragment's
        # key is built once, for the context's key and for the fragment cache.
        keys = tuple([fragment_key(f) for f in fragments])
        ckey = (keys, prefix_len)
        judged = index.context_cache.get(ckey)
        if judged is None:
            if len(index.context_cache) > 256:
                index.context_cache.clear()
            judged = index.context_cache[ckey] = _judge_fragments(fragments, prefix_len, index, turn_index, keys)
        index.last_context = (tuple(fragments), prefix_len, texts, judged)
    verdicts, citation, counts, carried = judged
    row: dict[str, Any] = {**counts, **evidence_metrics(expected, texts, index, turn_index).row()}
    return ContextAudit(row, verdicts, citation, carried)


def fragment_key(frag: Fragment) -> tuple:
    """What a fragment's judgement depends on: its text, citations, kind and `derived` flag."""
    return (frag.text, frag.source_turn_ids, frag.kind, getattr(frag, "derived", False))


def _judge_fragments(fragments: Sequence[Fragment], prefix_len: int, index: TurnIndex,
                     turn_index: Mapping[str, int], fkeys: Sequence[tuple]) -> tuple[tuple, tuple, dict[str, Any], tuple]:
    verdicts, citation, keys, carried = [], [], [], []
    leaks = unsourced = misattributed = n_cited = n_carried = 0
    turn_ids: list[str] | None = None
    cache = index.fragment_cache
    for frag, key in zip(fragments, fkeys, strict=True):
        # Per fragment: (cited positions, settled prefix, verdict once settled, duplicate key, carried
        # turns, distinct citations, derived). From the settled prefix on the verdict no longer
        # changes, so a recurring fragment is one lookup. `is_derived` is a function of kind and flag.
        hit = cache.get(key)
        if hit is None:
            if turn_ids is None:
                turn_ids = _turn_order(index, turn_index)
            derived = is_derived(frag)
            cited = cited_positions(frag.source_turn_ids, turn_index)
            settled = index.analyse(frag.text).settled
            hit = cache[key] = (cited, settled, index.verdict(frag.text, settled, cited, derived),
                                max(cited, default=-1), duplicate_key(frag.text, frag.source_turn_ids, frag.kind, index),
                                tuple(turn_ids[p] for p in index.carried(frag.text, cited)),
                                len(set(frag.source_turn_ids)), derived)
            if len(cache) > 200_000:
                cache.clear()
        verdict = hit[2] if prefix_len >= hit[1] else index.verdict(frag.text, prefix_len, hit[0], hit[7])
        carried.append(hit[5])
        n_cited += hit[6]
        n_carried += len(hit[5])
        verdicts.append(verdict)
        citation.append(hit[3] >= prefix_len)
        leaks += verdict.leak_turn is not None
        unsourced += verdict.unsourced
        misattributed += verdict.misattributed
        if hit[4] is not None:
            keys.append(hit[4])
    counts = {"content_leaks": leaks, "unsourced": unsourced, "misattributed": misattributed,
              "duplicate_citations": len(keys) - len(set(keys)), "context_sha256": context_digest(fragments),
              "citation_precision": n_carried / n_cited if n_cited else None}
    return tuple(verdicts), tuple(citation), counts, tuple(carried)


def _turn_order(index: TurnIndex, turn_index: Mapping[str, int]) -> list[str]:
    """The trajectory's turn ids by position, sorted once per unit (not at every checkpoint that
    brings a new fragment: a sort of the whole trajectory each time)."""
    cached = index.turn_order
    if cached is None or cached[0] is not turn_index or cached[1] != len(turn_index):
        cached = index.turn_order = (turn_index, len(turn_index), sorted(turn_index, key=turn_index.__getitem__))
    return cached[2]


def fragment_fields(verdict: FragmentVerdict, turn_ids: Sequence[str]) -> dict[str, Any]:
    """Fragment columns of one verdict (migration m006_provenance)."""
    return {
        "content_leak": int(verdict.leak),
        "leak_turn_id": turn_ids[verdict.leak_turn] if verdict.leak_turn is not None else None,
        "unsourced": int(verdict.unsourced), "misattributed": int(verdict.misattributed),
        "sourced_share": verdict.sourced_share,
        "match_turn_id": turn_ids[verdict.best_turn] if verdict.best_turn is not None else None,
    }


def enforce_budget(fragments: Sequence[Fragment], budget: int) -> tuple[list[Fragment], int]:
    """Keep fragments in rank order while they fit the budget; return them and the tokens cut."""
    kept, used, cut = [], 0, 0
    for frag in fragments:
        n = estimate_tokens(frag.text)
        if used + n <= budget:
            kept.append(frag)
            used += n
        else:
            cut += n
    return kept, cut
