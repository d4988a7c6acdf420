"""Round 22: a month the question names, and a clock time that is no price.

Found on forty-eight questions written by someone who read none of the code: "What was the
book club pick for October 2025?" was answered with September's pick, and "How much did the
January dentist appointment cost?" with a note that gives no price at all, its "2:40pm"
read as an amount.
"""

import pytest

from memories.llm.extractive import asked_for, said_as
from memories.services import answer_question
from tests.test_offline_engine import needs_meaning

NOTHING = "couldn't find anything"


@pytest.mark.parametrize(
    "text, months",
    [
        ("Sept book club: Piranesi.", {"september"}),
        ("optician moved to Thu 23rd Jan", {"january"}),
        ("Mum's 70th is in May, party on the 14th", {"may"}),
        ("we may go in march if it's warm", set()),  # "may" and "march" written as words
        ("Nothing to do with any month", set()),
    ],
)
def test_the_months_a_text_names(text, months):
    assert said_as.months_named(text) == months


def test_a_clock_time_is_no_amount():
    how_much = asked_for.kind_asked("How much did the haircut cost?")
    assert not asked_for.holds("Haircut moved to Thu 23rd Jan 2:40pm at Salon Rue", how_much, "How much did the haircut cost?")
    assert asked_for.holds("Haircut at Salon Rue, 38 quid", how_much, "How much did the haircut cost?")
    assert asked_for.holds("Haircut was 12.50 with the student discount", how_much, "How much did the haircut cost?")


NOTES = [
    "Swapped the kitchen tap, the old one dripped all night.",
    "Ines's swimming teacher is called Gwen, lessons are Thursdays at 5.",
    "Film club, March pick: Paris, Texas. Dev hosting, bring snacks.",
    "Quote for the new fence: £1,180 from Hallam Fencing.",
    "Film club, April pick: Aftersun. at Priya's.",
]


@needs_meaning
def test_a_month_asked_for_is_not_answered_by_another_months_note(user, memory_factory, local_embeddings):
    for text in NOTES:
        memory_factory(text)
    april = answer_question(owner=user, question="What was the film club pick for April?")
    assert april.cited and "Aftersun" in april.answer, april.answer
    assert "Paris, Texas" not in april.answer
    assert NOTHING in answer_question(owner=user, question="What was the film club pick for June?").answer


@needs_meaning
def test_a_note_with_a_clock_time_gives_no_price(user, memory_factory, local_embeddings):
    for text in NOTES:
        memory_factory(text)
    memory_factory("haircut moved to Thu 23rd Jan 2:40pm - Salon Rue on Bold St.")
    assert NOTHING in answer_question(owner=user, question="How much was the haircut in January?").answer


def test_an_irregular_past_is_its_present():
    from memories import textutil

    assert said_as.canonical(textutil.stem("led")) == said_as.canonical(textutil.stem("lead"))
    assert said_as.canonical(textutil.stem("paid")) == said_as.canonical(textutil.stem("pays"))
    assert said_as.canonical(textutil.stem("saw")) != said_as.canonical(textutil.stem("see"))  # mostly the tool


@needs_meaning
def test_who_held_a_role_in_a_period_is_answered_with_what_held_then(user, memory_factory, local_embeddings):
    """The question names a period no memory is dated in (the note is of January) and asks in the past tense ("led")
    what a note says with a noun ("lead"): the superseded note held then, and is quoted."""
    from memories.models import Memory

    old = memory_factory("Harbour rebuild - Ines is project lead, weekly status to her on Mondays", occurred_at="2024-01-15")
    new = memory_factory(
        "Harbour: Ines handed the lead over to Tomasz, she's off to the data team. Status goes to him now",
        occurred_at="2024-09-16",
    )
    assert Memory.objects.get(pk=old.pk).outdated_by_id == new.pk
    result = answer_question(owner=user, question="Who led the Harbour rebuild in spring 2024?")
    assert result.cited and result.cited[0] == old.pk, result.answer
