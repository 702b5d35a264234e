"""Stage 1, the Retriever: lexical-first hybrid ranking of the candidate windows.

Order of operations [SEED]: (PRF) -> BM25 and hashing-cosine lanes -> weighted RRF with
task-conditioned weights -> recency (optional) -> MMR (optional) -> cap at max_evidence
-> evidence budget (INLINE when n̂ <= B, else FILE_BASED).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from .config import HarnessConfig
from .contracts import DeliveryMode, EvidenceWindow, RankedEvidence, RetrieverOutput
from .embedding import Embedder
from .events import EventRelay
from .fusion import Lane, Scored, apply_recency, mmr_order, weighted_rrf
from .lexical import BM25, expand_query, expansion_terms
from .semantic import SemanticIndex
from .text import token_count


def _ids(items: Sequence[RankedEvidence]) -> tuple[str, ...]:
    return tuple(r.window.window_id for r in items)


def _sources(items: Sequence[RankedEvidence]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r.window.source_id for r in items))


def inline_prefix(ranked: Sequence[RankedEvidence], budget: int) -> tuple[RankedEvidence, ...]:
    """The longest rank-order prefix whose |T| total fits the budget [CHOICE]."""
    total, out = 0, []
    for r in ranked:
        total += token_count(r.window.text)
        if total > budget:
            break
        out.append(r)
    return tuple(out)


class Retriever:
    """R(q, W_I, c_q) = (W_R, δ_R)."""

    def __init__(self, config: HarnessConfig, embedder: Embedder, emit: EventRelay) -> None:
        self.config = config
        self.embedder = embedder
        self.emit = emit

    def retrieve(self, query: str, windows: Sequence[EvidenceWindow], category: str,
                 budget: int | None = None, item: str = "query") -> RetrieverOutput:
        cfg, emit = self.config, self.emit
        budget = cfg.context_budget_tokens if budget is None else budget
        docs = [w.text for w in windows]
        doc_of = {w.window_id: d for d, w in enumerate(windows)}
        executed: set[str] = set()
        bm25 = BM25(docs, cfg.bm25_k1, cfg.bm25_b)

        terms: list[str] = []
        if emit.gate("retriever.prf", eligible=cfg.query_expansion and bool(windows),
                     ablated=cfg.ablated("retriever.prf"),
                     reason="query_expansion is off" if not cfg.query_expansion else "no windows"):
            feedback = bm25.top_k(query, cfg.top_k)[: cfg.prf_feedback_docs]
            terms = expansion_terms(query, [docs[h.doc] for h in feedback], cfg.prf_top_terms)
            executed.add("retriever.prf")
            emit("retriever.prf", "executed", count=len(terms),
                 params={"feedback_docs": [windows[h.doc].window_id for h in feedback],
                         "added_terms": terms})
            if terms:
                emit("retriever.prf", "output", count=len(terms), params={"added_terms": terms})
        q = expand_query(query, terms)

        lanes: list[Lane] = []
        lexical = semantic = None
        weights = cfg.lane_weights(category)
        if emit.gate("retriever.bm25", eligible=bool(windows), ablated=cfg.ablated("retriever.bm25"),
                     reason="no windows", windows=len(windows)):
            lexical = bm25.top_k(q, cfg.top_k)
            executed.add("retriever.bm25")
            self._lane_events("retriever.bm25", lexical, windows)
            lanes.append(Lane("retriever.bm25", tuple(h.doc for h in lexical), weights[0]))
        index = SemanticIndex(docs, self.embedder)
        if emit.gate("retriever.hashing", eligible=bool(windows),
                     ablated=cfg.ablated("retriever.hashing"), reason="no windows",
                     windows=len(windows)):
            semantic = index.top_k(q, cfg.top_k)
            executed.add("retriever.hashing")
            self._lane_events("retriever.hashing", semantic, windows)
            lanes.append(Lane("retriever.hashing", tuple(h.doc for h in semantic), weights[1]))

        lex_rank = {h.doc: r for r, h in enumerate(lexical or [])}
        sem_rank = {h.doc: r for r, h in enumerate(semantic or [])}
        nonempty = [lane for lane in lanes if lane.ranking]
        params = {"weights": list(weights), "category": category, "k": cfg.rrf_k}
        if emit.gate("retriever.rrf", eligible=bool(nonempty), ablated=cfg.ablated("retriever.rrf"),
                     reason="every lane is empty", **params):
            fused = weighted_rrf(nonempty, cfg.rrf_k)
            executed.add("retriever.rrf")
        else:  # unfused: lane rankings concatenated, first occurrence kept
            concat = list(dict.fromkeys(d for lane in nonempty for d in lane.ranking))
            fused = weighted_rrf([Lane("concat", tuple(concat), 1.0)], cfg.rrf_k)
        ranking = [RankedEvidence(window=windows[f.doc], score=f.score, fused_score=f.score,
                                  lexical_rank=lex_rank.get(f.doc), semantic_rank=sem_rank.get(f.doc))
                   for f in fused]
        if "retriever.rrf" in executed:
            emit("retriever.rrf", "executed", count=len(ranking), params=params)
            if ranking:
                emit("retriever.rrf", "output", count=len(ranking), ids=_ids(ranking),
                     params={"scores": [round(r.fused_score, 12) for r in ranking]})

        ranking = self._recency(ranking, executed)
        ranking = self._mmr(ranking, index, windows, executed)
        capped = tuple(ranking[: cfg.max_evidence])
        for mech in ("retriever.prf", "retriever.rrf", "retriever.recency", "retriever.mmr"):
            if mech in executed and capped:
                emit(mech, "selected", count=len(capped), ids=_ids(capped), source_turn_ids=_sources(capped))
        for mech, ranks in (("retriever.bm25", lex_rank), ("retriever.hashing", sem_rank)):
            mine = [r for r in capped if doc_of[r.window.window_id] in ranks]
            if mech in executed and mine:
                emit(mech, "selected", count=len(mine), ids=_ids(mine), source_turn_ids=_sources(mine))

        n_hat = sum(token_count(r.window.text) for r in capped)
        mode = DeliveryMode.INLINE if n_hat <= budget else DeliveryMode.FILE_BASED
        inline = capped if mode is DeliveryMode.INLINE else inline_prefix(capped, budget)
        evidence_file = None
        if mode is DeliveryMode.FILE_BASED and cfg.evidence_dir:
            evidence_file = self._write_overflow(capped, query, item)
        emit("retriever.budget", "eligible")
        emit("retriever.budget", "executed", count=len(capped), params={
            "n_hat": n_hat, "budget": budget, "mode": mode.value, "inline": len(inline),
            "evidence_file": evidence_file})
        if inline:
            emit("retriever.budget", "output", count=len(inline), ids=_ids(inline),
                 source_turn_ids=_sources(inline))
            emit("retriever.budget", "selected", count=len(inline), ids=_ids(inline),
                 source_turn_ids=_sources(inline))
        return RetrieverOutput(query=q, category=category, weights=weights,  # type: ignore[arg-type]
                               ranked=capped, inline=inline, delivery_mode=mode, evidence_tokens=n_hat,
                               budget_tokens=budget, full_ranking=tuple(ranking),
                               expansion_terms=tuple(terms), executed=frozenset(executed),
                               evidence_file=evidence_file)

    # -- optional re-rankers -------------------------------------------------------------------
    def _recency(self, ranking: list[RankedEvidence], executed: set[str]) -> list[RankedEvidence]:
        cfg, emit = self.config, self.emit
        if not emit.gate("retriever.recency", eligible=cfg.recency_weight > 0 and bool(ranking),
                         ablated=cfg.ablated("retriever.recency"),
                         reason="recency_weight is 0" if cfg.recency_weight == 0 else "nothing ranked",
                         weight=cfg.recency_weight):
            return ranking
        scored = [Scored(pos, r.score, r.window.source_index) for pos, r in enumerate(ranking)]
        adjusted = apply_recency(scored, cfg.recency_weight)
        out = [RankedEvidence(window=ranking[s.doc].window, score=s.score,
                              fused_score=ranking[s.doc].fused_score,
                              lexical_rank=ranking[s.doc].lexical_rank,
                              semantic_rank=ranking[s.doc].semantic_rank) for s in adjusted]
        executed.add("retriever.recency")
        deltas = {ranking[s.doc].window.window_id: s.doc - new for new, s in enumerate(adjusted)}
        emit("retriever.recency", "executed", count=len(out), params={"weight": cfg.recency_weight})
        emit("retriever.recency", "output", count=len(out), ids=_ids(out),
             params={"rank_deltas": {k: v for k, v in deltas.items() if v}})
        return out

    def _mmr(self, ranking: list[RankedEvidence], index: SemanticIndex,
             windows: Sequence[EvidenceWindow], executed: set[str]) -> list[RankedEvidence]:
        cfg, emit = self.config, self.emit
        if not emit.gate("retriever.mmr", eligible=cfg.mmr and bool(ranking),
                         ablated=cfg.ablated("retriever.mmr"),
                         reason="mmr is off" if not cfg.mmr else "nothing ranked",
                         lam=cfg.mmr_lambda):
            return ranking
        doc_of = {w.window_id: d for d, w in enumerate(windows)}
        docs = [doc_of[r.window.window_id] for r in ranking]
        order = mmr_order([r.score for r in ranking], lambda i, j: index.sim(docs[i], docs[j]),
                          cfg.mmr_lambda)
        out = [ranking[p] for p in order]
        executed.add("retriever.mmr")
        before = set(_ids(ranking[: cfg.max_evidence]))
        evicted = sorted(before - set(_ids(out[: cfg.max_evidence])))
        emit("retriever.mmr", "executed", count=len(out), params={"lambda": cfg.mmr_lambda})
        emit("retriever.mmr", "output", count=len(out), ids=_ids(out),
             params={"reordered": order != list(range(len(order))), "evicted": evicted})
        return out

    def _lane_events(self, mech: str, hits: list, windows: Sequence[EvidenceWindow]) -> None:
        ids = tuple(windows[h.doc].window_id for h in hits)
        self.emit(mech, "executed", count=len(hits),
                  params={"ranked": list(ids), "scores": [round(h.score, 12) for h in hits]})
        if hits:
            self.emit(mech, "output", count=len(hits), ids=ids,
                      source_turn_ids=tuple(dict.fromkeys(windows[h.doc].source_id for h in hits)))

    def _write_overflow(self, ranked: Sequence[RankedEvidence], query: str, item: str) -> str:
        """FILE_BASED: the whole ranked list goes to `evidence_<item>.jsonl` [CHOICE]."""
        folder = Path(self.config.evidence_dir or ".")
        folder.mkdir(parents=True, exist_ok=True)
        tag = hashlib.sha256(f"{item}\0{query}".encode()).hexdigest()[:12]
        path = folder / f"evidence_{tag}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for rank, r in enumerate(ranked):
                fh.write(json.dumps({"rank": rank, "window_id": r.window.window_id,
                                     "source_index": r.window.source_index, "score": r.score,
                                     "text": r.window.text}, ensure_ascii=False) + "\n")
        return str(path)
