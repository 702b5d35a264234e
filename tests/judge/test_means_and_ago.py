"""Judge v3: a reference naming a means ("by dancing") and an "N ago" reference given in anchored form."""

from __future__ import annotations

from lsrep.judge.normalize import gives


def test_a_means_reference_is_given_without_its_by():
    assert gives("Dance is pretty much our go-to for stress relief", "by dancing")
    assert gives("dancing", "by dancing")
    assert not gives("by singing", "by dancing")
    assert not gives("by walking to work", "by cycling to work")


def test_an_ago_reference_is_given_by_the_same_length_before_a_day():
    assert gives("a few years before 8 February 2023", "A few years ago")
    assert gives("3 years before 14 May 2024", "three years ago")
    assert gives("three years ago", "three years ago")
    assert not gives("two years before 8 February 2023", "A few years ago")
    assert not gives("3 months before 14 May 2024", "three years ago")
    assert not gives("four years before 14 May 2024", "three years ago")


def test_an_ago_reference_is_not_given_by_word_overlap():
    assert not gives("three years before he moved to Oslo", "three years ago")
    assert not gives("It took three years to finish", "three years ago")
