"""The rules consolidator's sentence filter (`_keeps`) and subject choice (`_node`), exactly.

Killing tests for scripts/mutation/exia-rules.toml. The sentences are LoCoMo turns (conv-26,
sessions 1-2, Caroline and Melanie) copied here, so the tests run without the shared data, plus
a few minimal sentences built to sit on one boundary each (a count of 2, 3 or 4 words).
"""

from __future__ import annotations

import json

import pytest
from lsrep.systems.exia_seed.prompts import Source, consolidation_messages
from lsrep.systems.exia_seed.rules import _FIRST, RulesModel

LOCOMO_SPEAKERS = {"Caroline", "Melanie"}


def keeps(sentence: str, speakers=frozenset(LOCOMO_SPEAKERS), min_words: int = 4) -> bool:
    return RulesModel(min_words=min_words)._keeps(sentence, bool(_FIRST.search(sentence)), set(speakers))


# -- _keeps ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sentence", [
    "Hey Mel!",                                   # a greeting and a speaker's short name: nothing counted
    "Totally agree, Mel.",                        # reactions and the one spoken to
    "Thanks, Caroline!",
    "Wow, Melanie!",
    "No doubts, Caroline.",                       # a speaker's name is no name: 1 counted word
    "I totally agree, Melanie.",                  # first person, 0 counted words
    "It's special to me.",                        # first person, 1 counted word
    "I love that painting!",                      # first person, 2 counted words (3 needed)
    "That's really cool.",
    "Yeah, it's tough.",
    "Good luck!",
    "Talk to you soon!",
    "Wow, love that painting!",                   # 'wow' is glue: 2 counted of 3 content words
    "His voice and songs were amazing.",          # 3 counted words but 3 content words (4 needed)
    "Excited for this new chapter!",              # the same
    "Sounds fun.",
    "Hi Rex!",                                    # one name and nothing beside it
])
def test_sentences_that_state_nothing_are_dropped(sentence):
    assert keeps(sentence) is False


@pytest.mark.parametrize("sentence", [
    "It was Matt Patterson!",                     # a two-word name alone
    "Congrats, Jon Snow!",                        # the same after a reaction
    "Congrats to Jon, Arya and Sansa!",           # three names and nothing else (two or more)
    "Met Oscar yesterday.",                       # a name with a counted word beside it
    "Ten of them came.",                          # a number word
    "We ran 5K.",                                 # a digit
    "I'm off to go swimming with the kids.",      # first person, exactly 3 counted words
    "I painted that lake sunrise last year!",
    "That charity race sounds great, Mel!",       # 3 counted words ('great' glue, 'mel' said to), 5 content
    "The colors really blend nicely.",            # exactly 4 content words, all counted
    "The event was really thought-provoking.",
    "Painting looks like a great outlet for expressing yourself.",
])
def test_sentences_that_state_something_are_kept(sentence):
    assert keeps(sentence) is True


def test_the_counted_word_threshold_follows_a_smaller_min_words():
    # min(3, min_words): with min_words=2, two counted words are enough in both branches.
    assert keeps("I love that painting!", min_words=2) is True
    assert keeps("Good luck!", min_words=2) is True
    assert keeps("Sounds fun.", min_words=3) is False  # 2 counted < min(3, 3)
    assert keeps("His voice and songs were amazing.", min_words=3) is True  # 3 content words now enough
    assert keeps("I love painting.", min_words=3) is False


def test_a_speakers_name_only_counts_when_it_is_a_speaker():
    # The same sentence said between other people: "Caroline" is a name beside a counted word.
    assert keeps("No doubts, Caroline.", speakers={"Maria", "John"}) is True
    assert keeps("Thanks, Caroline!", speakers={"Maria", "John"}) is False  # glue only: nothing beside it
    # Two counted words ("woah", "sounds") of four content words: not enough outside the first person.
    assert keeps("Woah, Maria, that sounds cool!", speakers={"John", "Maria"}) is False
    assert keeps("Woah, Maria, that sounds cool!", speakers={"John"}) is True  # Maria is a name here
    # "Mel" is said to Melanie: a prefix of a speaker's name, so no name.
    assert keeps("Hey Mel!", speakers={"Maria"}) is False
    assert keeps("Totally agree, Mel.", speakers={"Maria"}) is False
    assert keeps("That charity race sounds great, Mel!", speakers={"Maria"}) is True


