"""No result changes: the golden campaigns record what they recorded when the digests were stored.

Every optimisation must leave this green. A deliberate change of results updates the digests with
`.venv/bin/python -m tests.core.golden --update` (see tests/core/golden.py), committed with the change
that explains it.
"""

from __future__ import annotations

import json

from tests.core.golden import GOLDEN, differences, run_golden


def test_golden_campaigns_record_what_they_recorded():
    expected = json.loads(GOLDEN.read_text())
    actual = run_golden()
    diff = differences(expected, actual)
    assert not diff, ("the golden campaigns' rows changed (if intended, run "
                      "`.venv/bin/python -m tests.core.golden --update`):\n" + "\n".join(diff))


def test_golden_covers_every_built_in_system_and_the_llm_path():
    expected = json.loads(GOLDEN.read_text())
    systems = {"null", "full-context", "vector-rag", "thalia", "ice", "exia-seed"}
    assert systems <= set(expected["persistent"]) and systems <= set(expected["isolated"])
    # Nothing vacuous: each system answered probes, and the LLM campaign reached the model.
    for camp in ("persistent", "isolated"):
        for system in systems:
            assert expected[camp][system]["observations"]["rows"] > 0
            assert expected[camp][system]["checkpoints"]["rows"] > 0
    assert expected["llm"]["server"]["requests"]["rows"] > 0
    assert all(expected["llm"][c]["llm_calls"]["rows"] > 0 for c in ("vector-rag", "ice"))
