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
