"""A question asking when, about an event told more than once (planned, done, recalled):
the mention that dates it on the side of its day the question asks about goes first."""

from datetime import date, datetime

import pytest
from django.utils import timezone

from memories.recall import recall
from memories.recall.dates import event_spans, time_asked, told_as

pytestmark = pytest.mark.django_db


def when(y, m, d):
    return timezone.make_aware(datetime(y, m, d, 12, 0))


def test_the_time_a_question_asks_about():
    assert time_asked("When did Ann run the marathon?") == "past"
    assert time_asked("In which month was the wedding?") == "past"
    assert time_asked("When is Ann going to run the marathon?") == "ahead"
    assert time_asked("When will the baby be born?") == "ahead"
    assert time_asked("When is Ann planning on going camping?") == "ahead"
    assert time_asked("When does the course start?") == ""


def test_which_side_of_its_day_a_line_tells():
    said = date(2023, 5, 8)
    assert told_as(event_spans("I ran the race yesterday.", said), said) == {"past"}
    assert told_as(event_spans("The race is next month.", said), said) == {"ahead"}
    assert told_as(event_spans("I'm running today!", said), said) == {"past", "ahead"}
    assert told_as(event_spans("The race was tough.", said), said) == set()


def mentions(memory_factory):
    """One race told three times: signed up for ahead, run, remembered later."""
    plan = memory_factory(
        "Ann: I signed up for the river race, it's next month. Training for the river race starts now.",
        source="chat:D1:3",
        occurred_at=when(2023, 4, 2),
    )
    done = memory_factory(
        "Ann: I did it, I finished the river race yesterday!", source="chat:D2:1", occurred_at=when(2023, 5, 22)
    )
    later = memory_factory(
        "Ann: That river race run still makes my knees ache, it was such a long hard day.",
        source="chat:D3:5",
        occurred_at=when(2023, 9, 10),
    )
    for i in range(8):
        memory_factory(
            f"Ben: An ordinary remark number {i} about the garden.", source=f"chat:D{i + 4}:1", occurred_at=when(2023, 6, 1 + i)
        )
    return plan, done, later


def test_when_did_finds_the_mention_that_dates_it_as_done(user, memory_factory):
    plan, done, later = mentions(memory_factory)
    ids = recall(
        owner=user, question="When did Ann run the river race?", strategy="hybrid", k=10, now=when(2024, 1, 1)
    ).memory_ids
    assert ids.index(done.pk) < ids.index(later.pk)
    assert ids.index(done.pk) < ids.index(plan.pk)


def test_when_is_going_to_finds_the_mention_that_tells_it_ahead(user, memory_factory):
    plan, done, later = mentions(memory_factory)
    ids = recall(
        owner=user, question="When is Ann going to run the river race?", strategy="hybrid", k=10, now=when(2024, 1, 1)
    ).memory_ids
    assert ids.index(plan.pk) < ids.index(done.pk)
    assert ids.index(plan.pk) < ids.index(later.pk)
