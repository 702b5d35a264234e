"""Agreement tables (rater-rater, judge-vs-human), the judge of record and the report section."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

from lsrep.judge.deterministic import DETERMINISTIC_JUDGE
from lsrep.judge.verdict import OUTCOMES
from lsrep.rating.adjudication import _ratings_by_item, disagrees, latest_packet
from lsrep.rating.common import (
    HUMAN_JUDGE,
    PER_LABEL_METHOD,
    RATER_LABELS,
    RUBRIC_SCORES,
    AgreementReport,
    HeadlineJudges,
    HeadlineLabel,
    JudgeAgreement,
    LabelAgreement,
    RaterPair,
)
from lsrep.rating.ratings_files import packet_key
from lsrep.store import RunStore


# -- agreement --------------------------------------------------------------------------------
def _judge_agreement(judge: str, human: list[str], other: list[str | None]) -> JudgeAgreement:
    from lsrep.judge.agreement import cohen_kappa, percent_agreement

    labels = [lab for lab in OUTCOMES if lab in human or lab in other]
    per_label = []
    for lab in labels:
        h = [x == lab for x in human]
        j = [None if y is None else y == lab for y in other]
        pairs = [(a, b) for a, b in zip(h, j, strict=True) if b is not None]
        per_label.append(LabelAgreement(
            label=lab, n_human=sum(a for a, _ in pairs), n_judge=sum(b for _, b in pairs),
            n_both=sum(a and b for a, b in pairs), percent=percent_agreement(h, j).value,
            kappa=cohen_kappa(h, j, categories=[False, True]).value,
        ))
    overall = percent_agreement(human, other)
    return JudgeAgreement(judge, overall.n, overall.value,
                          cohen_kappa(human, other, categories=OUTCOMES).value, tuple(per_label))


def agreement_report(store: RunStore, run_id: str, packet_id: str | None = None) -> AgreementReport:
    """Rater-rater agreement on a rating packet and every automatic judge against the human labels."""
    # Imported here: the lsrep.llm package loads the OpenAI client, which packets never need.
    from lsrep.judge.agreement import cohen_kappa, percent_agreement

    packet_id = packet_id or latest_packet(store, run_id)
    key = packet_key(store, run_id, packet_id)
    by_item = _ratings_by_item(store, packet_id)
    items = list(key["items"])
    raters = sorted({r for rs in by_item.values() for r in rs})
    pairs = []
    for i, a in enumerate(raters):
        for b in raters[i + 1:]:
            la = [by_item[it][a]["label"] if a in by_item.get(it, {}) else None for it in items]
            lb = [by_item[it][b]["label"] if b in by_item.get(it, {}) else None for it in items]
            ra = [by_item[it][a]["rubric"] if a in by_item.get(it, {}) else None for it in items]
            rb = [by_item[it][b]["rubric"] if b in by_item.get(it, {}) else None for it in items]
            pct = percent_agreement(la, lb)
            pairs.append(RaterPair(a, b, pct.n, pct.value, cohen_kappa(la, lb, categories=RATER_LABELS).value,
                                   cohen_kappa(ra, rb, categories=RUBRIC_SCORES, weights="linear").value))
    adjudicated = store.rows("select * from adjudications where packet_id = ? order by obs_id", [packet_id])
    obs_ids = [a["obs_id"] for a in adjudicated]
    labels: dict[str, dict[str, str]] = defaultdict(dict)
    if obs_ids:
        marks = ",".join("?" * len(obs_ids))
        for r in store.rows(f"select obs_id, judge, outcome from judgements where obs_id in ({marks}) "
                            "and judge != ? and status = 'ok'", [*obs_ids, HUMAN_JUDGE]):
            labels[r["judge"]][r["obs_id"]] = r["outcome"]
    human = [a["label"] for a in adjudicated]
    judge_names = sorted(labels, key=lambda j: (j != DETERMINISTIC_JUDGE, j))
    judges = tuple(_judge_agreement(j, human, [labels[j].get(o) for o in obs_ids]) for j in judge_names)
    source_of = {a["item_id"]: a["source"] for a in adjudicated}
    pending = sum(1 for it in items if len(by_item.get(it, {})) >= 2 and disagrees(list(by_item[it].values()))
                  and source_of.get(it) != "adjudicator")
    return AgreementReport(
        packet_id=packet_id, items=len(items), raters=tuple(raters), rater_pairs=tuple(pairs),
        adjudicated=len(adjudicated), by_source=dict(Counter(a["source"] for a in adjudicated)),
        pending=pending, judges=judges,
    )


# -- judge of record --------------------------------------------------------------------------
def headline_judge(store: RunStore, run_id: str) -> HeadlineJudges:
    """Per observation, the judge whose label the headline numbers use.

    `judge_of_record = "human"`: the adjudicated human label where one exists, the
    deterministic judge elsewhere. Another judge name: that judge where it gave an
    `ok` judgement, the deterministic judge elsewhere.
    """
    campaign = store.run(run_id)["manifest"].get("campaign", {})
    of_record = campaign.get("judge_of_record") or DETERMINISTIC_JUDGE
    rows = store.rows(
        "select o.obs_id, j.judge, j.outcome, j.correct from observations o left join judgements j "
        "on j.obs_id = o.obs_id and j.status = 'ok' and j.judge in (?, ?) where o.run_id = ?",
        [of_record, DETERMINISTIC_JUDGE, run_id],
    )
    found: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        entry = found[r["obs_id"]]
        if r["judge"] is not None:
            entry[r["judge"]] = r
    labels = {}
    for obs_id, by_judge in found.items():
        judge = of_record if of_record in by_judge else DETERMINISTIC_JUDGE
        row = by_judge.get(judge, {})
        labels[obs_id] = HeadlineLabel(judge, row.get("outcome"), row.get("correct"))
    return HeadlineJudges(of_record, labels, dict(Counter(lab.judge for lab in labels.values())))


# -- report section ---------------------------------------------------------------------------
def _num(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def rating_section(store: RunStore, run_id: str) -> dict[str, Any] | None:
    """Everything the report needs about human ratings of a run, as plain data (None: no packet)."""
    if not store.rows("select 1 from rating_packets where run_id = ? and kind = 'rating' limit 1", [run_id]):
        return None
    packet_id = latest_packet(store, run_id)
    packet = store.rows("select * from rating_packets where packet_id = ?", [packet_id])[0]
    rep = agreement_report(store, run_id, packet_id)
    head = headline_judge(store, run_id)
    total = len(head.labels)
    human_run = store.rows("select count(*) as n from adjudications where run_id = ?", [run_id])[0]["n"]
    return {
        "packet": {"packet_id": packet_id, "created_at": packet["created_at"], "seed": packet["seed"],
                   "sample_size": packet["sample_size"], "items": rep.items, "raters": list(rep.raters)},
        "counts": {"observations": total, "sampled": rep.items, "raters": len(rep.raters),
                   "adjudicated": rep.adjudicated, "agreed": rep.by_source.get("agreement", 0),
                   "adjudicator": rep.by_source.get("adjudicator", 0), "pending": rep.pending,
                   "human_labels_in_run": human_run},
        "rater_agreement": [{
            "rater_a": p.rater_a, "rater_b": p.rater_b, "n": p.n, "label_percent": _num(p.label_percent),
            "label_kappa": _num(p.label_kappa), "rubric_weighted_kappa": _num(p.rubric_weighted_kappa),
        } for p in rep.rater_pairs],
        "judge_vs_human": [{
            "judge": j.judge, "n": j.n, "percent": _num(j.percent), "kappa": _num(j.kappa),
            "per_label": [{"label": lab.label, "n_human": lab.n_human, "n_judge": lab.n_judge,
                           "n_both": lab.n_both, "percent": _num(lab.percent), "kappa": _num(lab.kappa)}
                          for lab in j.per_label],
        } for j in rep.judges],
        "headline": {"judge_of_record": head.judge_of_record, "observations": total,
                     "by_judge": dict(sorted(head.by_judge.items())), "human": head.human,
                     "human_share": head.human / total if total else None},
        "methods": {
            "sample": "stratified by condition x category x deterministic outcome, proportional allocation "
                      "with at least one item per stratum, seeded",
            "rater_agreement": "percent agreement and Cohen's kappa on labels; linearly weighted Cohen's "
                               "kappa on the 1-5 rubric",
            "adjudication": "agreed = same label and rubric within 1 (rubric: lower median); "
                            "other items resolved by an adjudicator",
            "per_label": PER_LABEL_METHOD,
        },
    }
