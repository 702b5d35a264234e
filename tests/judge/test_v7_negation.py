"""Judge v7: a negation denies its clause ("She never tried pottery" does not give "pottery").

One test per piece of the scope rule (`lsrep.judge.negation`); each piece, switched off by hand,
fails the test named after it.
"""

from __future__ import annotations

from lsrep.judge.deterministic import DETERMINISTIC_VERSION, judge_deterministic
from lsrep.judge.negation import clauses, denied_words, scoped
from lsrep.judge.normalize import gives, normal_tokens
from lsrep.judge.verdict import JudgeCase, VersionView

LIST4 = "pottery, camping, painting, swimming"


def test_the_judge_is_v7():
    assert DETERMINISTIC_VERSION == "7"


def test_a_negation_denies_its_verb_phrase_object_not_only_the_next_word():
    assert not gives("She never tried pottery", "pottery")
    assert not gives("Mira hasn't done any pottery.", "pottery")
    assert not gives("I don't think he went camping.", "camping")  # a hedged denial is a denial
    assert not gives("Priya never baked a lemon cake for the party.", "a lemon cake")
    assert gives("She tried pottery", "pottery")
    assert gives("She tried pottery and never looked back", "pottery")  # the negation follows the object


def test_a_denied_coordinated_list_is_denied_item_by_item():
    assert not gives("She never did pottery, camping, painting or swimming", LIST4)
    assert not gives("She never did pottery, camping, painting or swimming", "swimming")
    assert not gives("He didn't go hiking, biking, or kayaking on the trip.", "hiking, biking and kayaking")
    assert not gives("not pottery, not camping, not painting, not swimming", LIST4)  # v6 already
    assert gives("She did pottery, camping, painting and swimming", LIST4)


def test_a_comma_outside_a_list_ends_the_clause():
    assert clauses("rejections don't define her, keep grinding") == ["rejections don't define her", "keep grinding"]
    tokens, denied = scoped("rejections don't define her, keep grinding")
    assert not denied[tokens.index("keep")]
    assert clauses("She didn't go on June 5, 2022") != ["She didn't go on June 5, 2022"]  # no list: split
    assert clauses("He has $1,000, not much") == ["He has $1,000", "not much"]  # a digit group is no comma


def test_a_clause_boundary_ends_the_denial():
    assert gives("She didn't like hiking, she loved pottery.", "pottery")  # comma + new subject
    assert gives("She didn't like hiking and she loved pottery.", "pottery")  # "and" + new subject
    assert gives("She didn't like hiking but loved pottery.", "pottery")  # "but"
    assert gives("She didn't like hiking; pottery was her thing.", "pottery")  # clause punctuation
    assert gives("She never liked hiking because pottery took her weekends", "pottery")
    assert gives("She is no longer in Boston, now in Denver", "Denver")
    assert not gives("She didn't like hiking, she loved pottery.", "hiking")
    assert not gives("She is no longer in Boston, now in Denver", "Boston")
    assert not gives("She is no longer in Boston; now in Denver", "Boston")


def test_a_complement_clause_stays_in_the_denial():
    assert not gives("I don't think she went camping", "camping")
    assert not gives("He never said she went camping, honestly", "camping")


def test_not_only_and_nothing_but_assert():
    assert gives("She not only took up pottery but also painting.", "pottery")
    assert gives("She not only took up pottery but also painting.", "painting")
    assert gives("She talks about nothing but pottery these days.", "pottery")
    assert gives("Not Boston but Denver.", "Denver")
    assert not gives("Not Boston but Denver.", "Boston")
    assert gives("No doubt she loved pottery", "pottery")


def test_a_negated_verb_of_not_doing_asserts_the_doing():
    assert gives("She never missed a yoga class.", "yoga")
    assert gives("She didn't stop painting after the move.", "painting")
    assert not gives("She never attended a yoga class.", "yoga")


def test_a_question_tag_denies_nothing():
    assert gives("She went camping, didn't she?", "camping")
    assert gives("Don't you think she loved pottery?", "pottery")


def test_a_degree_word_takes_the_denial():
    tokens, denied = scoped("somewhat, but not extremely religious")
    assert not denied[tokens.index("religious")]
    tokens, denied = scoped("not religious")
    assert denied[tokens.index("religious")]
    assert gives("She doesn't always go camping, but she goes", "camping")


def test_until_turns_a_denial_into_a_time():
    assert gives("She didn't go camping until July.", "went camping")
    assert not gives("She didn't go camping in July.", "went camping")


