"""Context-window policies: refuse or truncate, never silently."""

from __future__ import annotations

from datetime import UTC, datetime

from lsrep.answer.prompt import build_messages, prompt_tokens
from lsrep.contract import Fragment
from lsrep.llm.client import LLMClient
from lsrep.llm.context import estimate_prompt_tokens, fit_blocks, truncate_messages
from lsrep.text import estimate_tokens


def test_estimate_sums_message_contents():
    messages = [{"role": "system", "content": "abcd"}, {"role": "user", "content": "abcde"}]
    assert estimate_prompt_tokens(messages) == 1 + 2


def test_fail_policy_refuses_without_a_request(server, spec_for):
    client = LLMClient(spec_for(server, context_window=60, max_tokens=10, overflow="fail"))
    big = [{"role": "user", "content": "x" * 4 * 51}]  # 51 tokens > 60 - 10
    text, rec = client.complete(big)
    assert text is None
    assert rec.status == "failed" and rec.reason == "prompt_over_context_window"
    assert rec.attempts == 0 and rec.usage.estimated_prompt_tokens == 51
    assert server.request_count == 0
    fits = [{"role": "user", "content": "x" * 4 * 50}]  # exactly the budget
    assert client.complete(fits)[1].ok


def test_truncate_oldest_drops_history_messages_and_records_it(server, spec_for):
    client = LLMClient(spec_for(server, context_window=35, max_tokens=10,
                                overflow="truncate_oldest"))
    messages = [
        {"role": "system", "content": "s" * 8},        # 2 tokens, kept
        {"role": "user", "content": "a" * 40},         # 10, oldest: dropped
        {"role": "assistant", "content": "b" * 40},    # 10, dropped
        {"role": "user", "content": "c" * 40},         # 10, kept
        {"role": "user", "content": "final" * 4},      # 5, kept (the question)
    ]
    text, rec = client.complete(messages)
    assert rec.ok and rec.dropped_messages == 2 and rec.truncated_tokens == 20
    sent = server.requests[0].messages
    assert [m["content"][0] for m in sent] == ["s", "c", "f"]
    assert rec.usage.estimated_prompt_tokens == 17


def test_truncate_that_cannot_fit_fails(server, spec_for):
    client = LLMClient(spec_for(server, context_window=20, max_tokens=10,
                                overflow="truncate_oldest"))
    text, rec = client.complete([{"role": "user", "content": "q" * 80}])
    assert text is None and rec.reason == "prompt_over_context_window"
    assert server.request_count == 0


def test_fit_blocks_drops_oldest_first_and_counts_tokens():
    blocks = ["a" * 40, "b" * 40, "c" * 40, "d" * 40]  # 10 tokens each

    def render(kept):
        return [{"role": "user", "content": "|".join(kept)}]

    fit = fit_blocks(blocks, render, budget=21)  # c|d = 81 chars = 21 tokens
    assert fit.kept == ("c" * 40, "d" * 40)
    assert fit.dropped_blocks == 2 and fit.dropped_tokens == 20
    assert fit.prompt_tokens == 21 and fit.fits
    whole = fit_blocks(blocks, render, budget=None)
    assert whole.dropped_blocks == 0 and whole.kept == tuple(blocks)
    nothing = fit_blocks(blocks, render, budget=0)
    assert nothing.kept == () and nothing.dropped_blocks == 4 and nothing.fits


def test_truncate_messages_keeps_system_and_last():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "x" * 400}]
    fit = truncate_messages(messages, budget=5)
    assert fit.dropped_messages == 0 and not fit.fits


def _answerer(server, monkeypatch, **answerer):
    from lsrep.answer import make_answerer
    from lsrep.protocol.campaign import AnswererSpec, EndpointRef

    monkeypatch.setenv("LSREP_CTX_KEY", "sk-ctx")
    endpoint = EndpointRef(base_url=server.base_url, model="m", api_key_env="LSREP_CTX_KEY", max_retries=0,
                           max_tokens=16, context_window=100_000)
    return make_answerer(AnswererSpec(kind="llm", endpoint=endpoint, **answerer))


NOW = datetime(2026, 3, 2, tzinfo=UTC)


def test_answerer_truncates_oldest_context_blocks(server, monkeypatch):
    server.reply = "SQLite"
    # Fragments in relevance order; their source turns give their age (t9 newest).
    fragments = [Fragment(text=f"turn {i}: " + "filler " * 20, source_turn_ids=(f"t{i}",)) for i in (3, 9, 0, 6)]
    index = {f"t{i}": i for i in range(10)}
    full = prompt_tokens(build_messages("Which db?", NOW, fragments))
    answerer = _answerer(server, monkeypatch, context_window=full - 30, overflow="truncate_oldest")
    outcome = answerer.answer("Which db?", NOW, fragments, index)
    assert outcome.text == "SQLite" and outcome.error is None
    kept = [f.source_turn_ids[0] for f in outcome.fragments_used]
    assert kept == ["t3", "t9", "t6"]  # the oldest (t0) went; relevance order kept
    assert outcome.dropped_tokens == estimate_tokens(fragments[2].text)
    assert "turn 0:" not in server.requests[0].last_user and "turn 9:" in server.requests[0].last_user
    assert outcome.prompt_tokens == full and not outcome.within_limit


def test_answerer_fail_policy_reports_overflow(server, monkeypatch):
    answerer = _answerer(server, monkeypatch, context_window=64, overflow="fail")
    outcome = answerer.answer("q?", NOW, [Fragment(text="x" * 1000, source_turn_ids=("t1",))])
    assert outcome.text is None and "prompt_over_context_window" in outcome.error
    assert server.request_count == 0