# -- _node -------------------------------------------------------------------------------------

def node(sentence: str, speaker: str | None = "Ana", *, known=None, mid=(), speakers=None, language="en"):
    model = RulesModel(language=language)
    first = bool(_FIRST.search(sentence))
    return model._node(sentence, first, speaker, dict(known or {}), set(mid),
                       set(speakers if speakers is not None else ({speaker} if speaker else set())))


def test_first_and_second_person_go_to_the_speaker():
    assert node("I saw Oscar at the park.") == ("Ana", None)
    assert node("Did you see Oscar?") == ("Ana", None)
    assert node("Did you see Oscar?", None) == ("user", None)
    assert node("Did you see Oscar?", None, language="fr") == ("utilisateur", None)
    assert node("Then Bob called.", None) == ("Bob", None)


def test_a_named_third_person_gets_the_fact():
    assert node("Then Bob called.") == ("Bob", None)          # a three-letter name
    assert node("It was Matt Patterson!", "Melanie") == ("Matt", None)
    assert node("Then Ed called.") == ("Ana", None)           # two letters: no name
    assert node("Then bobby called.") == ("Ana", None)        # not capitalised
    assert node("Then on Monday Bob called.") == ("Bob", None)  # a stoplisted capitalised word is skipped
    assert node("Then on Monday we called.") == ("Ana", None)


def test_a_known_page_wins_even_at_the_start_of_a_sentence():
    assert node("Bobby called today.", known={"bobby": "Robert"}) == ("Robert", None)
    assert node("Then Bobby called.", known={"bobby": "Robert"}) == ("Robert", None)
    assert node("Bobby called today.") == ("Ana", None)


def test_sentence_openers_are_names_only_when_the_batch_writes_them_mid_sentence():
    gonna = "Gonna continue my edu and check out career options, which is pretty exciting!"
    assert node(gonna.replace("my ", "the "), "Caroline") == ("Caroline", None)
    assert node("Oscar loves carrots.", "Melanie") == ("Melanie", None)
    assert node("Oscar loves carrots.", "Melanie", mid={"oscar"}) == ("Oscar", None)


def test_the_one_spoken_to_is_never_the_subject():
    assert node("Woah, Maria, that sounds cool!", "John", speakers={"John", "Maria"}) == ("John", None)
    assert node("That charity race sounds great, Mel!", "Caroline", speakers=LOCOMO_SPEAKERS) == ("Caroline", None)
    # The walk goes on past the one spoken to: a later name gets the fact.
    assert node("Maria, Oscar called today.", "John", speakers={"John", "Maria"}) == ("Oscar", None)
    # Not a speaker: Maria gets it.
    assert node("Woah, Maria, that sounds cool!", "John", speakers={"John"}) == ("Maria", None)


def test_the_filter_and_the_subject_on_one_locomo_turn():
    turns = [
        ("D1:13", "Caroline", "Thanks, Melanie! That's really sweet. Is this your own painting?"),
        ("D1:14", "Melanie", "Yeah, I painted that lake sunrise last year! It's special to me."),
        ("D1:17", "Caroline", "Totally agree, Mel. Relaxing and expressing ourselves is key. "
                              "Well, I'm off to go do some research."),
        ("D2:2", "Caroline", "That charity race sounds great, Mel! Making a difference & raising awareness "
                             "for mental health is super rewarding - I'm really proud of you for taking part!"),
    ]
    # "Relaxing and expressing ourselves is key." has 3 content words (not first person: 4 needed);
    # "Thanks, Melanie!", "That's really sweet." and "It's special to me." state nothing; the
    # question "Is this your own painting?" is short.
    sources = [Source(f"brut:{d}", f"User: [{s}] {t}", False, "2023-05-08") for d, s, t in turns]
    reply = json.loads(RulesModel().complete(consolidation_messages("en", sources, [], [])))
    assert [(f["sources"][0], f["noeud"], f["fait"]) for f in reply["faits"]] == [
        ("brut:D1:14", "Melanie", "Melanie: Yeah, I painted that lake sunrise last year!"),
        ("brut:D1:17", "Caroline", "Caroline: Well, I'm off to go do some research."),
        ("brut:D2:2", "Caroline", "Caroline: That charity race sounds great, Mel!"),
        ("brut:D2:2", "Caroline", "Caroline: Making a difference & raising awareness for mental health is super "
                                  "rewarding - I'm really proud of you for taking part!"),
    ]
