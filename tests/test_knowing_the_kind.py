"""Issue 25, knowing when it does not know: a line that names the thing asked about but not
the kind of thing asked for ("What time is the check-up?" against "The check-up is on
Monday") is no answer; a line that names an instance of what is asked ("Which ferry
company?" against "Booked with Brittany Ferries") is. Notes and questions written for
this file, before the code, apart from tests/data/abstain3_dev.json."""

from __future__ import annotations

import pytest

from memories.llm.extractive import similarity
from memories.llm.extractive.asked_for import (
    AMOUNT,
    DATE,
    DURATION,
    KIND,
    NAME,
    NUMBER,
    PERSON,
    PLACE,
    TIME,
    kind_asked,
    could_answer,
    holds,
)
from memories.services.query import answer_question
from tests.test_offline_engine import NOTHING, needs_meaning


@pytest.mark.parametrize(
    ("question", "kind", "head"),
    [
        ("What time does the ferry leave?", TIME, ""),
        ("When is Luna's check-up?", DATE, ""),
        ("How long ago did we move?", DATE, ""),
        ("How long is the drive to Leeds?", DURATION, ""),
        ("How much was the lamp?", AMOUNT, ""),
        ("How many cousins does Ravi have?", NUMBER, ""),
        ("Who repaired the tap?", PERSON, ""),
        ("Where does Ines work?", PLACE, ""),
        ("Which city is the final in?", PLACE, ""),
        ("What is the name of Sam's hamster?", NAME, ""),
        ("What did Ravi call his boat?", NAME, ""),
        ("What is my landlord's name?", NAME, ""),
        ("What's the band's name?", NAME, ""),
        ("Which ferry company did I book?", KIND, "ferry company"),
        ("What kind of bread does Ines bake?", KIND, "bread"),
        ("What motivated Ravi to retrain?", KIND, "motivated"),
    ],
)
def test_the_kind_a_question_asks_for_is_read_from_its_grammar(question, kind, head):
    asked = kind_asked(question)
    assert asked is not None and asked.kind == kind and asked.head == head, asked


@pytest.mark.parametrize("question", ["What did Ines say about the move?", "Why did Ravi retrain?", "What is happening?"])
def test_a_question_whose_grammar_names_no_kind_asks_for_none(question):
    assert kind_asked(question) is None
    assert could_answer("Anything at all.", None, question)


@pytest.mark.parametrize(
    ("question", "wanting", "giving"),
    [
        ("What time is Luna's check-up?", "Luna's check-up is on Monday 3 June.", "Luna's check-up is at 4:15pm on Monday."),
        ("How much did the reading lamp cost?", "Bought a reading lamp for the study.", "The reading lamp was 45 dollars."),
        ("Who fixed the kitchen tap?", "The kitchen tap was fixed on Saturday.", "Ravi fixed the kitchen tap on Saturday."),
        ("Who teaches the pottery class?", "The pottery class is at the Riverside Centre.", "Our neighbour teaches the class."),
        ("Where is the christening?", "The christening is on the first Sunday of May.", "The christening is at St Anne's."),
        ("What is the name of Sam's hamster?", "Sam got a hamster for his birthday.", "Sam's hamster is called Biscotti."),
        ("How long is the drive to Leeds?", "We drive to Leeds on Friday.", "The drive to Leeds takes three hours."),
    ],
)
def test_a_line_without_the_kind_asked_for_cannot_answer(question, wanting, giving):
    asked = kind_asked(question)
    assert not could_answer(wanting, asked, question)
    assert could_answer(giving, asked, question)


def test_a_date_or_an_open_kind_is_never_wanting():
    # A note's own day may answer "when"; "pottery" answers "what activity" with no name.
    assert could_answer("Went to the pottery class.", kind_asked("When did I go to the pottery class?"), "")
    assert could_answer("We did pottery.", kind_asked("What activity did we do?"), "")


def test_a_named_instance_is_what_a_kind_asks_for():
    question = "Which ferry company am I sailing to Santander with?"
    assert holds("Booked the crossing to Santander with Brittany Ferries.", kind_asked(question), question)
    assert not holds("Booked the crossing to Santander for August.", kind_asked(question), question)


NOTES = [
    "Booked the crossing to Santander with Brittany Ferries for August.",
    "Luna's vet check-up is on Monday 3 June.",
    "Bought a reading lamp for the study.",
    "The kitchen tap was fixed on Saturday, finally no more dripping.",
    "Sam got a hamster for his birthday and adores it.",
    "The plumber charged 80 pounds for the boiler service.",
    "Our allotment is next to the railway bridge.",
]


@needs_meaning
def test_notes_that_name_the_thing_but_not_what_is_asked_answer_not_found(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    assert similarity.by_meaning()
    made = [memory_factory(text) for text in NOTES]
    answerable = {
        "Which ferry company am I sailing to Santander with?": 0,
        "When is Luna's vet check-up?": 1,
        "How much did the boiler service cost?": 5,
        "Where is our allotment?": 6,
    }
    for question, index in answerable.items():
        result = answer_question(owner=user, question=question)
        assert result.cited and result.cited[0] == made[index].pk, (question, result.answer)
    for question in (
        "What time is Luna's vet check-up?",
        "How much did the reading lamp cost?",
        "Who fixed the kitchen tap?",
        "What is the name of Sam's hamster?",
    ):
        assert NOTHING in answer_question(owner=user, question=question).answer, question
