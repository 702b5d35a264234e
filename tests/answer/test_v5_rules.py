"""Answerer v5 rules: list questions gather one typed item from every evidence line (plural places, names,
"what are X's pets' names"), listeners and calendar words are not names."""

from __future__ import annotations

from lsrep.answer.extractive import question_type
from lsrep.answer.lists import asks_for_list
from lsrep.contract import Fragment
from lsrep.judge.normalize import gives
from tests.answer.answer_testkit import ask, line


def test_plural_place_nouns_ask_for_places():
    for q in ("Which cities has Ana visited?", "What European countries has Ben been to?",
              "What areas of the U.K. has Ana been to?", "Which towns did Ben live in?"):
        assert question_type(q) == "place", q
        assert asks_for_list(q) or q.startswith("Which towns"), q
    assert question_type("What city does Ana live in?") == "place"


def test_name_lists_are_person_questions_and_lists():
    for q in ("What are the names of Ben's children?", "What are Ana's pets' names?",
              "What people has Ana met at the shelter?"):
        assert question_type(q) == "person", q
        assert asks_for_list(q), q
    assert asks_for_list("What musical artists/bands has Ana seen?")
    assert not asks_for_list("What is the name of Ana's dog?")


def test_a_city_list_gathers_one_place_from_each_line():
    answer = ask("Which cities has Ben visited?",
                 line("2024-01-29 14:35", "Ben", "Still hunting for a studio spot. Oh, I've been to Lisbon yesterday! "
                                                 "It was sooo cool."),
                 line("2024-03-02 10:00", "Ana", "That's great, Ben! How was the food?"),
                 line("2024-06-19 10:04", "Ben", "Hey Ana! Took a short trip last week to Vienna to clear my mind."))
    assert gives(answer, "Lisbon, Vienna"), answer
    assert "Ana" not in answer


def test_a_name_list_takes_names_only_from_lines_about_the_question():
    # A line sharing nothing with the question but its subject ("Ana") gives no name: on a whole-history
    # context every line of Ana's would otherwise lend its names to the list (v6 dropped v5's quarter share).
    answer = ask("What people has Ana met while volunteering?",
                 line("2024-02-05 14:37", "Ana", "While volunteering at the shelter, I met a man named Omar."),
                 line("2024-02-25 20:59", "Ana", "Wow Ben, your plans are inspiring! While volunteering yesterday, "
                                                 "I met this amazing woman, Greta, who had been through a lot."),
                 line("2024-07-03 21:01", "Ana", "My cousin Lidia is visiting next week, so I'm cleaning."))
    assert gives(answer, "Omar, Greta"), answer
    assert "Lidia" not in answer and "Ben" not in answer, answer


def test_pet_names_take_a_sentence_initial_pair_and_skip_the_listener():
    answer = ask("What are Ana's pets' names?",
                 line("2024-07-12 16:50", "Ana", "Pip and Tofu! They are the sweetest pets."),
                 line("2024-08-23 15:34", "Ana", "Woohoo, Ben! We got another cat named Miso too."))
    assert gives(answer, "Pip, Tofu, Miso"), answer
    assert "Ben" not in answer


def test_a_weekday_is_not_a_place():
    answer = ask("What places has Ben met new people?",
                 line("2024-05-02 11:57", "Ben", "I went to a game convention and met new people there."),
                 line("2024-06-03 17:51", "Ben", "Something exciting happened last Friday. I met some new people."))
    assert answer != "Friday" and "convention" in answer, answer


def test_relative_dates_the_shared_resolver_leaves_open():
    from datetime import date

    from lsrep.answer.dated import date_span as _date_span

    monday = date(2023, 7, 17)
    cases = {
        "I went there a couple weeks ago.": "2 weeks before 17 July 2023",
        "I started two years back.": "July 2021",
        "I started about a year ago.": "July 2022",
        "I did it over the weekend.": "the weekend before 17 July 2023",
        "It was the previous weekend.": "the weekend before 17 July 2023",
        "It was the week before last.": "2 weeks before 17 July 2023",
        "I went Saturday with the kids.": "15 July 2023",
        "I'm going Saturday with the kids.": "22 July 2023",
        "I went there in May.": "May 2023",
        "I went in early June.": "June 2023",
        "We went there in September.": "September 2022",
        "We are going there in September.": "September 2023",
        "I did it yesterday.": "16 July 2023",  # the shared resolver still goes first
        "I went two Saturdays ago.": "8 July 2023",
        "We went there during the summer.": "summer 2023",
    }
    for text, expected in cases.items():
        assert _date_span(text, monday) == expected, text
    assert _date_span("You may come along.", monday) is None