def test_a_bare_no_answers_and_denies_nothing_after_its_comma():
    assert gives("No, camping and hiking.", "camping and hiking")  # "No," then a list: the list is said
    assert not gives("No camping and hiking.", "camping and hiking")


def test_a_denied_date_is_not_given():
    assert not gives("She didn't attend the support group on 7 May 2023.", "7 May 2023")
    assert not gives("She didn't attend the support group on May 7th, 2023.", "7 May 2023")  # rule 2, dates
    assert gives("She attended the support group on May 7th, 2023.", "7 May 2023")
    assert not gives("She didn't go camping in June 2023.", "2023-06-10")
    assert not gives("He never lost his job in January 2023; that was his brother.", "January 2023")
    assert gives("Not on 20 May 2023; she ran it on 21 May 2023.", "21 May 2023")
    assert gives("She went on 7 May 2023, not in June.", "7 May 2023")


def test_free_text_words_are_denied_by_the_scope_not_only_the_first_word():
    ref = "attended a painting workshop with her friends"
    assert not gives("She didn't attend the painting workshop with her friends.", ref)
    assert not gives("She didn't go to the painting workshop with her friends.", ref)  # v6 negated "go" only
    assert gives("She went to the painting workshop with her friends.", ref)
    assert gives("She attended the painting workshop with her friends.", ref)
    words = set(normal_tokens("painting workshop"))
    assert denied_words("She didn't attend the painting workshop", words) == words
    assert denied_words("She attended the painting workshop, not the talk", words) == set()


def test_a_word_said_once_outside_a_denial_is_given():
    assert gives("She never tried pottery before, but now pottery is her passion", "pottery")
    assert not gives("She never tried pottery and never will try pottery", "pottery")


def test_a_list_head_is_read_with_the_scope():
    ref = "Not tough; keep their area clean, feed them properly, give them enough light"
    assert gives("It's not tough: keep the area clean, feed them properly and give them enough light", ref)
    assert not gives("It is tough: keep the area clean, feed them properly and give them enough light", ref)


def _case(answer: str, current: str, superseded: str = "") -> JudgeCase:
    old = (VersionView(answer=superseded, aliases=(), valid_from="t1", valid_until="t10"),) if superseded else ()
    return JudgeCase(question="Where does Ana live?", kind="current", expect_abstain=False, answer=answer,
                     in_force=(VersionView(answer=current, aliases=(), valid_from="t10"),), superseded=old,
                     later=())


def test_a_superseded_value_marked_past_and_a_denied_current_one():
    assert judge_deterministic(_case("She no longer lives in Boston; now she is in Denver.", "Denver",
                                     "Boston")).outcome == "correct"
    assert judge_deterministic(_case("She no longer lives in Boston.", "Boston")).outcome == "wrong"


def test_negators_are_read_on_the_words_as_written():
    # "note" folds to the token "not": only the written word negates
    assert gives("On another note, Nate made vegan ice cream last Friday", "vegan ice cream")
    assert gives("Nate took note of the vegan ice cream recipe", "vegan ice cream recipe")
    assert not gives("Nate did not make vegan ice cream last Friday", "vegan ice cream")


def test_a_subordinate_or_relative_clause_ends_the_denial():
    ref = "Lots of homes were ruined."
    assert gives("The infrastructure wasn't great so lots of homes were ruined", ref)
    assert not gives("The flood was bad but not so bad that lots of homes were ruined", "homes ruined")
    assert gives("Not much is new other than the screenplay.", "screenplay")
    assert gives("She hasn't painted since the move to Denver", "Denver")
    assert gives("She didn't meet the woman who runs the pottery studio", "pottery studio")
    assert not gives("She didn't visit the pottery studio", "pottery studio")


def test_a_comma_then_a_sentence_adverb_opens_a_new_statement():
    assert gives("We don't go often, usually only once or twice a year.", "once or twice a year")
    assert not gives("We don't go camping, hiking or swimming", "camping, hiking, swimming")


def test_idioms_that_assert():
    assert gives("Can't wait to see your dance studio done!", "a dance studio")
    assert gives("I still can't believe I won the video game tournament", "video game tournament")
    assert not gives("I don't believe he won the video game tournament", "video game tournament")
    assert gives("Why not share the love", "love")
    assert gives("Nothing beats getting together for a good meal", "good meal")


def test_a_verb_that_presupposes_what_follows():
    assert gives("She didn't expect to win the poetry contest", "poetry contest")
    assert gives("You'd never have thought you'd get a third turtle", "third turtle")
    assert not gives("I don't think she got a third turtle", "third turtle")
