"""Stage 2, the Reasoner: routing, one completion, citations, the consolidation flag.

Deterministic code classifies and routes; the model (the extractive responder by
default) makes exactly one completion per route [SEED]. Citations are the windows
whose text overlaps the answer; `answer_grounded` holds by a top-window fallback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from .config import HarnessConfig
from .contracts import (
    Citation,
    DeliveryMode,
    EvidenceWindow,
    MemorySnapshot,
    ReasonerOutput,
    RetrieverOutput,
    TaskCategory,
)
from .events import EventRelay
from .lm import LMClient
from .prompt import build_messages
from .routing import explicit_memory_request, requires_consolidation, route_for
from .text import content_tokens, distinct_tokens, said_tokens, strip_rendering, token_count


def integrate(query: str, windows: Sequence[EvidenceWindow], cap: int) -> list[EvidenceWindow]:
    """ReAct read -> integrate: keep windows sharing a content token with the query or with
    windows already kept (one hop), in rank order, up to the cap [CHOICE]. Window tokens
    exclude the rendering prefix (a shared date or speaker is no shared content)."""
    frontier = set(content_tokens(query))
    kept: list[EvidenceWindow] = []
    for w in windows:
        toks = said_tokens(w.text)
        if toks & frontier:
            kept.append(w)
            frontier |= toks
            if len(kept) >= cap:
                break
    return kept


def cite(answer: str, windows: Sequence[EvidenceWindow], min_overlap: int) -> list[EvidenceWindow]:
    """Windows sharing at least `min_overlap` non-stopword tokens with the answer [CHOICE],
    rendering prefixes excluded on both sides."""
    wanted = said_tokens(answer)
    return [w for w in windows if len(wanted & said_tokens(w.text)) >= min_overlap]


def support(answer: str, cited: Sequence[EvidenceWindow]) -> float:
    """|U(ŷ) ∩ U(E_cite)| / |U(ŷ)| (0 for an empty answer) [INFER], over the said words:
    rendering prefixes excluded on both sides."""
    u = distinct_tokens(strip_rendering(answer))
    if not u:
        return 0.0
    evidence: set[str] = set()
    for w in cited:
        evidence |= distinct_tokens(strip_rendering(w.text))
    return len(u & evidence) / len(u)


class Reasoner:
    """N(q, W_R, c_q, M) = (ŷ, C_cite, τ_N, b_N)."""

    def __init__(self, config: HarnessConfig, lm: LMClient, emit: EventRelay) -> None:
        self.config = config
        self.lm = lm
        self.emit = emit

    def reason(self, query: str, retrieved: RetrieverOutput, category: TaskCategory,
               snapshot: MemorySnapshot) -> ReasonerOutput:
        cfg, emit = self.config, self.emit
        route = route_for(category)
        emit("reasoner.route", "eligible")
        emit("reasoner.route", "executed", params={"category": category, "route": route})
        emit("reasoner.route", "output", params={"category": category, "route": route})
        trace: list[str] = [f"classify: {category}", f"route: {route}"]
        ranked = [r.window for r in retrieved.inline]
        chosen = ranked
        if route == "react":
            chosen = integrate(query, ranked, cfg.max_evidence) or ranked
            trace.append(f"read: {len(ranked)} windows; integrate: kept {len(chosen)}")
        note = None
        if retrieved.delivery_mode is DeliveryMode.FILE_BASED:
            withheld = len(retrieved.ranked) - len(retrieved.inline)
            where = retrieved.evidence_file or "not written (no evidence_dir)"
            note = f"(+{withheld} ranked windows over budget, delivered by file: {where})"
            trace.append(f"delivery: file_based, {withheld} windows withheld")

        answer, messages, completions = self._complete(query, chosen, snapshot, note)
        if not answer and route == "react" and ranked:
            trace.append("retry: empty completion, re-run over the ranked list")
            chosen = ranked
            answer, messages, c = self._complete(query, chosen, snapshot, note)
            completions += c
        if snapshot.bullets:
            emit("memory.snapshot", "in_prompt", count=len(snapshot.bullets),
                 ids=tuple(b.bullet_id for b in snapshot.bullets), params={"digest": snapshot.digest})

        cited, fallback = self._citations(answer, chosen)
        score = after = None
        if emit.gate("reasoner.verify", eligible=cfg.verify, ablated=cfg.ablated("reasoner.verify"),
                     reason="verify is off"):
            score = support(answer, cited)
            emit("reasoner.verify", "executed", params={"support": round(score, 6),
                                                         "threshold": cfg.grounding_threshold})
            if score < cfg.grounding_threshold and retrieved.full_ranking:
                chosen = [r.window for r in retrieved.full_ranking]
                answer, messages, c = self._complete(query, chosen, snapshot, None)
                completions += c
                cited, fallback = self._citations(answer, chosen)
                after = support(answer, cited)
                trace.append(f"verify: support {score:.3f} < {cfg.grounding_threshold}, re-answered "
                             f"over {len(chosen)} windows, support {after:.3f}")
                emit("reasoner.verify", "output", params={"support_before": round(score, 6),
                                                           "support_after": round(after, 6)})
        if chosen:
            emit("reasoner.citations", "eligible")
            emit("reasoner.citations", "executed", count=len(cited),
                 reason="citation_fallback" if fallback else None)
            emit("reasoner.citations", "output", count=len(cited),
                 ids=tuple(c.window_id for c in cited),
                 source_turn_ids=tuple(dict.fromkeys(c.source_id for c in cited)),
                 params={"citation_fallback": fallback})
        else:
            emit("reasoner.citations", "ineligible", reason="no evidence")
        trace.append(f"cite: {[c.source_index for c in cited]}" + (" (fallback)" if fallback else ""))
        return ReasonerOutput(
            answer=answer, category=category, route=route, citations=tuple(cited), trace=tuple(trace),
            requires_consolidation=requires_consolidation(category, query),
            explicit_request=explicit_memory_request(query), messages=tuple(messages),
            prompt_window_ids=tuple(w.window_id for w in chosen), citation_fallback=fallback,
            support=score, support_after=after, completions=completions)

    def _complete(self, query: str, windows: Sequence[EvidenceWindow], snapshot: MemorySnapshot,
                  note: str | None) -> tuple[str, list[dict[str, str]], int]:
        messages = build_messages(query, windows, snapshot, note)
        digest = hashlib.sha256("\0".join(m["content"] for m in messages).encode()).hexdigest()
        tokens = sum(token_count(m["content"]) for m in messages)
        self.emit("reasoner.lm", "eligible")
        try:
            answer = self.lm.complete(messages).strip()
        except Exception as exc:
            self.emit("reasoner.lm", "error", reason=f"{type(exc).__name__}: {exc}")
            raise
        self.emit("reasoner.lm", "executed", params={"prompt_tokens": tokens, "prompt_sha256": digest,
                                                      "model": getattr(self.lm, "name", None)})
        if answer:
            self.emit("reasoner.lm", "output", count=1)
        return answer, messages, 1

    def _citations(self, answer: str, windows: Sequence[EvidenceWindow]) -> tuple[list[Citation], bool]:
        hits = cite(answer, windows, self.config.citation_min_overlap)
        fallback = False
        if not hits and windows:
            hits, fallback = [windows[0]], True
        return [Citation(window_id=w.window_id, source_index=w.source_index, source_id=w.source_id,
                         text=w.text) for w in hits], fallback
