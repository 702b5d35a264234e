"""The context audit judges a context once per (fragment keys, prefix) and the judgement it reuses
equals a fresh one; a context that differs in any fragment's text, citations, kind or `derived`
flag, or in the prefix, is judged again."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import lsrep.context_audit as context_audit
from lsrep.context_audit import audit_context, fragment_key
from lsrep.contract import Fragment
from lsrep.provenance import TurnIndex
from lsrep.references import Expected

TURNS = [
    "I moved to Lisbon in May and started at the new office near the river.",
    "Thanks! Sounds great, what is the office like?",
    "It has a long terrace over the river and a small library on the third floor.",
    "My sister Ana is visiting Porto next week for the jazz festival.",
    "Ana plays the saxophone in a quartet that tours every summer.",
]
TURN_INDEX = {f"t{i}": i for i in range(len(TURNS))}


def _context(**change):
    frags = [dict(text=TURNS[0], source_turn_ids=("t0",)), dict(text=TURNS[3], source_turn_ids=("t3", "t4")),
             dict(text="Ana tours with a quartet.", source_turn_ids=("t4",), kind="summary")]
    for i, fields in change.items():
        frags[int(i[1:])] = {**frags[int(i[1:])], **fields}
    return [Fragment(**f) for f in frags]


def _audit(index, frags, prefix=4):
    return audit_context(frags, prefix, Expected(ask=True), index, TURN_INDEX)


def test_fragment_key_names_what_a_judgement_depends_on():
    frag = Fragment(text="x y", source_turn_ids=("t1",), kind="fact", derived=True)
    assert fragment_key(frag) == ("x y", ("t1",), "fact", True)
    # A fragment-like object without the flag is not derived (as `is_derived` reads it).
    assert fragment_key(SimpleNamespace(text="x y", source_turn_ids=(), kind="turn")) == ("x y", (), "turn", False)


def test_the_judgement_takes_one_key_per_fragment():
    frags = _context()
    index = TurnIndex(TURNS)
    with pytest.raises(ValueError):
        context_audit._judge_fragments(frags, 4, index, TURN_INDEX, [fragment_key(f) for f in frags[:2]])


def test_an_equal_context_is_judged_once_and_as_a_fresh_index_judges_it(monkeypatch):
    calls = []
    plain = context_audit._judge_fragments

    def counting(*args):
        calls.append(len(args[0]))
        return plain(*args)

    monkeypatch.setattr(context_audit, "_judge_fragments", counting)
    index = TurnIndex(TURNS)
    first = _audit(index, _context())
    again = _audit(index, _context())  # equal fragments, new objects
    assert calls == [3]
    assert again.verdicts is first.verdicts and again.row == first.row
    fresh = _audit(TurnIndex(TURNS), _context())
    assert fresh.row == first.row and fresh.verdicts == first.verdicts and fresh.carried == first.carried
    assert fresh.citation_leaks == first.citation_leaks
    variants = [_context(f1={"source_turn_ids": ("t3",)}), _context(f2={"kind": "turn"}),
                _context(f0={"derived": True}), _context(f0={"text": TURNS[2]})]
    for frags in variants:
        before = len(calls)
        got = _audit(index, frags)
        assert len(calls) == before + 1  # judged again
        want = _audit(TurnIndex(TURNS), frags)
        assert got.row == want.row and got.verdicts == want.verdicts and got.carried == want.carried
    before = len(calls)
    _audit(index, _context(), prefix=2)
    assert len(calls) == before + 1  # another prefix: judged again
    _audit(index, _context(), prefix=2)
    assert len(calls) == before + 1
    assert _audit(index, _context(), prefix=2).row == _audit(TurnIndex(TURNS), _context(), prefix=2).row
