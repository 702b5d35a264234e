"""Full-context's recall counts the dropped turns from its running total: the same figures as
summing the whole dropped history at every query (the rule it replaced)."""

from __future__ import annotations

from lsrep.systems.full_context import FullContextMemory, estimate


def _whole_history_rule(memory: FullContextMemory) -> tuple[list[str], int, int]:
    """Newest lines that fit the limit; the dropped ones counted by summing every older line."""
    kept, used = [], 0
    for line in reversed(memory.lines):
        if used + line.tokens > memory.context_limit:
            break
        kept.append(line)
        used += line.tokens
    kept.reverse()
    dropped = memory.lines[: len(memory.lines) - len(kept)]
    return [x.turn_id for x in kept], len(dropped), sum(estimate(d.text) for d in dropped)


def test_dropped_counts_equal_the_whole_history_sum_as_history_grows():
    memory = FullContextMemory(context_limit=120)
    seen_drop = False
    for i in range(80):
        memory.add(f"t{i}", f"s{i // 5}", "word " * (i % 13 + 1))
        memory.add(f"t{i}", f"s{i // 5}", "a repeated id is not added again")
        recall = memory.recall()
        got = ([x.turn_id for x in recall.lines], recall.dropped_turns, recall.dropped_tokens)
        if sum(x.tokens for x in memory.lines) > memory.context_limit:
            assert got == _whole_history_rule(memory)
            seen_drop = seen_drop or recall.dropped_tokens > 0
        else:
            assert got == ([f"t{k}" for k in range(i + 1)], 0, 0)
    assert seen_drop
    memory.clear()
    memory.add("u0", "s0", "after a clear")
    assert memory.recall().dropped_turns == 0 and memory.recall().dropped_tokens == 0
