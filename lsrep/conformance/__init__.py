"""A conformance suite any adapter can run: small checks of the contract, each with a verdict and a reason.

`run_conformance("vector-rag")` (or `lsrep adapters check NAME`) builds the adapter as the engine
does — `validate_condition` and `build_adapter`, a private state directory, the hashing embedder,
no model — replays a small synthetic conversation into fresh instances and checks what the harness
relies on but cannot enforce by construction.

A check with nothing to observe (the system recalled nothing it could judge) is `skipped` with the
reason, never passed. `info` reports a fact that is not a defect. Only `failed` fails the suite.
"""

from lsrep.conformance import (  # noqa: F401 - registers the checks, in order
    checks_contract,
    checks_integrity,
    checks_state,
)
from lsrep.conformance.driving import (
    CHECKS,
    Check,
    CheckResult,
    ConformanceReport,
    ContractViolation,
    Instance,
    Replay,
    Subject,
    carries_date,
    check,
    replay_scenario,
)
from lsrep.conformance.running import run_checks, run_conformance, select_checks
from lsrep.conformance.scenario import SCENARIO, pressure

__all__ = ["CHECKS", "SCENARIO", "Check", "CheckResult", "ConformanceReport", "ContractViolation", "Instance",
           "Replay", "Subject", "carries_date", "check", "pressure", "replay_scenario", "run_checks",
           "run_conformance", "select_checks"]
