"""Stage 0, the Inspector: query-anchored narrowing of the transcript (seed-systems 3.3.2).

peek -> grep (one pattern per content token of the query) -> relevance ρ -> coarse block
filter when the transcript is long -> fine ranking -> at most max_windows windows.
Fallback A (no content tokens): transcript order. Fallback B (no grep match): rank every
record by overlap. Records in discarded blocks are unreachable downstream [SEED].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .config import HarnessConfig
from .contracts import EvidenceWindow, InspectorMetadata, InspectorOutput
from .events import EventRelay
from .text import content_tokens, distinct_tokens
from .transcript import Transcript, token_pattern


def effective_max_windows(config: HarnessConfig, n_lines: int, adaptive: bool) -> int:
    """max(max_windows, ⌈n_lines / ratio⌉) when adaptive, else max_windows [SEED; ceiling CHOICE]."""
    if not adaptive:
        return config.max_windows
    return max(config.max_windows, math.ceil(n_lines / config.adaptive_window_ratio))


def kept_block_count(max_windows: int, partition_size: int) -> int:
    """m = max(1, ⌊max_windows / partition_size⌋ + 1) [SEED]."""
    return max(1, max_windows // partition_size + 1)


@dataclass(frozen=True)
class Partition:
    """The block filter's decision: how many blocks there were and which survived."""

    n_blocks: int
    kept: tuple[int, ...]


def partition_blocks(counts: dict[int, int], n_records: int, size: int, m: int) -> Partition:
    """Keep the m blocks with the largest Σρ, ties by ascending block index [SEED].

    Block scores use match counts (ρ·|Q_I|), which orders blocks exactly as Σρ does.
    """
    n_blocks = math.ceil(n_records / size)
    scores: dict[int, int] = {}
    for i, c in counts.items():
        scores[i // size] = scores.get(i // size, 0) + c
    ranked = [b for b, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))][:m]
    if len(ranked) < m:  # zero-score blocks fill up in ascending order
        chosen = set(ranked)
        b = 0
        while len(ranked) < min(m, n_blocks) and b < n_blocks:
            if b not in chosen:
                ranked.append(b)
            b += 1
    return Partition(n_blocks=n_blocks, kept=tuple(sorted(ranked)))


