"""Judge v3: negation agrees over the words answer and reference share, not anywhere in the answer."""

from __future__ import annotations

from lsrep.judge.normalize import gives

REF = "Listen to other people's shows to learn what listeners enjoy"


def test_a_negation_away_from_the_shared_words_does_not_negate_them():
    assert gives("Make sure you listen to other peoples shows first so you learn what your listeners enjoy. "
                 "That way your episodes don't flop", REF)
    assert gives("He waters them weekly and keeps them in the sun. He repots them yearly, it isn't hard",
                 "water them weekly, keep them in the sun, repot them yearly")


def test_a_negation_of_the_shared_words_still_disagrees():
    assert not gives("Never listen to other people's shows; learn what listeners enjoy by yourself", REF)
    assert not gives("Don't water them weekly, don't keep them in the sun, and repot them yearly",
                     "water them weekly, keep them in the sun, repot them yearly")
    assert not gives("She was not happy with the new studio space at all", "happy with the new studio space")
    assert not gives("She was really happy with the new studio space", "not happy with the new studio space")


def test_coverage_needs_the_names_inside_the_reference():
    ref = "naming a knitted toy cat Biscuit"
    assert not gives("Ana used to have a cat with that name. The name helps her remember the toy she knitted", ref)
    assert gives("She named her knitted toy cat Biscuit after him", ref)
