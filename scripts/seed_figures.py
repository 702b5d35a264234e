"""Figures for issue 19 measured on one shared LoCoMo conversation (read in place).

    .venv/bin/python scripts/seed_figures.py thalia conv-26
    .venv/bin/python scripts/seed_figures.py ice conv-26

`thalia`: every turn is appended, then every QA question is answered once over the whole
conversation (read-only `answer`). Printed: the cited-window share (cited / windows in the
prompt), how many ReAct questions `integrate` narrowed and how many windows it dropped, and
how many answers were grounded only by the top-window fallback.

`ice`: the conversation is replayed through the ICE adapter, each QA question with evidence is
asked at the end, and evidence recall (the share of gold evidence turns among the returned
fragments' source turns) is printed with summary fragments citing their whole batch (`batch`),
citing only the turns whose content they carry (`content`), and with summaries citing nothing.
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


def ice_figures(sample_id: str, limit: int | None = None) -> dict[str, float]:
    """Mean evidence recall over the probes with evidence, asked once after the whole replay
    (a nightly maintenance after each session, as `schedules/nightly.toml` would run)."""
    from lsrep.adapters.ice import IceAdapter, Options

    from lsrep.contract import AdapterSetup, ReplayTurn

    conv = conversation(sample_id)
    probes = [p for p in conv.probes if any(v.evidence for v in p.references)][:limit]
    figures: dict[str, float] = {"probes": len(probes)}
    for policy in ("batch", "content"):
        with tempfile.TemporaryDirectory() as tmp:
            adapter = IceAdapter(AdapterSetup(options=Options(summary_citations=policy), state_dir=Path(tmp)))
            adapter.reset(conversation_id=conv.sample_id, now=conv.turns[0].timestamp)
            session = None
            for i, turn in enumerate(conv.turns):
                if session is not None and turn.session_id != session:
                    adapter.maintain("nightly", now=turn.timestamp)
                session = turn.session_id
                adapter.ingest(ReplayTurn(turn_id=turn.turn_id, session_id=turn.session_id,
                                          conversation_id=conv.sample_id, index=i, timestamp=turn.timestamp,
                                          role=turn.role, speaker=turn.speaker, content=turn.content),
                               now=turn.timestamp)
            end = conv.turns[-1].timestamp
            adapter.maintain("nightly", now=end)
            recalls, bare, summaries, summary_cites = [], [], 0, 0
            for probe in probes:
                evidence = {e for v in probe.references for e in v.evidence}
                result = adapter.query(probe.question, now=end)
                sources = {t for f in result.fragments for t in f.source_turn_ids}
                recalls.append(len(sources & evidence) / len(evidence))
                others = {t for f in result.fragments if not f.text.startswith("Summary (") for t in f.source_turn_ids}
                bare.append(len(others & evidence) / len(evidence))
                for f in result.fragments:
                    if f.text.startswith("Summary ("):
                        summaries += 1
                        summary_cites += len(f.source_turn_ids)
            adapter.close()
        figures[f"evidence_recall_{policy}"] = round(sum(recalls) / len(recalls), 4)
        figures["evidence_recall_without_summaries"] = round(sum(bare) / len(bare), 4)
        figures[f"summary_fragments_{policy}"] = summaries
        figures[f"turns_cited_per_summary_{policy}"] = round(summary_cites / summaries, 2) if summaries else 0.0
    return figures


def main(argv: list[str]) -> int:
    what, sample_id = argv[1], argv[2]
    if what == "thalia":
        print(json.dumps(thalia_figures(sample_id), indent=1))
    elif what == "ice":
        print(json.dumps(ice_figures(sample_id), indent=1))
    else:
        print(f"unknown figure set {what!r}: thalia or ice", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
