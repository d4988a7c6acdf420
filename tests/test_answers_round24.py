"""Round 24 (issue 25): found on update scenarios written by someone who read none of the
code. A question about what held before something names that something ("Where did I work
before Dunmore Bank?"), and the older note never does: the answer said it found nothing
though recall ranked the older note first; and where no update was marked, it quoted the
note about that something ("... before Octopus?" answered by the Octopus welcome pack)."""

import pytest

from memories import textutil
from memories.services import answer_question
from memories.services.updates import mark_superseded
from tests.test_offline_engine import needs_meaning

BACKGROUND = [
    "Sourdough starter smells like nail varnish, feed it twice tomorrow.",
    "Swapped the bathroom tap washer, no more drip.",
    "Lent Priya the camping stove, get it back before August.",
]


@pytest.mark.parametrize(
    "question, asked",
    [
        ("Which choir did I sing with before the Northside Singers?", "Which choir did I sing with?"),
        ("What was my landline before BT moved the line?", "What was my landline?"),
        ("Qui était mon dentiste avant le Dr Roux ?", "Qui était mon dentiste?"),
        ("¿Con qué banco estaba antes del BBVA?", "¿Con qué banco estaba?"),
        # An event told by a verb ("before meeting Maria") is not the later value.
        ("What did Jean go through before meeting Maria?", "What did Jean go through before meeting Maria?"),
        # Not a question about the time before, or nothing after "before": as asked.
        ("What do I need before the trip?", "What do I need before the trip?"),
        ("Which choir did I sing with before?", "Which choir did I sing with before?"),
        # A date after "before" is read as a date by recall.
        ("What did I plant the week before 12 May?", "What did I plant the week before 12 May?"),
    ],
)
def test_what_a_question_dates_the_time_before_by(question, asked):
    assert textutil.without_later_mark(question) == asked


@needs_meaning
def test_a_question_about_the_time_before_a_named_value_quotes_the_older_note(user, memory_factory, local_embeddings):
    for text in BACKGROUND:
        memory_factory(text)
    old = memory_factory("I sing with the Harbour Street Choir on Tuesdays, alto section.", occurred_at="2024-03-04")
    new = memory_factory("Joined the Northside Singers, rehearsals Thursday nights.", occurred_at="2025-02-10")
    mark_superseded(old=old, new=new, reason="test")
    result = answer_question(owner=user, question="Which choir did I sing with before the Northside Singers?")
    assert result.cited and result.cited[0] == old.pk, result.answer
    assert "Harbour Street" in result.answer


@needs_meaning
def test_a_question_about_the_time_before_x_does_not_quote_the_note_about_x(user, memory_factory, local_embeddings):
    # No update marked: the newer note tells the change by an event ("welcome pack arrived").
    for text in BACKGROUND:
        memory_factory(text)
    memory_factory("Gas and electric are with EDF, £96 a month by direct debit.", occurred_at="2024-03-04")
    new = memory_factory(
        "Bulb Energy welcome pack arrived today. First DD of £70 goes out on the 20th.", occurred_at="2025-02-10"
    )
    result = answer_question(owner=user, question="Which energy company was I with before Bulb?")
    assert new.pk not in result.cited, result.answer


@needs_meaning
def test_the_note_of_the_time_after_comes_last_when_it_superseded_the_one_asked(user, memory_factory, local_embeddings):
    # Recall ranks the newer note first (it names "Dunmore Bank"); the older is what is asked.
    old = memory_factory("Started at Pellworth Insurance as a claims handler. Parking is a nightmare.", occurred_at="2024-02-11")
    new = memory_factory("First day at Dunmore Bank, my desk faces the river", occurred_at="2025-02-10")
    mark_superseded(old=old, new=new, reason="test")
    result = answer_question(owner=user, question="Where did I work before Dunmore Bank?")
    assert result.cited[:1] == [old.pk], result.answer
