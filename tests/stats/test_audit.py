"""The fidelity audit over synthetic event streams."""

from __future__ import annotations

import numpy as np
import pytest

from lsrep import audit


def events(condition: str, mechanism: str, *stages: str, times: int = 1, reason: str | None = None) -> list[dict]:
    return [{"condition": condition, "mechanism": mechanism, "stage": s, "reason": reason}
            for _ in range(times) for s in stages]


FULL = ["eligible", "executed", "output", "selected", "in_prompt"]


@pytest.mark.parametrize(("stages", "reason", "applicable", "status", "verdict"), [
    ((), None, None, "never_eligible", "never_exercised"),
    (("ineligible", "ineligible"), "store empty", None, "never_eligible", "never_exercised"),
    (("ineligible",), "disabled: mmr is off", None, "disabled", "disabled"),
    (("ineligible",), "off by configuration", None, "disabled", "disabled"),  # older adapters' wording
    (("eligible", "skipped"), "disabled", None, "disabled", "disabled"),
    (("ineligible",), "idle: within limit", None, "never_eligible", "idle"),
    (("eligible", "executed"), "idle: nothing over the cap", FULL, "executed_no_output", "idle"),
    (("eligible", "skipped"), "read-only probe", None, "eligible_not_executed", "idle"),
    # Positive evidence of a defect:
    (("eligible",), None, None, "eligible_not_executed", "defective"),
    (("eligible", "executed", "error"), "boom", None, "executed_error", "defective"),
    (("eligible", "executed"), None, FULL, "executed_no_output", "defective"),
    (("eligible", "executed", "output", "selected"), None, FULL, "selected_not_in_prompt", "defective"),
    # No output where none is declared is no defect (the default for adapters that declare nothing).
    (("eligible", "executed"), None, None, "executed_no_output", "exercised"),
    (("eligible", "executed", "output"), None, FULL[:3], "output_not_selected", "exercised"),
    (("eligible", "executed", "output", "selected", "in_prompt"), None, FULL, "reached_prompt", "exercised"),
    (("in_prompt",), None, None, "reached_prompt", "exercised"),
])
def test_every_stage_pattern_gets_its_verdict(stages, reason, applicable, status, verdict):
    spec = {"system": "s", "mechanisms": ["m"], "disable": []}
    if applicable:
        spec["mechanism_stages"] = {"m": applicable}
    (row,) = audit.audit_fidelity(events("c", "m", *stages, reason=reason), {"c": spec})
    assert (row.status, row.verdict) == (status, verdict), row.evidence
    assert row.declared and row.evidence


def test_occasional_errors_are_defective_even_when_it_also_reached_the_prompt():
    stream = events("c", "m", "eligible", "executed", "error", times=3) + events(
        "c", "m", "eligible", "executed", "output", "selected", "in_prompt")
    (row,) = audit.audit_fidelity(stream, {"c": {"mechanisms": ["m"]}})
    assert row.status == "reached_prompt" and row.verdict == "defective"
    assert "failed 3" in row.evidence
    assert (row.counts.error, row.counts.executed, row.counts.in_prompt) == (3, 4, 1)


def test_declared_without_events_is_never_exercised_and_undeclared_is_reported():
    conditions = {"c": {"system": "s", "mechanisms": ["quiet", "loud"], "disable": []}}
    stream = events("c", "loud", "eligible", "executed", "output", "selected", "in_prompt") + events(
        "c", "stray", "in_prompt")
    rows = {r.mechanism: r for r in audit.audit_fidelity(stream, conditions)}
    assert rows["quiet"].verdict == "never_exercised"
    assert rows["loud"].status == "reached_prompt" and rows["loud"].verdict == "exercised"
    assert rows["stray"].declared is False


