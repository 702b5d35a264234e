"""`context_format = "system"`: the block a system itself injects reaches the answerer and is counted.

EXIA SEED returns the context a Hermes host would inject (the `<memory-context>` fence with its
system note, then the tool JSON). Under the default `harness` format the answer prompt holds the
numbered fragment texts for every system alike; under `system` it holds that block verbatim and
the prompt's tokens count it. Either way the block's size is recorded per observation.
"""

from __future__ import annotations

import json

from lsrep.reports.load import load_run
from lsrep.systems.exia_seed.standin import StandInModel

from lsrep.cli import main
from lsrep.llm.server import OpenAITestServer
from lsrep.runner import run_campaign
from lsrep.store import RunStore

EXIA = '''
[[conditions]]
name = "exia-harness"
system = "exia-seed"
options = { phase = 2 }

[[conditions]]
name = "exia-system"
system = "exia-seed"
options = { phase = 2 }
context_format = "system"

[answerer]'''


def _campaign(example, answerer: str | None = None):
    text = example.read_text().replace("\n[answerer]", EXIA, 1)
    if answerer is not None:
        head, _, _ = text.partition("\n[answerer]")
        text = head + "\n" + answerer
    example.write_text(text)
    return example


def _rows(out, condition: str) -> list[dict]:
    return RunStore(out.store_path).rows(
        "select obs_id, probe_id, checkpoint, prompt_tokens, system_context_tokens, context_source, answer "
        "from observations where run_id = ? and condition = ? order by checkpoint, probe_id",
        [out.run_id, condition])


def test_the_system_block_is_counted_and_recorded(example):
    out = run_campaign(_campaign(example))
    harness, system = _rows(out, "exia-harness"), _rows(out, "exia-system")
    assert len(harness) == len(system) > 0
    with_block = [(h, s) for h, s in zip(harness, system, strict=True) if s["system_context_tokens"]]
    assert with_block, "EXIA returned no block on the quickstart"
    for h, s in with_block:
        assert h["system_context_tokens"] == s["system_context_tokens"]  # recorded under both formats
        assert (h["context_source"], s["context_source"]) == ("harness", "system")
        assert s["prompt_tokens"] >= s["system_context_tokens"]  # the whole block is in the prompt
        assert s["prompt_tokens"] > h["prompt_tokens"]  # fence, system note and tool JSON cost tokens
    # The offline span answerer reads the fragments either way (documented): same answers.
    assert [h["answer"] for h in harness] == [s["answer"] for s in system]
    # Systems that format no block of their own are unaffected and say so.
    for row in _rows(out, "vector-rag"):
        assert row["system_context_tokens"] is None and row["context_source"] == "harness"
    manifest = load_run(RunStore(out.store_path), out.run_id, "deterministic").manifest
    formats = {name: c["context_format"] for name, c in manifest["conditions"].items()}
    assert formats["exia-system"] == "system" and formats["exia-harness"] == "harness"


def _served(request) -> str:
    # EXIA's own consolidation calls get the stand-in's JSON; the answerer gets a fixed reply.
    if request.messages[0]["content"].startswith("You answer"):
        return "I don't know"
    return StandInModel().complete(request.messages)


def test_the_model_receives_the_fence_only_under_the_system_format(example, monkeypatch):
    monkeypatch.setenv("LSREP_CTX_KEY", "sk-ctx")
    with OpenAITestServer(reply=_served) as server:
        out = run_campaign(_campaign(example, f'''[answerer]
kind = "llm"
context_window = 32768
[answerer.endpoint]
base_url = "{server.base_url}"
model = "served"
api_key_env = "LSREP_CTX_KEY"'''))
        prompts = [r.last_user for r in server.requests if r.messages[0]["content"].startswith("You answer")]
    fenced = [p for p in prompts if "<memory-context>" in p]
    assert fenced and all("[System note:" in p for p in fenced)
    system = [r for r in _rows(out, "exia-system") if r["system_context_tokens"]]
    assert len(fenced) == len(system)  # one fenced prompt per EXIA-system observation with a block, no more
    for p in fenced:
        assert "\n[1] " not in p  # the block replaces the harness's numbered list
    calls = RunStore(out.store_path).rows(
        "select count(*) n from llm_calls where run_id = ? and purpose = 'answer'", [out.run_id])[0]["n"]
    assert calls >= len(prompts) > len(fenced)
    assert json.dumps(prompts).count("sk-ctx") == 0



def test_the_report_shows_the_block_size_beside_the_counted_tokens(example, tmp_path):
    out = run_campaign(_campaign(example))
    md = tmp_path / "r.md"
    assert main(["report", out.run_id, "--store", str(out.store_path), "--format", "md", "-o", str(md)]) == 0
    lines = md.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if "System block tokens" in line)
    cells = [c.strip() for c in lines[header].split("|")]
    col = next(i for i, c in enumerate(cells) if c.startswith("System block tokens / obs."))
    body = []
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        body.append([c.strip() for c in line.split("|")])
    rows = {r[1]: r[col] for r in body}
    assert rows["exia-system"].split()[0] == rows["exia-harness"].split()[0] != "—"
    assert rows["vector-rag"] == "—"  # no block of its own: nothing is claimed
