"""The rules consolidator's question filter (`_asks_only`, `_fact`'s short-question drop) and
what a kept fact carries (`_fact`: text, event date, prospective type and due date, section,
privacy, concepts, attributes), exactly.

Killing tests for scripts/mutation/exia-rules2.toml (rules.py 81-84, 125-149). The sentences are
LoCoMo turns (conv-26, Caroline and Melanie) copied here, so the tests run without the shared
data, and a few built to sit on one boundary each.
"""

from __future__ import annotations

import json

import pytest
from lsrep.systems.exia_seed.prompts import Source, consolidation_messages
from lsrep.systems.exia_seed.rules import RulesModel, _asks_only

SAID = "2023-05-08"


def reply(texts: list[str], *, day: str = SAID, vocabulary=(), min_words: int = 4, note: bool = False) -> list[dict]:
    """The rules model's facts for one source per text (`[Caroline] text` unless a note)."""
    sources = [Source(f"registre:n{i}" if note else f"brut:b1:{i}", t if note else f"User: [Caroline] {t}",
                      False, day) for i, t in enumerate(texts, 1)]
    messages = consolidation_messages("en", sources, [], list(vocabulary))
    return json.loads(RulesModel(min_words=min_words).complete(messages))["faits"]


def one(text: str, **kw) -> dict | None:
    facts = reply([text], **kw)
    assert len(facts) <= 1
    return facts[0] if facts else None


# -- _asks_only ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("sentence", "asks"), [
    ("What's up with you?", True),                                 # one clause, a question
    ("How was the parade?  ", True),                               # trailing blanks do not hide the mark
    ("Got married last week - how about you?", False),             # a statement before the dash
    ("Really? - how about you?", True),                            # only questions before the dash
    ("Was it fun? \u2013 did you win \u2014 how about you?", False),  # the middle clause states
    ("Did you win \u2013 was it fun? \u2014 how about you?", False),  # the first clause states
    ("I went to the LGBTQ support group yesterday.", False),      # no question mark
    ("What? Really.", False),
])
def test_asks_only(sentence, asks):
    assert _asks_only(sentence) is asks


# -- the short-question drop ------------------------------------------------------------------

def test_a_question_is_kept_only_from_min_words_content_words():
    # 4 content words (kids, enjoy, camping, trip): kept, although `_keeps` would need more.
    kept = one("Did the kids enjoy the camping trip?")
    assert kept is not None and kept["fait"] == "Caroline: Did the kids enjoy the camping trip?"
    # 7 content words: kept, as a long question carries its turn's topic
    assert one("What kind of support group meetings do you run for transgender youth?")["fait"] == (
        "Caroline: What kind of support group meetings do you run for transgender youth?")
    # 3 content words (kind, paintings, like): dropped, as 2 and 0.
    assert one("What kind of paintings do you like?") is None
    assert one("What do you like to paint?") is None
    assert one("How are you?") is None
    # the threshold is min_words: 3 content words are enough at min_words 3, 4 are not at 5
    assert one("What kind of paintings do you like?", min_words=3) is not None
    assert one("Did the kids enjoy the camping trip?", min_words=5) is None


def test_a_short_question_naming_someone_is_still_dropped():
    # `_keeps` would keep it (a name beside a counted word); a question needs min_words.
    assert RulesModel()._keeps("Did Oscar like the carrots?", False, {"Caroline"}) is True
    assert one("Did Oscar like the carrots?") is None


def test_a_statement_goes_through_keeps():
    assert one("I'm off to go swimming with the kids.")["fait"] == "Caroline: I'm off to go swimming with the kids."
    assert one("That's really cool.") is None  # `_keeps` drops it, though it is no question


def test_a_statement_before_a_dash_is_no_question():
    # "Got married - how about you?": `_keeps` decides (a number keeps it), not the question count
    fact = one("Ran a 5K - you?")
    assert fact is not None and fact["fait"] == "Caroline: Ran a 5K - you?"


# -- what a kept fact carries -------------------------------------------------------------------

def test_a_plain_locomo_fact_whole():
    fact = one("I went to a LGBTQ support group yesterday and it was so powerful.")
    assert fact == {
        "fait": "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        "sources": ["brut:b1:1"], "noeud": "Caroline", "section": "episodic", "type": "fait",
        "date_evenement": None, "echeance": None, "confidentialite": "normal", "concepts": [],
        "alias_de": None,
    }


def test_a_note_is_not_prefixed():
    fact = one("Melanie ran a charity race for mental health on May 20.", note=True)
    assert fact["fait"] == "Melanie ran a charity race for mental health on May 20."
    assert fact["sources"] == ["registre:n1"]


def test_event_dates_and_prospective_type():
    past = one("Melanie ran a charity race for mental health on May 1.")
    assert (past["type"], past["date_evenement"], past["echeance"]) == ("fait", "2023-05-01", None)
    same_day = one("Melanie ran a charity race for mental health on May 8.")
    assert (same_day["type"], same_day["date_evenement"], same_day["echeance"]) == ("fait", "2023-05-08", None)
    later = one("Melanie runs a charity race for mental health on May 20.")
    assert (later["type"], later["date_evenement"], later["echeance"]) == ("prospective", "2023-05-20", "2023-05-20")
    # a future word without a date: prospective, nothing to fall due
    plan = one("I'm going to a pride parade with my friends.")
    assert (plan["type"], plan["date_evenement"], plan["echeance"]) == ("prospective", None, None)
    # a future word and a past date: prospective, due on that date
    both = one("Melanie will send the photos of the May 1 race.")
    assert (both["type"], both["date_evenement"], both["echeance"]) == ("prospective", "2023-05-01", "2023-05-01")
    # the first date of several is the event's and the due date
    two = one("The adoption meeting moved from May 20 to May 27.")
    assert (two["type"], two["date_evenement"], two["echeance"]) == ("prospective", "2023-05-20", "2023-05-20")
    two_past = one("The adoption meeting moved from May 1 to May 3.")
    assert (two_past["type"], two_past["date_evenement"], two_past["echeance"]) == ("fait", "2023-05-01", None)


def test_section_and_privacy():
    rule = one("Please never call me after ten at night.")
    assert (rule["section"], rule["confidentialite"]) == ("procedural", "normal")
    secret = one("Between us, I'm thinking of leaving my counseling job.")
    assert (secret["section"], secret["confidentialite"]) == ("episodic", "confidential")


def test_concepts_are_the_vocabulary_words_the_sentence_holds():
    fact = one("I went to a LGBTQ support group yesterday and it was so powerful.",
               vocabulary=["support group", "lgbtq", "group therapy", "pow"])
    assert fact["concepts"] == ["support group", "lgbtq"]


def test_a_first_person_attribute_is_proposed():
    fact = one("I moved to Porto from Sweden four years ago.")
    assert (fact["attribut"], fact["valeur"]) == ("lives_in", "Porto from Sweden four years ago")
    assert fact["noeud"] == "Caroline"


def test_no_attribute_without_one_stated():
    plain = one("I went to a LGBTQ support group yesterday and it was so powerful.")
    assert "attribut" not in plain and "valeur" not in plain
    third = one("Melanie moved to Porto four years ago.")  # third person: no attribute rule matches
    assert "attribut" not in third and "valeur" not in third
