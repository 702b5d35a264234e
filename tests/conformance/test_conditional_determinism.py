"""`deterministic = "when-model-is"`: deterministic exactly when the system's models are."""

from __future__ import annotations

import pytest

from lsrep.conformance import run_conformance
from lsrep.contract import WHEN_MODEL_IS, expects_determinism
from lsrep.errors import LsrepError
from lsrep.executors.local import InProcessExecutor
from lsrep.protocol.campaign import load_campaign
from lsrep.runner import models_deterministic, run_campaign, validate_campaign
from lsrep.store import RunStore

HERE = "tests.conformance.determinism_adapters"


def test_the_rule():
    assert expects_determinism(WHEN_MODEL_IS, models_deterministic=True)
    assert not expects_determinism(WHEN_MODEL_IS, models_deterministic=False)
    assert expects_determinism(True, models_deterministic=False)
    assert not expects_determinism(False, models_deterministic=True)
    with pytest.raises(ValueError, match="sometimes"):
        expects_determinism("sometimes", models_deterministic=True)


def test_conformance_holds_a_conditional_system_to_determinism_with_its_offline_models():
    ok = run_conformance(f"{HERE}:ConditionalReference", checks=["determinism"])
    assert ok.results[0].status == "passed"
    assert "when its model is" in ok.results[0].reason
    noisy = run_conformance(f"{HERE}:ConditionalNoisy", checks=["determinism"])
    assert noisy.results[0].status == "failed", noisy.results[0].reason


def _with(example, system: str, answerer: str = "") -> None:
    text = example.read_text()
    head, _, rest = text.partition("[[conditions]]")
    tail = "[answerer]" + rest.split("[answerer]", 1)[1]
    example.write_text(head + f'[[conditions]]\nname = "c"\nsystem = "{system}"\n\n' + tail + answerer)


def test_a_campaign_records_what_it_expects(example):
    _with(example, f"{HERE}:ConditionalReference")
    out = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    cond = RunStore(out.store_path).run(out.run_id)["manifest"]["conditions"]["c"]
    assert cond["deterministic"] == WHEN_MODEL_IS
    assert cond["models_deterministic"] is True and cond["deterministic_expected"] is True


def test_a_sampled_answer_model_makes_it_nondeterministic(example):
    _with(example, f"{HERE}:ConditionalReference")
    campaign = load_campaign(example, overrides=(
        'answerer.kind=llm', 'answerer.endpoint={"base_url": "http://127.0.0.1:9/v1", "model": "m", '
        '"temperature": 0.7}'))
    cond = campaign.spec.conditions[0]
    assert not models_deterministic(campaign.spec, cond)
    described = validate_campaign(campaign)["c"]
    assert described["deterministic_expected"] is False


def test_an_unknown_value_is_refused_naming_the_condition(example):
    _with(example, f"{HERE}:MaybeDeterministic")
    with pytest.raises(LsrepError, match=r"condition 'c'.*'sometimes'"):
        run_campaign(example, executor=InProcessExecutor(), fresh=True)
