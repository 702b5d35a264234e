"""Long turns: the fact is one sentence among many, and people rarely repeat the question's words."""

from __future__ import annotations

from pathlib import Path

from lsrep.answer import make_answerer
from lsrep.answer.extractive import ExtractiveAnswerer
from lsrep.calibration import calibrate, calibration_json, cases_from_campaign
from lsrep.contract import Fragment
from lsrep.protocol.campaign import load_campaign
from lsrep.runner import load_inputs

REPO = Path(__file__).resolve().parents[2]
FILLER = ("Any tips for keeping houseplants alive? Last night Declan made a big pot of vegetable curry. "
          "The neighbours are renovating and the drilling starts at eight. After work Declan tried a new "
          "lentil soup recipe. ") * 12


def _ask(question: str, fact: str) -> str:
    text = f"[2026-03-02 09:15] user (user): {FILLER}{fact} {FILLER}"
    return ExtractiveAnswerer().answer(question, [Fragment(text=text, source_turn_ids=("t1",))])


def test_a_fact_stated_in_other_words_inside_a_long_turn_is_found():
    assert "Leeds" in _ask("Which city do I live in now?", "Home for me is Leeds; I settled here after my studies.")
    assert _ask("Which company do I work for?",
                "I've been a printer at Lumen Print Works for two years now.") == "Lumen Print Works"
    assert "banjo" in _ask("Which instrument do I play?", "I've played the banjo since I was a kid.")


def test_two_evidence_lines_each_sharing_one_word_still_answer_a_which_city_question():
    lines = ["[2026-03-02 09:15] user (user): We've decided to relocate to Krakow next month, so for now "
             "we're still in Leeds.",
             "[2026-04-02 09:15] user (user): The move is finally done, we're living in Krakow now."]
    answer = ExtractiveAnswerer().answer("Which city do I live in now?",
                                         [Fragment(text=t, source_turn_ids=(f"t{i}",)) for i, t in enumerate(lines)])
    assert "Krakow" in answer


def test_an_unrelated_long_turn_still_abstains():
    assert _ask("Which city do I live in now?", "I love the smell of fresh bread.") == "I don't know."


def test_density_oracle_stale_is_always_labelled_stale():
    campaign = load_campaign(REPO / "campaigns" / "density.toml")
    cases, turns = cases_from_campaign(campaign, load_inputs(campaign))
    doc = calibration_json(calibrate(cases, turns, make_answerer(campaign.spec.answerer), seed=1, boot=50))
    assert doc["stale_detection"]["n"] == 10 and doc["stale_detection"]["rate"] == 1.0
    assert doc["future_detection"]["rate"] == 1.0
    assert doc["ceiling"] >= 0.75 and not doc["low_ceiling"]


def test_related_words_never_make_one_kind_answer_for_another():
    # "called" is not the dog's name, a cat is not the dog, a cello is not a guitar: abstain.
    ctx = [Fragment(text="[2026-03-02 09:08] Maya (user): I play the cello with an orchestra called the Tagus "
                         "Strings.", source_turn_ids=("t1",)),
           Fragment(text="[2026-03-03 09:08] Maya (user): Our cat is a Siamese.", source_turn_ids=("t2",)),
           Fragment(text="[2026-03-04 09:08] Maya (user): We walked along the river today.", source_turn_ids=("t3",))]
    assert ExtractiveAnswerer().answer("What is the name of Maya's dog?", ctx) == "I don't know."
    assert ExtractiveAnswerer().answer("What breed is Maya's dog?", ctx) == "I don't know."
    assert ExtractiveAnswerer().answer("Does Maya own a guitar?", ctx) == "I don't know."
