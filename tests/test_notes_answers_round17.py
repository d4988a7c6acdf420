"""Issue 25, knowing when it does not know, over a person's notes: a line says more than its
spelling ("Feb" is February, "serviced" a service, "Tilly's booster" the cat's booster
vaccination when the owner wrote "our cat Tilly"), and a line that says one part of an
attribute and another thing in place of the rest ("Blood test results" for "my blood
pressure") is no value of it. Notes and questions written for this file."""

from __future__ import annotations

import pytest

from memories.llm.base import AnswerContext, MemoryNote
from memories.llm.extractive import near_miss, said_as, similarity
from memories.llm.extractive.asked_about import asked_nouns, asked_phrases
from memories.services.query import answer_question
from tests.test_offline_engine import NOTHING, needs_meaning


@pytest.mark.parametrize(
    ("short", "full"),
    [("feb", "february"), ("sept", "september"), ("sat", "saturday"), ("thurs", "thursday"), ("weds", "wednesday")],
)
def test_a_short_month_or_weekday_is_read_as_its_full_name(short, full):
    assert said_as.canonical(short) == said_as.canonical(full) == full
    assert said_as.calendar(short) and said_as.calendar(full)


def test_a_word_and_its_inflected_forms_share_one_spelling():
    from memories import textutil

    assert said_as.canonical(textutil.stem("service")) == said_as.canonical(textutil.stem("serviced"))
    assert said_as.canonical("may") == "may"  # a month, and a word: kept as written


def _context(*texts: str) -> AnswerContext:
    return AnswerContext(memories=[MemoryNote(id=i, summary=t, text=t) for i, t in enumerate(texts, 1)])


def test_the_owners_notes_say_what_a_name_is():
    called = said_as.names_called(
        _context(
            "Our cat Tilly hid under the bed all evening.",
            "Walked Rufus (the spaniel) round the reservoir.",
            "The kids got a guinea pig at the weekend and named her Clover.",
            "My brother Tariq starts his new job on Monday.",
            "Gave Marek the drill back on Sunday.",
        )
    )
    assert called == {
        "tilly": frozenset({"cat"}),
        "rufus": frozenset({"spaniel"}),
        "clover": frozenset({"pig"}),
        "tariq": frozenset({"brother"}),
    }


def test_a_participle_ends_the_noun_phrase_it_follows():
    assert asked_phrases("When is the car getting serviced?") == [["car"]]
    assert asked_phrases("When did the cat get her booster vaccination?") == [["cat"], ["booster", "vaccination"]]
    # The first word of a phrase may end like a participle: it is still the thing named.
    assert asked_nouns("Where is the wedding?") == ["wedding"]


def test_a_word_that_ends_a_noun_run_is_the_thing_itself():
    assert "booster" in said_as.heads("Tilly's booster done at the vets on 14 Oct.")
    assert "blood" not in said_as.heads("Blood test results back, iron a little low.")


NOTES = [
    "Our cat Tilly hid under the bed all evening.",
    "Tilly's booster done at the vets on 14 Oct, £58.",
    "Car booked in at the garage for its service on Fri 7 Nov.",
    "Blood test results back, iron a little low.",
    "Council tax direct debit moved to the 1st of the month.",
    "Swimming lessons for Ada start again after half term.",
    "Ada's school photo day is Thu 20 Nov.",
]


@needs_meaning
def test_a_note_that_says_the_thing_in_other_forms_answers(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    assert similarity.by_meaning()
    made = [memory_factory(text) for text in NOTES]
    for question, index in {
        "When did the cat get her booster vaccination?": 1,
        "When is the car getting serviced?": 2,
        "What day in November is the school photo?": 6,
    }.items():
        result = answer_question(owner=user, question=question)
        assert result.cited and result.cited[0] == made[index].pk, (question, result.answer)


@needs_meaning
def test_a_note_about_a_neighbour_of_the_thing_asked_is_no_answer(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    assert similarity.by_meaning()
    for text in NOTES:
        memory_factory(text)
    for question in ("What is my blood pressure?", "When did the dog get his booster vaccination?"):
        assert NOTHING in answer_question(owner=user, question=question).answer, question


def test_a_different_number_on_the_same_noun_is_another_of_the_series():
    assert near_miss.numbered_apart("How did physio session 4 go?", "Physio session 3 done, knee feels looser.")
    assert not near_miss.numbered_apart("How did physio session 3 go?", "Physio session 3 done, knee feels looser.")
    # A date is no series: "May 3" does not number a May.
    assert not near_miss.numbered_apart("What did I book for May 3?", "Booked the dentist for May 9.")


@needs_meaning
def test_a_note_on_another_of_a_numbered_series_is_no_answer(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    session = memory_factory("Physio session 3 done, knee feels looser.")
    memory_factory("Allotment plot 14 approved, rent is 45 pounds a year.")
    assert NOTHING in answer_question(owner=user, question="How did physio session 4 go?").answer
    assert answer_question(owner=user, question="How did physio session 3 go?").cited == [session.pk]
