"""Round 20: a period the question names answers it alone only when nothing else is asked.

Found when a test passed every weekday and failed on a Saturday: "the weekend" then holds
the day the notes were stored, recall matched every note by that date, and whatever Priya
said that day was quoted as what she fixed.
"""

from datetime import datetime
from datetime import timezone as tz

import pytest
from django.utils import timezone

from memories.services import answer_question

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