def test_defective_procedural_leg_like_ice_i1():
    # Eligible and executed on every probe with a leg's declared stages, never any output: defective.
    stream = events("ice", "ice.leg.procedural", "eligible", "executed", times=12)
    spec = {"mechanisms": ["ice.leg.procedural"], "mechanism_stages": {"ice.leg.procedural": FULL}}
    (row,) = audit.audit_fidelity(stream, {"ice": spec})
    assert row.verdict == "defective" and "never produced output" in row.evidence
    # The same leg saying, when it ran, that nothing matched is idle, not defective.
    idle = events("ice", "ice.leg.procedural", "eligible", "executed", times=12, reason="idle: no trigger matches")
    (row,) = audit.audit_fidelity(idle, {"ice": spec})
    assert row.verdict == "idle"


def test_a_switched_off_mechanism_is_disabled_unless_it_ran():
    spec = {"mechanisms": ["m"], "disable": ["m"]}
    (row,) = audit.audit_fidelity(events("c", "m", "eligible", "skipped", reason="disabled"), {"c": spec})
    assert row.verdict == "disabled"
    (row,) = audit.audit_fidelity(events("c", "m", "eligible", "executed", "output"), {"c": spec})
    assert row.verdict == "defective" and "switched off" in row.evidence


def test_find_ablations_needs_same_setup_and_exactly_one_more_mechanism_off():
    base = {"system": "s", "options": {"k": 1}, "disable": [], "mechanisms": ["a", "b"]}
    conditions = {
        "base": base,
        "no-a": {**base, "disable": ["a"]},
        "no-ab": {**base, "disable": ["a", "b"]},
        "no-b-other-options": {**base, "options": {"k": 2}, "disable": ["b"]},
        "other-system": {**base, "system": "t", "disable": ["b"]},
    }
    found = audit.find_ablations(conditions)
    assert found[("base", "a")] == "no-a"
    assert ("base", "b") not in found
    assert found[("no-a", "b")] == "no-ab"  # an ablation of an ablation, one step at a time


def outcome_rows(condition: str, correct_fn, probes: int = 20, checkpoints: int = 3) -> list[dict]:
    return [
        {"condition": condition, "trajectory": "t", "probe_id": f"p{i:02d}", "checkpoint": cp, "repetition": 0,
         "correct": int(correct_fn(i, cp)), "answer": f"answer-{i}-{int(correct_fn(i, cp))}",
         "context": (f"t{i}",) if condition == "base" or correct_fn(i, cp) else ()}
        for i in range(probes) for cp in range(checkpoints)
    ]


def ablation_setup():
    base = {"system": "s", "options": {}, "disable": [], "mechanisms": ["lex", "graph"]}
    conditions = {"base": base, "no-graph": {**base, "disable": ["graph"]}}
    stream = (events("base", "graph", "eligible", "executed", "output", "selected", "in_prompt", times=5)
              + events("base", "lex", "eligible", "executed", "output", "selected", "in_prompt", times=5)
              + events("no-graph", "lex", "eligible", "executed", "output", "selected", "in_prompt", times=5))
    return conditions, stream


def test_an_ablation_pair_yields_a_paired_effect_and_contributing():
    conditions, stream = ablation_setup()
    outcomes = outcome_rows("base", lambda i, cp: i % 5 != 0) + outcome_rows("no-graph", lambda i, cp: i % 5 == 1)
    rows = {(r.condition, r.mechanism): r for r in audit.audit_fidelity(
        stream, conditions, outcomes=outcomes, rng=np.random.default_rng(0))}
    graph = rows[("base", "graph")]
    assert graph.ablation is not None and graph.ablation.ablation == "no-graph"
    effect = graph.ablation.comparison
    assert effect.difference.value == pytest.approx(0.8 - 0.2)
    assert effect.difference.interval[0] > 0
    assert effect.mcnemar.p_value < 1e-6
    assert effect.difference.n == 60 and effect.difference.clusters == 20
    # Credit differs where i % 5 is 2, 3 or 4 (12 probes x 3 checkpoints); context differs wherever the
    # ablated condition is wrong (16 probes x 3).
    assert (graph.ablation.pairs, graph.ablation.changed_answers, graph.ablation.changed_contexts) == (60, 36, 48)
    assert graph.verdict == "contributing" and graph.klass == "reaches the prompt"
    # 48 of 60 contexts changed (80%), 36 of 60 answers (60%), each interval above zero.
    assert graph.ablation.contexts_share.value == pytest.approx(0.8)
    assert graph.ablation.answers_share.value == pytest.approx(0.6)
    assert graph.ablation.contexts_share.interval[0] > 0 and graph.ablation.answers_share.clusters == 20
    assert graph.ablation.significant_accuracy
    assert rows[("no-graph", "graph")].status == "disabled"
    assert rows[("no-graph", "graph")].verdict == "disabled"
    assert rows[("base", "lex")].ablation is None