def test_how_long_has_anchors_the_length_to_when_it_began():
    answer = ask("How long has Ana been practicing pottery?",
                 line("2023-09-13 00:16", "Ana", "Seven years now, and I've finally found my real muse: pottery."))
    assert gives(answer, "seven years") and gives(answer, "since 2016"), answer
    took = ask("How long did it take Ben to build the boat?",
               line("2023-09-13 00:16", "Ben", "It took me two years to build the boat."))
    assert "since" not in took, took


def test_a_noun_phrase_clause_takes_the_thing_it_describes():
    answer = ask("What was grandma's gift to Ana?",
                 line("2023-06-27 10:39", "Ana", "This scarf is super special to me - a gift from my grandma in "
                                                 "Lisbon. She gave it to me when I was young."))
    assert "scarf" in answer, answer


def test_a_clause_pointing_at_a_shared_image_takes_its_caption_even_when_the_next_sentence_joins():
    answer = ask("What sign did Ben see at the bakery?",
                 line("2023-06-27 10:39", "Ben", "The bakery was lovely, they even had funny signs like this. "
                                                 "It made me laugh. [shares an image: a photo of a sign saying "
                                                 "no dogs allowed]"))
    assert "no dogs allowed" in answer, answer


def test_a_feeling_question_takes_the_sentence_of_its_turn_that_says_how_it_felt():
    turn = line("2023-05-20 19:50", "Ben", "Thanks! We had a great time throwing a small party and inviting some "
                                           "neighbours to share their stories. It was lovely seeing them chat. All "
                                           "the smiles made it really heartwarming.")
    answer = ask("What emotions did Ben feel during the small party with the neighbours?", turn)
    assert "heartwarming" in answer, answer
    described = ask("How does Ana describe the sailing trip with Rex?",
                    line("2023-08-11 00:15", "Ana", "Rex and I had a blast on our sailing trip last summer. We swam "
                                                    "and made great memories. It was a really peaceful experience."))
    assert "peaceful" in described, described


def test_a_feeling_question_whose_best_sentence_says_how_it_felt_keeps_it():
    answer = ask("How did Ana feel while watching the eclipse?",
                 line("2023-07-20 21:13", "Ana", "Watching the eclipse, I felt tiny and in awe of the sky. "
                                                 "Reminds me how awesome life is."))
    assert "tiny" in answer and "awe" in answer, answer


def test_a_noun_phrase_after_a_dash_says_what_the_asked_thing_is():
    answer = ask("What project is Ana working on?",
                 line("2022-11-09 18:05", "Ana", "Hey Ben, I'm working on a new project - a slow mystery set in a "
                                                 "coastal village. It's been a great outlet for me."))
    assert "mystery" in answer, answer


def test_a_caption_does_not_count_as_the_next_sentence_of_its_turn():
    answer = ask("What type of diet do Ben's rabbits have?",
                 line("2022-10-25 20:34", "Ben", "They eat a mix of hay, greens, and pellets. They have a varied diet. "
                                                 "[shares an image: a photo of a bowl of lettuce]"))
    assert "hay" in answer, answer


def test_a_why_sentence_pointing_back_gives_the_sentence_before_as_the_reason():
    answer = ask("Why did Ben feel inspired to become a nurse after the visit?",
                 line("2023-07-17 15:36", "Ben", "I met an old patient there. Seeing his courage really filled me "
                                                 "with hope. It reminded me why I wanted to become a nurse."))
    assert "courage" in answer, answer


def test_a_short_sentence_with_nothing_of_the_question_is_taken_whole():
    answer = ask("What did Ana think of the plum jam she made?",
                 line("2022-02-07 09:32", "Ana", "Super tasty! It was sweet and tangy - might be my new favorite."))
    assert "sweet and tangy" in answer, answer


def test_a_nickname_is_the_greeted_name():
    answer = ask("What nickname does Ben use for Anastasia?",
                 line("2022-04-15 19:37", "Ben", "Hey Stacy, guess what I did? Painted my room last week - come see!"))
    assert answer == "Stacy", answer


def test_besides_x_answers_with_what_is_not_x():
    answer = ask("What is one of Ana's favorite snacks besides salted popcorn?",
                 line("2022-09-14 13:52", "Ana", "Salted popcorn is one of my favorite snacks, but I also love a "
                                                 "spicy roasted chickpea mix. It's crunchy."))
    assert "chickpea" in answer and "popcorn" not in answer, answer


