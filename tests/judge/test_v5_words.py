"""Judge v5: words a person reads as the same word, and a reference's pronoun given by the owner's name."""

from __future__ import annotations

from lsrep.judge.lexicon import SAME_WORD
from lsrep.judge.normalize import gives, normal_tokens
from lsrep.judge.owner import owner_span


def test_informal_and_clipped_forms_read_as_the_plain_word():
    assert gives("he needed it for his biz", "his business")
    assert gives("she showed us some pics of the trip", "photos of the trip")
    assert gives("his fave game is chess", "favorite game")
    assert gives("he won a gaming tourney", "a gaming tournament")
    assert normal_tokens("favourite colour") == normal_tokens("favorite color")


def test_irregular_nouns_of_verbs_read_as_the_verb():
    assert gives("a divorce, losing her job, and ending up homeless", "divorce, job loss, homelessness")
    assert gives("her grandfather died last spring", "her grandfather's death")
    assert normal_tokens("choice") == normal_tokens("chose") and normal_tokens("growth") == normal_tokens("grew")


def test_hard_negatives_the_lexicon_must_not_join():
    # words with a second everyday sense are not listed: "on sale" is no selling, "folks" may be one's parents
    assert "sale" not in SAME_WORD and "folks" not in SAME_WORD
    assert not gives("he bought a bike on sale", "sold his bike", "What did Omar do last weekend?")
    assert not gives("a divorce and a new job", "divorce, job loss")
    assert not gives("she showed him paintings of her trip", "photos of her trip")
    assert not gives("his fave is checkers", "chess")
    assert not gives("the team won", "a loss")


def test_a_pronoun_given_by_the_owners_name_or_left_out():
    q = "Why did Omar close his bank account?"
    assert gives("he had to do it for Omar's biz", "for his business", q)
    assert gives("for the business", "for his business", q)
    assert gives("Omar got Lena a stuffed animal", "got her a stuffed animal")
    assert owner_span(normal_tokens("for Omar's business"), normal_tokens("for his business"))


def test_another_persons_pronoun_is_not_the_owner():
    q = "Why did Omar close his bank account?"
    assert not gives("for their business", "for his business", q)
    assert not gives("for his rival's business", "for his business", q)
    assert not owner_span(normal_tokens("for their business"), normal_tokens("for his business"))
    assert not owner_span(normal_tokens("his business"), normal_tokens("his"))  # a pronoun alone is no reference
    # the leading pronoun the judge already drops: another third person's is not given...
    assert not gives("his brother helped", "her brother", "Who helped Lena move?")
    assert gives("Lena's brother helped", "her brother", "Who helped Lena move?")
    # ...but "your" is the conversation's view of the same person
    assert gives("Lena told him: your patience is amazing", "his patience", "What does Lena admire in Omar?")


def test_a_question_tag_negates_nothing():
    q = "What does Omar joke about doing after the writing class?"
    ref = "start thinking about a novel and publish it online"
    assert gives("We should write together, don't you think? Maybe I'll start to think of a novel and publish it "
                 "online myself.", ref, q)
    # hard negatives: a real negation beside a tag still negates; "not that" is a negation, not a tag
    assert not gives("She didn't love the crowd or the band's energy, don't you think?",
                     "loved the band's energy and the crowd", "What did Lena think of the festival?")
    from lsrep.judge.normalize import _negated_words

    assert _negated_words(normal_tokens("it was not that great fun"), {"great"}) == {"great"}
    assert _negated_words(normal_tokens("don't you think it's great fun"), {"think"}) == set()


def test_two_one_word_items_joined_by_and_are_a_list():
    q = "What instruments does Melanie play?"
    answer = "running, reading, or playing her violin; Yeah, I play clarinet. Started when I was young"
    assert gives(answer, "clarinet and violin", q)
    # hard negatives: one item is not both; longer phrases joined by "and" stay prose (window and coverage)
    assert not gives("I play the violin", "clarinet and violin", q)
    assert not gives("I play the clarinet and the drums", "clarinet and violin", q)
    from lsrep.judge.normalize import list_items

    assert list_items("clarinet and violin") == ["clarinet", "violin"]
    assert list_items("personal style and customer comfort") == []


def test_clipped_forms_and_their_hard_negatives():
    q = "What did Lena want her guests to feel?"
    assert gives("she wanted them to feel cozy and comfy", "cozy and comfortable", q)
    assert not gives("cozy, though the chairs were not comfy", "cozy and comfortable", q)
    assert gives("he got a new bike", "a bicycle") and not gives("he bought a motorbike", "a bicycle")
    assert gives("help from her auntie", "her aunt") and not gives("help from her uncle", "her aunt")