def select_records(counts: dict[int, int], n: int, cap: int, size: int,
                   partitioned: bool) -> tuple[list[int], Partition | None]:
    """Coarse block filter (when on), then fine ranking by ρ desc and index asc, first `cap`.

    Candidates are the grep matches inside the kept blocks, or every record in them when
    nothing matched (Fallback B); without the filter, the matches or the whole transcript.
    """
    partition = None
    if partitioned:
        partition = partition_blocks(counts, n, size, kept_block_count(cap, size))
        kept = frozenset(partition.kept)
        if counts:
            candidates = [i for i in counts if i // size in kept]
        else:
            candidates = [i for b in partition.kept for i in range(b * size, min(n, (b + 1) * size))]
    elif counts:
        candidates = list(counts)
    else:  # no relevance signal: every record has ρ = 0, so transcript order decides
        candidates = list(range(min(n, cap)))
    return sorted(candidates, key=lambda i: (-counts.get(i, 0), i))[:cap], partition


@dataclass(frozen=True)
class Selection:
    """`select_records` computed on the match arrays, with what `inspect` reads besides."""

    ordered: list[int]
    partition: Partition | None
    discarded: tuple[int, ...]
    """Matches outside the kept blocks, ascending (empty without the filter)."""
    counts: dict[int, int]
    """ρ·|Q_I| of each record in `ordered` that matched."""


def select_matches(idx: np.ndarray, cnt: np.ndarray, n: int, cap: int, size: int,
                   partitioned: bool) -> Selection:
    """`select_records` on the matches as arrays (`Transcript.matches`: indices ascending and
    their counts), in vectorised steps: the same blocks, records and order, because every
    step is the same integer comparison (a stable sort over blocks or indices already in
    ascending order breaks ties by ascending block or index, as the key does)."""
    if idx.shape[0] == 0:  # no relevance signal: transcript order (no match to discard)
        ordered, partition = select_records({}, n, cap, size, partitioned)
        return Selection(ordered, partition, (), {})
    partition = None
    keep = np.ones(idx.shape[0], dtype=bool)
    if partitioned:
        blocks = idx // size
        starts = np.flatnonzero(np.concatenate(([True], blocks[1:] != blocks[:-1])))
        scores = np.add.reduceat(cnt, starts)
        m = kept_block_count(cap, size)
        ranked = blocks[starts][np.argsort(-scores, kind="stable")[:m]].tolist()
        partition = Partition(n_blocks=math.ceil(n / size),
                              kept=tuple(sorted(ranked)))  # every match's block scores > 0
        if len(ranked) < m:
            partition = partition_blocks(dict(zip(idx.tolist(), cnt.tolist(), strict=True)),
                                         n, size, m)
        kept = np.zeros(partition.n_blocks, dtype=bool)
        kept[list(partition.kept)] = True
        keep = kept[blocks]
    cand, c = idx[keep], cnt[keep]
    best = np.argsort(-c, kind="stable")[:cap]  # ρ desc, then index asc (cand ascending)
    ordered = cand[best].tolist()
    return Selection(ordered, partition, tuple(idx[~keep].tolist()),
                     dict(zip(ordered, c[best].tolist(), strict=True)))


class Inspector:
    """I(q, H) = (W_I, μ_I)."""

    def __init__(self, config: HarnessConfig, emit: EventRelay) -> None:
        self.config = config
        self.emit = emit

    def inspect(self, query: str, transcript: Transcript) -> InspectorOutput:
        cfg, emit = self.config, self.emit
        n = len(transcript)
        emit("inspector.peek", "eligible")
        emit("inspector.peek", "executed", params=transcript.peek())
        if n:
            emit("inspector.peek", "output", count=n)
        q_tokens = tuple(sorted(content_tokens(query)))
        base = cfg.max_windows
        adaptive = emit.gate("inspector.adaptive_windows", eligible=cfg.adaptive_windows,
                             ablated=cfg.ablated("inspector.adaptive_windows"),
                             reason="adaptive_windows is off")
        eff = effective_max_windows(cfg, n, adaptive)
        if adaptive:
            emit("inspector.adaptive_windows", "executed",
                 params={"base": base, "effective": eff, "n_lines": n,
                         "ratio": cfg.adaptive_window_ratio})
            if eff > base:
                emit("inspector.adaptive_windows", "output", count=eff)

        patterns = tuple(token_pattern(t) for t in q_tokens)
        idx = cnt = np.zeros(0, dtype=np.int64)
        if not q_tokens:
            fallback = "order"
            emit("inspector.grep", "ineligible", reason="query has no content tokens")
            emit("inspector.fallback_overlap", "ineligible", reason="no relevance signal")
            emit("inspector.fallback_order", "eligible")
            emit("inspector.fallback_order", "executed", count=n)
        else:
            emit("inspector.fallback_order", "ineligible", reason="query has content tokens")
            emit("inspector.grep", "eligible", count=len(q_tokens))
            idx, cnt = transcript.matches(q_tokens)
            matched = int(idx.shape[0])
            emit("inspector.grep", "executed", count=matched, params={"patterns": list(patterns)})
            if matched:
                fallback = "none"
                emit("inspector.grep", "output", count=matched)
                emit("inspector.fallback_overlap", "ineligible", reason="grep matched")
            else:
                fallback = "overlap"
                emit("inspector.fallback_overlap", "eligible")
                emit("inspector.fallback_overlap", "executed", count=n)

        # Coarse block filter: ρ for every record first, then blocks, then fine ranking.
        run_partition = emit.gate(
            "inspector.partition", eligible=n > cfg.partition_threshold and bool(q_tokens),
            ablated=cfg.ablated("inspector.partition"),
            reason=("records within threshold" if n <= cfg.partition_threshold
                    else "no relevance signal (fallback_order)"),
            records=n, threshold=cfg.partition_threshold)
        size = cfg.partition_size
        chosen = select_matches(idx, cnt, n, eff, size, run_partition)
        ordered, partition, counts = chosen.ordered, chosen.partition, chosen.counts
        discarded_matches = chosen.discarded
        if partition is not None:
            in_kept = sum(min(size, n - b * size) for b in partition.kept)
            emit("inspector.partition", "executed", count=n - in_kept, params={
                "blocks": partition.n_blocks, "kept_blocks": list(partition.kept),
                "records_kept": in_kept, "records_discarded": n - in_kept,
                "discarded_matches": list(discarded_matches), "partition_size": size})
            emit("inspector.partition", "output", count=in_kept)
        # Windows the base cap would not have produced are the adaptive widening's output.
        base_set = (frozenset(select_matches(idx, cnt, n, base, size, run_partition).ordered)
                    if adaptive and eff > base else frozenset(ordered))

        windows = tuple(self._window(transcript, i, rank, counts.get(i, 0), len(q_tokens),
                                     widened=i not in base_set)
                        for rank, i in enumerate(ordered))
        covered: set[str] = set()
        for w in windows:
            covered |= distinct_tokens(w.text)
        confidence = len(set(q_tokens) & covered) / len(q_tokens) if q_tokens else 0.0
        ids = tuple(w.window_id for w in windows)
        sources = tuple(dict.fromkeys(w.source_id for w in windows))
        producer = {"none": "inspector.grep", "order": "inspector.fallback_order",
                    "overlap": "inspector.fallback_overlap"}[fallback]
        if fallback != "none" and windows:
            emit(producer, "output", count=len(windows))
        if windows:
            emit(producer, "selected", count=len(windows), ids=ids, source_turn_ids=sources,
                 params={"confidence": round(confidence, 6)})
            if partition is not None:
                emit("inspector.partition", "selected", count=len(windows), ids=ids,
                     source_turn_ids=sources)
            widened = [w for w in windows if w.widened]
            if widened:
                emit("inspector.adaptive_windows", "selected", count=len(widened),
                     ids=tuple(w.window_id for w in widened),
                     source_turn_ids=tuple(dict.fromkeys(w.source_id for w in widened)))
        meta = InspectorMetadata(
            query_tokens=q_tokens, patterns=patterns, selected_indices=tuple(ordered),
            confidence=confidence, fallback=fallback, n_records=n, n_matches=int(idx.shape[0]),
            effective_max_windows=eff, partitioned=partition is not None,
            n_blocks=partition.n_blocks if partition else 0,
            kept_blocks=partition.kept if partition else (),
            records_discarded=(n - sum(min(size, n - b * size) for b in partition.kept)
                               if partition else 0),
            discarded_matches=discarded_matches)
        return InspectorOutput(windows=windows, metadata=meta)

    def _window(self, transcript: Transcript, i: int, rank: int, count: int,
                n_query: int, widened: bool) -> EvidenceWindow:
        rec = transcript.records[i]
        r = self.config.window_radius
        text = rec.text if r == 0 else "\n".join(x.text for x in transcript.window(i - r, i + r + 1))
        return EvidenceWindow(window_id=f"line:{i}", source_index=i, text=text, turn_id=rec.turn_id,
                              source_id=rec.source_id, session_id=rec.session_id,
                              timestamp=rec.timestamp, origin="inspector",
                              rho=count / n_query if n_query else 0.0, inspector_rank=rank,
                              widened=widened)
