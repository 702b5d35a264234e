"""Figures for issue 19 measured on one shared LoCoMo conversation (read in place).

    .venv/bin/python scripts/seed_figures.py thalia conv-26
    .venv/bin/python scripts/seed_figures.py ice conv-26

`thalia`: every turn is appended, then every QA question is answered once over the whole
conversation (read-only `answer`). Printed: the cited-window share (cited / windows in the
prompt), how many ReAct questions `integrate` narrowed and how many windows it dropped, and
how many answers were grounded only by the top-window fallback.

`ice`: the conversation is replayed through the ICE adapter, each QA question with evidence is
asked at the end, and evidence recall (the share of gold evidence turns among the returned
fragments' source turns) is printed with and without summary fragments' own citations.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from lsrep.probes.locomo import build_locomo

LOCOMO = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "locomo" / "locomo-dev7.json"


def conversation(sample_id: str):
    return build_locomo(LOCOMO, [sample_id])[0]


def thalia_figures(sample_id: str, limit: int | None = None) -> dict[str, float]:
    from lsrep.systems.thalia import Thalia

    conv = conversation(sample_id)
    with tempfile.TemporaryDirectory() as tmp, Thalia(tmp) as system:
        session = None
        for turn in conv.turns:
            if session is not None and turn.session_id != session:
                system.end_session(session, timestamp=turn.timestamp)
            session = turn.session_id
            system.append_turn(turn.content, role=turn.role, session_id=turn.session_id,
                               timestamp=turn.timestamp, source_id=turn.turn_id, speaker=turn.speaker)
        end = conv.turns[-1].timestamp
        counts: Counter[str] = Counter()
        for probe in conv.probes[:limit]:
            out = system.answer(probe.question, timestamp=end, item=probe.probe_id)
            r = out.reasoner
            counts["questions"] += 1
            counts["prompt_windows"] += len(r.prompt_window_ids)
            counts["cited_windows"] += len(r.citations)
            counts["fallback"] += r.citation_fallback
            if r.route == "react":
                counts["react"] += 1
                ranked = len(out.retriever.inline)
                dropped = ranked - len(r.prompt_window_ids)
                counts["react_narrowed"] += dropped > 0
                counts["react_ranked_windows"] += ranked
                counts["react_dropped_windows"] += max(dropped, 0)
    share = counts["cited_windows"] / counts["prompt_windows"] if counts["prompt_windows"] else 0.0
    return {**counts, "cited_share": round(share, 4)}


def main(argv: list[str]) -> int:
    what, sample_id = argv[1], argv[2]
    if what == "thalia":
        print(json.dumps(thalia_figures(sample_id), indent=1))
    elif what == "ice":
        from ice_figures import ice_figures  # noqa: PLC0415 - sibling script

        print(json.dumps(ice_figures(sample_id), indent=1))
    else:
        print(f"unknown figure set {what!r}: thalia or ice", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
