"""`lsrep adapters check` names a shared root cause once and shows its traceback on request."""

from __future__ import annotations

ADAPTER = "tests.cli.failing_adapters:IngestAlwaysRaisesAdapter"


def test_one_root_cause_is_named_once_with_its_checks(cli):
    code, out, _ = cli("adapters", "check", ADAPTER)
    assert code == 1
    lines = out.splitlines()
    (cause,) = [line for line in lines if line.startswith("root cause of ")]
    n = int(cause.split()[3])
    assert n >= 5 and cause.endswith("raised ValueError: tokenizer missing")
    first = cause.split("(", 1)[1].split(",")[0]
    same = [line for line in lines if line.split()[2:5] == ["same", "exception", "as"]]
    assert len(same) == n - 1 and all(line.endswith(f"as {first}") for line in same)
    assert "(--traceback shows where each exception was raised)" in lines
    assert "Traceback" not in out


def test_traceback_shows_where_the_adapter_raised(cli):
    code, out, _ = cli("adapters", "check", ADAPTER, "--traceback")
    assert code == 1
    assert "Traceback (most recent call last):" in out
    assert 'raise ValueError("tokenizer missing")' in out and "failing_adapters.py" in out
