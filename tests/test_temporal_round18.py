"""Round 18 (issue 31): the ways a chat dates what it tells that the reading of dates
missed on LoCoMo dev's temporal questions: a weekday as people shorten it ("last Fri",
"since Tues") and a length told without "for" ("Seven years now", "it's been two years
since I quit"). Each failed on the reading before."""

from datetime import date, datetime

import pytest
from django.utils import timezone

from memories.recall import recall
from memories.recall.dates import _MAYBE_A_DATE, _may_name_a_date, event_spans

pytestmark = pytest.mark.django_db


def when(y, m, d):
    return timezone.make_aware(datetime(y, m, d, 12, 0))


def told(text, said):
    return [(s.start, s.end) for s in event_spans(text, said)]


def test_a_weekday_shortened_as_in_a_chat():
    saturday = date(2023, 7, 15)
    assert told("Last Fri I finally took my kids to a pottery workshop.", saturday) == [(date(2023, 7, 14), date(2023, 7, 14))]
    assert told("I just joined a new activist group last Tues.", saturday) == [(date(2023, 7, 11), date(2023, 7, 11))]
    assert told("see you next thurs!", saturday) == [(date(2023, 7, 20), date(2023, 7, 20))]
    assert told("On Sun we hiked up to the lake.", saturday) == [(date(2023, 7, 9), date(2023, 7, 9))]
    # Four of the short forms are words of their own in lower case: read capitalised only.
    assert told("We sat on sun loungers all afternoon.", saturday) == []
    assert told("Since wed I've been so tired.", saturday) == []


def test_a_length_told_on_its_own_dates_when_it_began():
    said = date(2023, 9, 13)
    (began,) = told("Seven years now, and I've finally found my real muses: painting and pottery.", said)
    assert began[0] <= date(2016, 9, 13) <= began[1] < date(2018, 1, 1)
    (quit,) = told("It's been two years since I quit smoking.", said)
    assert quit[0] <= date(2021, 9, 13) <= quit[1] < date(2022, 6, 1)
    # Told once, not twice, when both ways are in one sentence.
    assert len(told("I've been running for about two years now.", said)) == 1
    # Over before the day it was said, or the time since two people last talked: no date.
    assert told("He was part of our family for 10 years.", said) == []
    assert told("It's been a week since we talked!", said) == []


def test_the_quick_test_agrees_on_the_short_weekdays():
    for word in "Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun mon tues thurs fri sat sun".split():
        for text in (word, f"last {word}", f"x{word}y", f"the {word}s plan", f"last {word}."):
            assert _may_name_a_date(text) == bool(_MAYBE_A_DATE.search(text)), text


def test_when_finds_the_line_that_dates_it_with_a_short_weekday(user, memory_factory):
    # The line that dates the join ("last Tues") goes above the later lines that tell of
    # the same group and date nothing.
    joined = memory_factory(
        "Caroline: A lot's happened - I just joined a new activist group last Tues. Meeting so many cool people!",
        source="chat:D14:1",
        occurred_at=when(2023, 7, 20),
    )
    others = [
        memory_factory(text, source=f"chat:D{n}:3", occurred_at=when(2023, 8, n))
        for n, text in enumerate(
            [
                "Caroline: Since I joined the new activist group I have made so many friends.",
                "Melanie: So glad you joined a new activist group, Caroline!",
                "Caroline: Joining a new activist group was the best thing I ever did.",
            ],
            start=15,
        )
    ]
    for i in range(8):
        memory_factory(
            f"Melanie: An ordinary remark number {i} about the garden.",
            source=f"chat:D{i + 2}:1",
            occurred_at=when(2023, 5, 1 + i),
        )
    ids = recall(
        owner=user, question="When did Caroline join a new activist group?", strategy="hybrid", k=10, now=when(2023, 12, 1)
    ).memory_ids
    assert ids[0] == joined.pk, ids
    assert all(ids.index(joined.pk) < ids.index(o.pk) for o in others if o.pk in ids)
