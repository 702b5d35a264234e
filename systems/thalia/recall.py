"""Read-only memory recall: episodes found by FTS join the Retriever's corpus (3.3.3).

Recall only reads the store (invariant `recall_readonly`). Recalled windows carry
negative source indices -1, -2, ... in hit order, which exempts them from the recency
bonus [SEED]. Episodes already among the Inspector's windows are skipped [CHOICE].
"""

from __future__ import annotations

from collections.abc import Iterable

from .config import HarnessConfig
from .contracts import EvidenceWindow
from .events import EventRelay
from .store import EpisodicStore, sanitize_fts_query
from .transcript import episode_lines


def recall_windows(query: str, store: EpisodicStore, present_turns: Iterable[int],
                   config: HarnessConfig, emit: EventRelay) -> tuple[EvidenceWindow, ...]:
    eligible = config.recall and len(store) > 0
    reason = "recall is off" if not config.recall else "episodic store is empty"
    if not emit.gate("recall.fts", eligible=eligible, ablated=config.ablated("recall.fts"),
                     reason=reason):
        return ()
    exclude = frozenset(present_turns)
    hits = store.search(query, config.recall_limit, exclude, config.recall_drop_stopwords)
    emit("recall.fts", "executed", count=len(hits), params={
        "match": sanitize_fts_query(query, config.recall_drop_stopwords),
        "backend": "fts5" if store.fts else "like", "limit": config.recall_limit})
    windows = []
    for n, ep in enumerate(hits, start=1):
        text = " ".join(line for _, line in episode_lines(ep, config.render_dates))
        windows.append(EvidenceWindow(
            window_id=f"recall:{ep.turn_id}", source_index=-n, text=text, turn_id=ep.turn_id,
            source_id=ep.source_id, session_id=ep.session_id, timestamp=ep.timestamp,
            origin="recall"))
    if windows:
        emit("recall.fts", "output", count=len(windows), ids=tuple(w.window_id for w in windows),
             source_turn_ids=tuple(dict.fromkeys(w.source_id for w in windows)))
    return tuple(windows)
