"""A question asking when, about an event told more than once (planned, done, recalled):
the mention that dates it on the side of its day the question asks about goes first."""

from datetime import date, datetime

import pytest
from django.utils import timezone

from memories.recall import recall
from memories.recall.dates import asks_time, event_spans, time_asked, told_as

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


def test_a_state_told_with_its_length_dates_when_it_began():
    said = date(2023, 5, 8)
    (surfing,) = event_spans("John: I've been surfing for five years now.", said)
    assert surfing.start <= date(2018, 5, 8) <= surfing.end and surfing.end < date(2020, 1, 1)
    (turtles,) = event_spans("I have had them for 3 years, they're family.", said)
    assert turtles.start <= date(2020, 5, 8) <= turtles.end
    (film,) = event_spans("It's been a favorite of mine for like 3 years.", said)
    assert film.start <= date(2020, 5, 8) <= film.end
    (decade,) = event_spans("We've lived in this house for over a decade.", said)
    assert decade.start <= date(2013, 5, 8) <= decade.end
    assert told_as((surfing,), said) == {"past"}
    # Only the perfect says the time runs up to the day it was said.
    assert event_spans("We were there for two weeks.", said) == ()
    assert event_spans("I had that car for two years before it broke down.", said) == ()
    assert event_spans("Thanks for having me, see you in a bit.", said) == ()


def test_how_long_has_asks_for_a_time():
    assert asks_time("How long has Nate had his turtles?")
    assert asks_time("How long have Ann and Ben been together?")
    assert time_asked("How long has Nate had his turtles?") == "past"
    assert not asks_time("How long did the drive to Lyon take?")
    assert not asks_time("How long is the river race?")
    # A count of a unit of time asks for one too; a count of events does not.
    assert asks_time("How many weeks passed between Maria adopting Coco and Shadow?")
    assert asks_time("How many years ago did Dana do the wine tour?")
    assert not asks_time("How many times did Dana go to Lisbon?")
    assert not asks_time("How many dogs does Audrey have?")


def test_how_long_finds_the_line_that_tells_how_long(user, memory_factory):
    """The line that says for how long goes above lines about the same thing that date nothing."""
    told = memory_factory("Nate: I've had my turtles for three years now.", source="chat:D1:4", occurred_at=when(2022, 3, 1))
    others = [
        memory_factory(text, source=f"chat:D{n}:2", occurred_at=when(2022, 3 + n, 2))
        for n, text in enumerate(
            [
                "Nate: My turtles love the new tank, the turtles had a great time.",
                "Nate: The turtles had lettuce for lunch, my turtles are spoiled.",
                "Joanna: Your turtles are cute, Nate, I had a look at the photos.",
            ],
            start=2,
        )
    ]
    for i in range(8):
        memory_factory(
            f"Ben: An ordinary remark number {i} about the garden.", source=f"chat:D{i + 6}:1", occurred_at=when(2022, 9, 1 + i)
        )
    ids = recall(
        owner=user, question="How long has Nate had his turtles?", strategy="hybrid", k=10, now=when(2023, 1, 1)
    ).memory_ids
    assert all(ids.index(told.pk) < ids.index(o.pk) for o in others)
