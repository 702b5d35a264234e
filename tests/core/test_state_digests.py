"""A state digest (a pass over the whole state) is taken only where a check reads it."""

from __future__ import annotations

from lsrep.integrity import nondeterministic_checkpoints
from lsrep.runner import run_campaign
from lsrep.store import RunStore


def _digests(example, text: str) -> tuple[RunStore, str, list]:
    example.write_text(text)
    out = run_campaign(example, fresh=True, conditions=["vector-rag"])
    store = RunStore(out.store_path)
    return store, out.run_id, [r["state_digest"] for r in store.rows(
        "select state_digest from checkpoints where run_id = ? order by unit_id, ordinal", [out.run_id])]


def test_state_digests_only_for_isolation_and_repetitions(example):
    original = example.read_text()
    # Persistent access, one repetition: nothing compares states, so none is taken.
    _, _, persistent = _digests(example, original)
    assert persistent and all(d is None for d in persistent)
    # Isolated access: the rollback check needs the digest before and after the probes.
    _, _, isolated = _digests(example, original.replace("session-end.toml", "session-end-isolated.toml"))
    assert isolated and all(d is not None for d in isolated)
    # Repetitions: the determinism check compares the repetitions' digests, and finds them equal.
    store, run_id, repeated = _digests(example, original.replace("repetitions = 1", "repetitions = 2"))
    assert len(repeated) == 2 * len(persistent) and all(d is not None for d in repeated)
    assert nondeterministic_checkpoints(store, run_id) == {}


def test_a_longmemeval_diagnostic_takes_no_state_digest(tmp_path):
    """One repetition per question, persistent access: nothing compares states (issue #20), so no
    checkpoint row holds one (a digest taken is always stored)."""
    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.executors.local import InProcessExecutor
    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=3, sessions_per_question=2, seed=3)
    out = run_longmemeval(spec_from_systems(["vector-rag", "full-context"], data, store=tmp_path / "s.sqlite"),
                          executor=InProcessExecutor(), fresh=True)
    assert out.units_run == 6
    digests = [r["state_digest"] for r in RunStore(tmp_path / "s.sqlite").rows("select state_digest from checkpoints")]
    assert len(digests) == 6 and all(d is None for d in digests)
