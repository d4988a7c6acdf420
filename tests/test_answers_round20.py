"""Round 20: a period the question names answers it alone only when nothing else is asked.

Found when a test passed every weekday and failed on a Saturday: "the weekend" then holds
the day the notes were stored, recall matched every note by that date, and whatever Priya
said that day was quoted as what she fixed.
"""

from datetime import datetime
from datetime import timezone as tz

import pytest
from django.utils import timezone

from memories import textutil
from memories.llm.extractive import near_miss
from memories.services import answer_question
from tests.test_offline_engine import needs_meaning

NOTHING = "couldn't find anything"

SATURDAY = datetime(2026, 12, 5, 10, 0, tzinfo=tz.utc)
WEDNESDAY = datetime(2026, 12, 9, 10, 0, tzinfo=tz.utc)


@pytest.fixture(params=[SATURDAY, WEDNESDAY], ids=["saturday", "wednesday"])
def today(request, monkeypatch):
    """Every clock the service reads (storing, recalling) says this day."""
    monkeypatch.setattr(timezone, "now", lambda: request.param)
    return request.param


def test_what_someone_said_that_weekend_is_not_what_was_asked(today, user, memory_factory):
    memory_factory("Tom: Congrats Priya! I spent the weekend fixing the roof of our cabin.", occurred_at=today)
    memory_factory("Priya: I finished the pottery course.", occurred_at=today)
    assert NOTHING in answer_question(owner=user, question="What did Priya fix over the weekend?").answer
    assert answer_question(owner=user, question="What did Tom fix over the weekend?").cited


def test_a_question_that_asks_only_the_period_is_answered_by_it(user, memory_factory, monkeypatch):
    """A question asking nothing but the period ("What did I do at the weekend?") is answered by what was noted then."""
    monkeypatch.setattr(timezone, "now", lambda: WEDNESDAY)
    memory_factory("Took the kids to the aquarium, then pizza at Luca's.", occurred_at=SATURDAY)
    memory_factory("Dentist check-up, no fillings.", occurred_at=datetime(2026, 11, 20, 9, 0, tzinfo=tz.utc))
    result = answer_question(owner=user, question="What did I do over the weekend?")
    assert "aquarium" in result.answer, result.answer
    assert "Dentist" not in result.answer, result.answer


def test_a_line_of_that_weekend_that_says_what_is_asked_is_quoted(today, user, memory_factory):
    memory_factory("Priya: I fixed the garden gate, it had been hanging off one hinge for months.", occurred_at=today)
    memory_factory("Priya: I finished the pottery course.", occurred_at=today)
    result = answer_question(owner=user, question="What did Priya fix over the weekend?")
    assert "garden gate" in result.answer, result.answer
    assert "pottery" not in result.answer, result.answer


# By meaning (the local embedding layer): what a line says in other words.


NOTES = [
    "Bought a new pair of running shoes, Brooks Ghost 15.",
    "Mum's recipe for lentil soup: onions, carrots, red lentils, cumin.",
    "Car insurance renews every November with Lemonade.",
    "Met Jamal at the photography meetup; he shoots film on a Pentax.",
    "Kitchen tap dripping again, washer needs replacing.",
    "Book club picked 'Piranesi' for next month.",
]


@needs_meaning
def test_a_line_clearly_nearest_the_question_says_what_it_names_in_other_words(user, memory_factory, local_embeddings):
    """The owner never wrote "savings": an ISA is what they save in, and the line stands out."""
    for text in NOTES:
        memory_factory(text)
    isa = memory_factory("Paid £750 into my Lifetime ISA today. Balance now £9,340, the bonus lands next month.")
    result = answer_question(owner=user, question="What's the current balance of my ISA savings?")
    assert result.cited and result.cited[0] == isa.pk, result.answer
    assert "9,340" in result.answer
    # Still not a reason to answer what the notes never say.
    assert NOTHING in answer_question(owner=user, question="What is the balance of my Premium Bonds?").answer


@needs_meaning
def test_the_date_a_line_gives_is_not_a_neighbour_of_what_is_asked(user, memory_factory, local_embeddings):
    """The month a line gives ("physio -> 17 June") does not stand in for the appointment."""
    line = "physio -> 17 June 08:40"
    assert not near_miss.stands_for_another("When is my physio appointment?", line, frozenset(textutil.terms(line)), set())
    # A sibling in its place still is one.
    vet = "Took Pixel (the dog) to Dr Alvarez at Greenway Vets"
    assert near_miss.stands_for_another("Who is the cat's vet?", vet, frozenset(textutil.terms(vet)), set())
    memory_factory("Physio booked for Tuesday 3 June at 8am with Lena, lower back.")
    moved = memory_factory(line)
    result = answer_question(owner=user, question="When is my physio appointment?")
    assert result.cited and result.cited[0] == moved.pk, result.answer