def test_an_ablation_without_effect_is_no_detected_effect():
    conditions, stream = ablation_setup()
    same = lambda i, cp: i % 2 == 0  # noqa: E731
    outcomes = outcome_rows("base", same) + outcome_rows("no-graph", same)
    rows = {(r.condition, r.mechanism): r for r in audit.audit_fidelity(stream, conditions, outcomes=outcomes)}
    graph = rows[("base", "graph")]
    assert graph.ablation.comparison.difference.value == 0.0
    assert graph.ablation.comparison.mcnemar.p_value == 1.0
    assert graph.verdict == "exercised_no_effect"
    assert not graph.ablation.significant_accuracy
    # Half the contexts changed, no answer did: changing contexts alone is not contributing.
    assert graph.ablation.contexts_share.value == pytest.approx(0.5)
    assert graph.ablation.answers_share.value == 0.0


def test_contributing_does_not_need_an_accuracy_effect():
    # Switching graph off changes every answer text, but as many pairs gain as lose credit.
    conditions, stream = ablation_setup()
    base = outcome_rows("base", lambda i, cp: i % 2 == 0)
    off = [{**o, "correct": 1 - o["correct"], "answer": o["answer"] + "-off", "context": ("other",)}
           for o in outcome_rows("no-graph", lambda i, cp: i % 2 == 0)]
    rows = {(r.condition, r.mechanism): r for r in audit.audit_fidelity(stream, conditions, outcomes=base + off)}
    graph = rows[("base", "graph")]
    assert graph.verdict == "contributing"
    assert graph.ablation.comparison.difference.value == 0.0 and not graph.ablation.significant_accuracy


def test_integrity_counts():
    obs = [
        {"condition": "a", "n_fragments": 3, "unattributed": 1, "proven_leak": 2, "truncated_tokens": 0,
         "within_limit": 1, "budget_exceeded": 0},
        {"condition": "a", "n_fragments": 2, "unattributed": 0, "proven_leak": 0, "truncated_tokens": 50,
         "within_limit": 1, "budget_exceeded": 1},
        {"condition": "a", "n_fragments": 0, "unattributed": 0, "proven_leak": 0, "truncated_tokens": 0,
         "within_limit": 0, "budget_exceeded": 0},
        {"condition": "b", "n_fragments": 0, "unattributed": 0, "proven_leak": 0, "truncated_tokens": 0,
         "within_limit": None, "budget_exceeded": 0},
    ]
    a, b = audit.integrity_counts(obs, {"a": 4})
    assert (a.observations, a.fragments, a.unattributed_fragments, a.unknown_source_fragments) == (3, 5, 1, 4)
    assert (a.leak_observations, a.leaked_fragments, a.truncated_prompts, a.budget_exceeded) == (1, 2, 2, 1)
    assert (b.truncated_prompts, b.unknown_source_fragments) == (0, 0)


def test_audit_run_combines_mechanisms_and_integrity():
    conditions, stream = ablation_setup()
    obs = [{**o, "n_fragments": 1, "unattributed": 0, "proven_leak": 0, "truncated_tokens": 0, "within_limit": 1,
            "budget_exceeded": 0}
           for o in outcome_rows("base", lambda i, cp: True) + outcome_rows("no-graph", lambda i, cp: False)]
    result = audit.audit_run(stream, conditions, obs, unknown_sources={})
    assert {m.mechanism for m in result.mechanisms} == {"lex", "graph"}
    assert [i.condition for i in result.integrity] == ["base", "no-graph"]
    assert result.total.observations == 120 and result.total.fragments == 120
    assert result.alpha == 0.05
