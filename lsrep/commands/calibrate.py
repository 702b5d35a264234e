"""`lsrep calibrate CAMPAIGN [--json]`: the instrument's ceiling, floor and label detection rates."""

from __future__ import annotations

import json


def register(sub, command) -> None:
    sp = sub.add_parser(
        "calibrate", help="score the calibration oracles (ceiling, floor, stale/future detection) on a campaign",
        description="Run the harness-side calibration systems (oracle, oracle-stale, oracle-future, null) on "
                    "the campaign's trajectories under its answerer and judge (the judge of record when it is a "
                    "model judge, else the first model judge, else the deterministic one). Nothing is written "
                    "to the store; model calls go through the response cache beside it.",
    )
    sp.add_argument("campaign", help="campaign file (TOML) whose trajectories, answerer and judge are used")
    sp.add_argument("--json", action="store_true", help="print the figures as JSON")
    sp.add_argument("--boot", type=int, default=2000, help="bootstrap replicates (default: %(default)s)")
    command("calibrate")(cmd_calibrate)


def cmd_calibrate(args) -> int:
    from lsrep.answer import make_answerer
    from lsrep.calibration import calibrate, calibration_json, campaign_judge, cases_from_campaign
    from lsrep.protocol.campaign import load_campaign
    from lsrep.runner import load_inputs, validate_campaign

    campaign = load_campaign(args.campaign)
    inputs = load_inputs(campaign)
    validate_campaign(campaign)
    cases, turns = cases_from_campaign(campaign, inputs)
    answerer = make_answerer(campaign.spec.answerer, str(campaign.store_path))
    cal = calibrate(cases, turns, answerer, seed=int(campaign.spec.seed or 0), boot=args.boot,
                    judge=campaign_judge(campaign))
    doc = calibration_json(cal)
    if args.json:
        print(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False))
        return 0
    print(f"calibration of campaign {campaign.spec.name!r}: {len(cases)} (probe, checkpoint) case(s); "
          f"answerer {cal.answerer}; judge {cal.judge}")
    print(f"{'system':<15}{'headline':>9}{'ans n':>7}{'ans acc':>9}{'95% CI':>13}{'abst n':>8}{'abst acc':>9}"
          f"{'stale':>7}{'future':>7}{'leaks':>7}")
    for name, s in doc["systems"].items():
        ci = s["answerable"]["ci"]
        ci_text = "—" if ci[0] is None else f"{ci[0]:.2f}–{ci[1]:.2f}"
        print(f"{name:<15}{_f(s['headline']['value']):>9}{s['answerable']['n']:>7}{_f(s['answerable']['value']):>9}"
              f"{ci_text:>13}{s['abstention']['n']:>8}{_f(s['abstention']['accuracy']):>9}"
              f"{s['labels']['stale']:>7}{s['labels']['future']:>7}{s['labels']['proven_leak']:>7}")
    print(f"ceiling (oracle answerable accuracy): {_f(doc['ceiling'])}   floor (null): {_f(doc['floor'])}")
    st, fu = doc["stale_detection"], doc["future_detection"]
    print(f"stale detection (oracle-stale labelled stale): {_f(st['rate'])} ({st['detected']}/{st['n']} cases "
          "with a superseded version)")
    print(f"future detection (oracle-future labelled future or proven leak): {_f(fu['rate'])} "
          f"({fu['detected']}/{fu['n']} cases with a later version; labelled future {fu['labelled']}, "
          f"proven leak {fu['proven_leak']})")
    ag = doc["judge_agreement"]
    print("judge agreement: " + (f"{ag['rate']:.1%} ({ag['agreed']}/{ag['n']})" if ag else
                                 f"not measured: {doc['judge_agreement_reason']}"))
    if doc["low_ceiling"]:
        print(f"WARNING: the ceiling is below .60 — with perfect memory the answerer and judge score "
              f"{_f(doc['ceiling'])}; the answerer, not memory, limits this comparison.")
    print("Intervals: cluster bootstrap over probes (trajectory, probe_id). Calibration systems are "
          "references for the instrument, never ranked as systems.")
    return 0


def _f(x) -> str:
    return "—" if x is None else f"{x:.3f}"
