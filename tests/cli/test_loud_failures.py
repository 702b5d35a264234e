"""Each failure mode exits non-zero with a one-line reason, through the CLI."""

from __future__ import annotations

import json

from lsrep.store import RunStore
from tests.cli.conftest import add_condition, with_decay


def _store(campaign):
    return campaign.parent.parent / "runs" / "lsrep.sqlite"


def test_a_unit_whose_adapter_raises_exits_1_with_where_and_traceback(example, cli):
    add_condition(example, '[[conditions]]\nname = "crash"\nsystem = "tests.core.adapters_for_tests:IngestCrashAdapter"\n')
    code, out, err = cli("run", example, "--quiet", "--conditions", "null,crash")
    assert code == 1, err
    lines = err.splitlines()
    assert lines[0] == "lsrep: 1 unit(s) failed, 1 failure record(s), 0 judgement(s) failed"
    assert "  crash/maya-journal/r0, ingest:t0010: ValueError: cannot parse turn" in lines
    assert lines[-1].startswith("lsrep: error: the run recorded failures")
    assert "1 failed" in out
    store = RunStore(_store(example))
    (row,) = store.rows("select phase, traceback from failures")
    assert row["traceback"].startswith("Traceback (most recent call last):")
    assert 'raise ValueError("cannot parse turn")' in row["traceback"]


def test_allow_failures_exits_0_but_still_prints(example, cli):
    add_condition(example, '[[conditions]]\nname = "crash"\nsystem = "tests.core.adapters_for_tests:IngestCrashAdapter"\n')
    code, _, err = cli("run", example, "--quiet", "--conditions", "crash", "--allow-failures")
    assert code == 0
    assert err.startswith("lsrep: 1 unit(s) failed") and "--allow-failures given" in err


def test_maintenance_raising_at_every_session_end_exits_1(example, cli):
    add_condition(example, '[[conditions]]\nname = "decay"\nsystem = "tests.cli.failing_adapters:DecayRaisesAdapter"\n')
    with_decay(example)
    code, out, err = cli("run", example, "--quiet", "--conditions", "null,decay")
    assert code == 1, err
    first = err.splitlines()[0]
    assert first == ("lsrep: 0 unit(s) failed, 6 failure record(s), 6 maintenance operation(s) raised, "
                     "0 judgement(s) failed")
    assert "decay/maya-journal/r0, maintenance:decay: OSError: disk full during decay" in err
    assert "... 1 more in the failures and judgements tables" in err  # 5 shown of 6


def test_query_errors_are_located_by_checkpoint_and_probe(example, cli):
    add_condition(example, '[[conditions]]\nname = "q"\nsystem = "tests.cli.failing_adapters:QueryRaisesAdapter"\n')
    code, _, err = cli("run", example, "--quiet", "--conditions", "q", "--limit", "1")
    assert code == 1
    located = [line for line in err.splitlines() if line.startswith("  q/maya-journal/r0, checkpoint ")]
    assert located and all(", probe " in line and "query: RuntimeError: index corrupted" in line
                           for line in located)


def test_clean_run_exits_0_and_prints_no_failures(example, cli):
    code, _, err = cli("run", example, "--quiet")
    assert code == 0
    assert "failed" not in err


def test_bad_override_is_one_line_exit_2(example, cli):
    code, _, err = cli("run", example, "-S", "conditions.nope.options.top_k=3")
    assert code == 2
    assert err.strip() == ("lsrep: error: -S 'conditions.nope.options.top_k=3': no condition 'nope' in the "
                           "campaign (known: null, full-context, vector-rag)")
    code, _, err = cli("run", example, "-S", "conditions.vector-rag.options.top_k=zero")
    assert code == 2 and "bad options for 'vector-rag': top_k" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("run", example, "-S", "answerer.windw=3")
    assert code == 2 and "bad campaign (after the -S overrides): answerer.windw: unknown field" in err
    assert not _store(example).exists()  # nothing written


def test_unknown_condition_filter_is_one_line_exit_2(example, cli):
    code, _, err = cli("run", example, "--conditions", "null,thalia")
    assert code == 2 and err.strip() == ("lsrep: error: --conditions: no condition named 'thalia' "
                                         "(the campaign has: null, full-context, vector-rag)")


def test_store_rows_record_json(example, cli):
    # The failures table's traceback column exists in a fresh store (migration applied).
    cli("run", example, "--quiet")
    cols = {c.name for c in RunStore(_store(example)).db["failures"].columns}
    assert "traceback" in cols
    assert json.loads(json.dumps(sorted(cols)))


def test_a_model_campaign_without_its_key_stops_before_writing(example, cli, monkeypatch):
    monkeypatch.delenv("LSREP_ABSENT_KEY", raising=False)
    example.write_text(example.read_text().replace('[answerer]\nkind = "extractive"', '''[answerer]
kind = "llm"
[answerer.endpoint]
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key_env = "LSREP_ABSENT_KEY"
[answerer.x]'''.replace("\n[answerer.x]", "")))
    code, out, err = cli("run", example, "--quiet")
    assert code == 2 and out == ""
    assert err.strip() == (f"lsrep: error: {example}: answerer.endpoint.api_key_env: environment variable "
                           "LSREP_ABSENT_KEY is not set; export it (keys are read from the environment, never "
                           "from the file) or name the variable that holds the key")
    assert not _store(example).exists()  # checked before the store is even created


def test_a_campaign_judge_that_cannot_label_fails_the_run(example, cli, monkeypatch):
    from lsrep.llm.server import OpenAITestServer

    monkeypatch.setenv("LSREP_JUDGE_KEY", "sk-test")
    with OpenAITestServer(reply="no JSON here") as server:
        example.write_text(example.read_text() + f'''
[[judges]]
name = "ev"
kind = "evolving"
[judges.endpoint]
base_url = "{server.base_url}"
model = "m"
api_key_env = "LSREP_JUDGE_KEY"
max_retries = 0
''')
        code, out, err = cli("run", example, "--quiet", "--conditions", "full-context", "--limit", "1")
    assert code == 1
    n = RunStore(_store(example)).rows("select count(*) n from judgements where judge = 'ev' and status = 'failed'")
    assert n[0]["n"] > 0
    assert err.splitlines()[0] == f"lsrep: 0 unit(s) failed, 0 failure record(s), {n[0]['n']} judgement(s) failed"
    assert "judge ev: unparseable_judge_output" in err
    assert "model calls: " in out and " from the cache" in out


def test_a_bare_ctrl_c_says_interrupted_and_exits_130(monkeypatch, capsys):
    """Ctrl-C before a run starts (an empty KeyboardInterrupt): one line that says so, not 'lsrep: '."""
    from lsrep import cli as cli_module

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli_module.COMMANDS, "validate", interrupted)
    assert cli_module.main(["validate", "campaign.toml"]) == 130
    assert capsys.readouterr().err == "lsrep: interrupted\n"