def test_a_consequence_so_keeps_the_reason_before_it():
    answer = ask("Why did Ana combine her bakery with music?",
                 line("2023-04-03 13:33", "Ana", "Thanks! I'm passionate about music and baking so combining them lets "
                                                 "me share my love with others."))
    assert gives(answer, "passionate about music and baking"), answer
    assert ask("Why did Ana choose the agency?",
               line("2023-05-25 13:21", "Ana", "I chose them 'cause they help new parents.")) == \
        "'cause they help new parents"
    intensifier = ask("Why did Ana sit with the boy?",
                      line("2023-01-28 13:26", "Ana", "He looked so sad and lonely. I sat with him to give him "
                                                      "some comfort."))
    assert "comfort" in intensifier, intensifier  # "so sad" is no reason marker


def test_an_ordinal_counts_at_least_that_many():
    answer = ask("How many chess tournaments has Ben won by July 2022?",
                 line("2022-01-21 19:33", "Ben", "I won my first chess tournament last week!"),
                 line("2022-07-10 14:34", "Ben", "Check this out! I won my fourth chess tournament on Friday!"))
    assert answer == "4", answer


def test_which_day_weekend_or_season_asks_for_a_date():
    for q in ("Which day did Ana leave?", "What weekend did Ben go hiking?", "During which season did they travel?"):
        assert question_type(q) == "date", q
    assert question_type("Which city did Ana visit?") == "place"


def test_a_caption_answers_by_what_it_shows_without_the_sharing_words():
    answer = ask("What did Ben's new desk look like?",
                 line("2023-03-01 10:00", "Ben", "Finally done with the office! [shares an image: a photo of a desk "
                                                 "with a green lamp and a plant]"))
    assert "green lamp" in answer and "shares an image" not in answer, answer


def test_what_two_people_have_in_common_is_said_in_lines_of_both():
    ctx = [line("2023-01-20 16:05", "Ben", "Hey Ana! Lost my job as a chef yesterday, so I'm gonna start my own "
                                           "catering business."),
           line("2023-01-20 16:06", "Ana", "Sorry about your job Ben! I also lost my job at the bank this month. "
                                           "Maybe I'll start a business too."),
           line("2023-01-20 16:07", "Ben", "I love cooking for big parties.")]
    answer = ask("What do Ben and Ana both have in common?", *ctx)
    assert gives(answer, "lost job") and "business" in answer, answer
    assert ask("Did Ben and Ana both lose their jobs?", *ctx).startswith(("Yes", "No", "Likely"))


def test_a_common_place_keeps_its_of_phrase():
    answer = ask("Where is Ana's internship?",
                 line("2023-05-27 19:20", "Ana", "It's a part-time position in the design department of a big firm."))
    assert gives(answer, "design department of a big firm"), answer


def test_a_date_said_in_the_speakers_other_turn_that_day_dates_the_undated_one():
    ctx = [line("2023-08-09 20:07", "Ben", "Last weekend, I participated in a community event to raise money."),
           line("2023-08-09 20:09", "Ben", "I set up a 5K charity run in our neighborhood. It was all for a good cause."),
           line("2023-08-09 20:10", "Ana", "Next month I'm running one too!")]
    answer = ask("When did Ben participate in a 5K charity run?", *ctx)
    assert gives(answer, "the weekend before 9 August 2023"), answer
    alone = ask("When did Ben set up a 5K charity run?", ctx[1])
    assert alone == "9 August 2023", alone


def test_a_listed_name_after_a_colon_is_a_name_but_a_colon_opening_a_line_is_not():
    answer = ask("Which cities has Ana lived in?", Fragment(text="Cities Ana has lived in: Lisbon; Porto"))
    assert gives(answer, "Lisbon, Porto"), answer
    answer = ask("What is the name of Ana's dog?", Fragment(text="Ana: Big news: I adopted a dog named Pip."))
    assert answer == "Pip", answer


def test_a_place_list_on_a_whole_history_takes_only_places_said_with_the_asked_verb():
    # v6: "In which cities ..." is a list question; on a whole history the other places and names the
    # subject mentions (her hospital, her manager) are not places she lived, and a fact line listing
    # several facts gives only the part about living.
    answer = ask("In which cities has Maya lived, in order?",
                 line("2026-03-02 09:00", "Maya", "Hi! I'm Maya. I live in Lisbon, in a small flat near the river."),
                 line("2026-03-02 09:04", "Maya", "I work as a nurse at Santa Maria hospital, mostly night shifts."),
                 line("2026-03-20 10:00", "Maya", "My sister Ines is getting married in Sintra."),
                 line("2026-04-06 10:00", "Maya", "We finally moved! We now live in Porto, in an apartment in Bonfim."),
                 line("2026-04-14 10:00", "Maya", "My manager is called Rui and the team is great."),
                 Fragment(text="user (person): manager: called Rui (since 2026-04-14); lives in: Lisbon (since "
                               "2026-03-02)"))
    assert gives(answer, "Lisbon, Porto"), answer
    for other in ("Santa Maria", "Rui", "Ines", "Sintra"):
        assert other not in answer, answer
