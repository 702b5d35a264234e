"""The memoised carried-turns check equals the plain rule (issue 20: ICE re-stemmed every turn per query)."""

from __future__ import annotations

import random

from lsrep.adapters.ice import evidence
from lsrep.systems.ice.text import sentences, stems

WORDS = ("garden hiking painting sunrise camping violin pottery adoption counselling marathon festival "
         "grandmother library recipe volunteering sculpture mountains river").split()


def plain_carried(summary_text, turn_ids, contents):
    summary = stems(summary_text)

    def carries(content):
        whole = stems(content)
        if not whole:
            return False
        if len(whole & summary) >= evidence.TURN_COVERAGE * len(whole):
            return True
        return any(len(own) >= evidence.MIN_SENTENCE_WORDS
                   and len(own & summary) >= evidence.SENTENCE_COVERAGE * len(own)
                   for own in (stems(s) for s in sentences(content)))

    return tuple(t for t in turn_ids if t in contents and carries(contents[t]))


def _text(rng: random.Random) -> str:
    return ". ".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(1, 3)))


def test_the_cached_check_equals_the_plain_rule_for_changing_contents_under_the_same_ids():
    rng = random.Random(7)
    for _ in range(400):
        ids = [f"t{i}" for i in range(rng.randint(1, 8))]
        contents = {t: _text(rng) for t in ids if rng.random() < 0.9}
        summary = _text(rng) + ". " + " ".join(rng.choice(list(contents.values()) or ["x"]).split()[:4])
        for _ in range(2):  # the second call is answered from the cache
            assert evidence.carried_turns(summary, ids, contents) == plain_carried(summary, ids, contents)
    # Same ids and summary, other contents: the cache must not answer for the old ones.
    summary = "hiking mountains river sunrise"
    assert evidence.carried_turns(summary, ["a"], {"a": "hiking mountains river sunrise"}) == ("a",)
    assert evidence.carried_turns(summary, ["a"], {"a": "violin pottery library recipe"}) == ()

