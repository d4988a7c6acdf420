"""Recall by dates: a memory's own words dated from the day it was said, matched to the
question's dates as intervals, whatever the way either writes them."""

from datetime import date, datetime

import pytest
from django.utils import timezone

from memories.recall import date_spans, recall
from memories.recall.dates import asks_time, event_spans

pytestmark = pytest.mark.django_db


def when(y, m, d):
    return timezone.make_aware(datetime(y, m, d, 12, 0))


def hybrid(owner, question, k=10, **kw):
    return recall(owner=owner, question=question, strategy="hybrid", k=k, **kw)


def spans_of(text, today):
    return [(s.start, s.end) for s in date_spans(text, today=today)]


def test_a_memory_says_when_counting_from_the_day_it_was_said():
    said = date(2023, 5, 8)  # a Monday
    assert [(s.start, s.end) for s in event_spans("I went to a support group yesterday.", said)] == [
        (date(2023, 5, 7), date(2023, 5, 7))
    ]
    assert spans_of("Dinner with Mum last night", said) == [(date(2023, 5, 7), date(2023, 5, 7))]
    assert spans_of("ran a charity race last Saturday", said) == [(date(2023, 5, 6), date(2023, 5, 6))]
    assert spans_of("camping next month", said) == [(date(2023, 6, 1), date(2023, 6, 30))]
    assert spans_of("haircut next Tuesday", said) == [(date(2023, 5, 9), date(2023, 5, 9))]
    assert spans_of("lost my watch on 3/4", said) == [(date(2023, 3, 4), date(2023, 3, 4))]
    assert spans_of("party on 25/12/2022", said) == [(date(2022, 12, 25), date(2022, 12, 25))]
    # A bare fraction or a decimal is not a date.
    assert spans_of("add 1/2 cup of flour, bake 1.5 hours", said) == []
    # A month with no year is the one nearest the day it was said, not any year's.
    assert [(s.start, s.end) for s in event_spans("We moved in March.", said)] == [(date(2023, 3, 1), date(2023, 3, 31))]


def test_a_relative_phrase_in_a_question_counts_from_the_date_it_names():
    today = date(2026, 12, 1)
    assert (date(2023, 6, 2), date(2023, 6, 8)) in spans_of("What did Ann do the week before 9 June 2023?", today)
    assert (date(2023, 4, 8), date(2023, 4, 9)) in spans_of("What did Ann do last weekend before April 10, 2023?", today)
    assert (date(2023, 7, 14), date(2023, 7, 14)) in spans_of("Where was Ann the Friday before 15 July 2023?", today)
    # With no date named, from today.
    assert spans_of("What did Ann do last weekend?", date(2023, 4, 10)) == [(date(2023, 4, 8), date(2023, 4, 9))]


def test_questions_that_ask_for_a_time():
    for question in ("When did Ann move?", "In which month did Ann swim?", "What year did Ann start?", "How long ago was it?"):
        assert asks_time(question), question
    for question in ("What did Ann do when it rained?", "Which book did Ann read?", "Where did Ann go?"):
        assert not asks_time(question), question


def test_a_question_by_date_finds_the_memory_that_tells_of_that_day_later(user, memory_factory):
    # Three dinners; the one of 1 February is told the next day as "last night".
    mum = memory_factory("Had dinner with Mum last night at the Thai place.", occurred_at=when(2025, 2, 2))
    leo = memory_factory("Had dinner with Leo at the Thai place.", occurred_at=when(2025, 2, 3))
    memory_factory("Had dinner with Ana at the Thai place.", occurred_at=when(2025, 1, 30))
    result = hybrid(user, "Who did I have dinner with on February 1?", now=when(2025, 12, 1))
    assert result.memory_ids[0] == mum.pk
    assert result.memory_ids.index(mum.pk) < result.memory_ids.index(leo.pk)
    assert any("tells of 1 February 2025" in r for r in result.memories[0].reasons)


def test_the_date_arm_reads_what_was_told_weeks_later_and_plans_told_ahead(user, memory_factory):
    # No word of the question is in either memory: only their dates bring them in.
    later = memory_factory("The lake loop two weeks ago was hard going.", occurred_at=when(2025, 5, 3))
    ahead = memory_factory("Booked a haircut for next Tuesday.", occurred_at=when(2025, 5, 29))
    for i in range(40):
        memory_factory(f"Ordinary note {i}: emails and groceries.", occurred_at=when(2025, 3, 1 + i % 28))
    got = hybrid(user, "What happened on 19 April 2025?", k=5, now=when(2025, 12, 1)).memory_ids
    assert later.pk in got
    got = hybrid(user, "What was on 2025-06-03?", k=5, now=when(2025, 12, 1)).memory_ids
    assert ahead.pk in got


def test_a_vague_mention_counts_less_than_a_memory_of_that_very_day(user, memory_factory):
    year = memory_factory("Our trip to Porto last year was the best.", occurred_at=when(2023, 5, 1))
    march = memory_factory("Our trip to Porto yesterday was the best.", occurred_at=when(2022, 3, 13))
    ids = hybrid(user, "Which trip did I take in March 2022?", now=when(2024, 1, 1)).memory_ids
    assert ids.index(march.pk) < ids.index(year.pk)


def test_a_question_asking_when_does_not_search_for_the_unit_it_asks(user, memory_factory):
    swim = memory_factory("Swam in the lake at Tegel, the water was cold.", occurred_at=when(2024, 6, 2))
    month = memory_factory("This month has been busy at work.", occurred_at=when(2024, 6, 20))
    ids = hybrid(user, "In which month did I swim in the lake?", now=when(2024, 12, 1)).memory_ids
    assert ids[0] == swim.pk
    assert month.pk not in ids


def test_the_date_arm_reads_only_the_owners_memories(user, other_user, memory_factory):
    mine = memory_factory("Quiet evening at home last night.", occurred_at=when(2025, 2, 2))
    theirs = memory_factory("Dinner with Mum last night.", owner=other_user, occurred_at=when(2025, 2, 2))
    ids = hybrid(user, "What did I do on 1 February 2025?", now=when(2025, 12, 1)).memory_ids
    assert mine.pk in ids and theirs.pk not in ids


def test_the_quick_test_for_a_date_answers_as_the_full_one_does():
    # _may_name_a_date only skips the regex; it must never answer otherwise: every word
    # the regex's alternatives hold, in any case, alone and inside other words, beside
    # texts with no date, digits of other scripts and letters that fold to ASCII ones.
    from memories.recall.dates import _MAYBE_A_DATE, _may_name_a_date

    words = [
        *"January Jan February Feb. March Mar April Apr May June Jun July Jul August Aug September Sept Sep".split(),
        *"October Oct November Nov December Dec yesterday today tonight tomorrow night morning".split(),
        *"week weeks weekend weekends month months year years day days Monday Tuesday Wednesday".split(),
        *"Thursday Friday Saturday Sunday summer winter spring fall autumn".split(),
        *"fortnight fortnights Christmas Xmas Easter Halloween Valentine Valentines Valentine's Thanksgiving".split(),
    ]
    texts = ["", "We talked about the garden and nothing else.", "Marco met Omar; Julia decided.", "dismayed", "doctor"]
    for word in words:
        for form in (word, word.upper(), word.lower(), word.title()):
            texts += [form, f"see you {form}!", f"x{form}y", f"the {form}s plan", f"{form}_1"]
    texts += ["in ٣ days", "on the ٢٠ of May", "ſummer camp", "last \u212aeek", "FRİDAY", "Ｍay 2", "no date, 7"]
    for text in texts:
        assert _may_name_a_date(text) == bool(_MAYBE_A_DATE.search(text)), text


def test_the_other_ways_people_date_what_they_tell():
    # Each counted from the day it was said, as vague as it sounds (issue 31: conversations
    # that date things otherwise than "yesterday" and "last week" were read as undated).
    def told(text, said):
        return [(s.start, s.end) for s in event_spans(text, said)]

    assert told("They took the wall out the day before yesterday.", date(2021, 9, 30)) == [(date(2021, 9, 28), date(2021, 9, 28))]
    assert told("I went skating the other day.", date(2023, 3, 16)) == [(date(2023, 3, 9), date(2023, 3, 15))]
    assert told("Finished my proposal a couple of days ago.", date(2023, 5, 11)) == [(date(2023, 5, 8), date(2023, 5, 10))]
    assert told("Got the tattoo a few years back.", date(2023, 2, 8)) == [(date(2018, 2, 9), date(2021, 2, 8))]
    assert told("The cast comes off in a couple of weeks.", date(2021, 10, 22)) == [(date(2021, 10, 29), date(2021, 11, 12))]
    assert told("I broke my wrist a fortnight ago.", date(2021, 10, 22)) == [(date(2021, 10, 6), date(2021, 10, 10))]
    # Said on a Tuesday, "over the weekend" is the Saturday and Sunday just gone.
    assert told("Steamed the ribs over the weekend.", date(2023, 9, 19)) == [(date(2023, 9, 16), date(2023, 9, 17))]
    assert told("Come for tea this coming Thursday?", date(2022, 2, 8)) == [(date(2022, 2, 10), date(2022, 2, 10))]
    assert told("Papa is home since Wednesday.", date(2024, 3, 23)) == [(date(2024, 3, 20), date(2024, 3, 20))]
    # "On the 22nd" is the 22nd nearest the day: said on 2 January, the December one.
    assert told("The results came on the 22nd.", date(2024, 1, 2)) == [(date(2023, 12, 22), date(2023, 12, 22))]
    assert told("I start on the 21st.", date(2022, 11, 14)) == [(date(2022, 11, 21), date(2022, 11, 21))]
    # "the 8th of January" is a day of a month, not an ordinal alone.
    # A day without a year in a memory is the nearest one: plans are told ahead.
    assert told("Three weeks, from the 8th of January.", date(2024, 11, 3)) == [(date(2025, 1, 8), date(2025, 1, 8))]
    assert told("Flying out on the 14th of December.", date(2023, 11, 28)) == [(date(2023, 12, 14), date(2023, 12, 14))]
    # In a question it is still the last one before the day it is asked.
    assert spans_of("Who did I meet on 14 December?", date(2023, 11, 28)) == [(date(2022, 12, 14), date(2022, 12, 14))]


def test_days_named_by_the_calendar():
    def told(text, said):
        return [(s.start, s.end) for s in event_spans(text, said)]

    # Without a year, the one nearest the day it is said of.
    assert told("My brother got engaged on Christmas Eve.", date(2023, 1, 2)) == [(date(2022, 12, 24), date(2022, 12, 24))]
    assert told("We got back on Boxing Day.", date(2021, 12, 27)) == [(date(2021, 12, 26), date(2021, 12, 26))]
    assert told("We found out just after Valentine's.", date(2022, 3, 20)) == [(date(2022, 2, 14), date(2022, 2, 14))]
    # Easter moves: Sunday 17 April in 2022, 31 March in 2024.
    assert told("I spent Easter Sunday with Susan.", date(2022, 4, 21)) == [(date(2022, 4, 17), date(2022, 4, 17))]
    assert spans_of("Who came at Easter 2024?", date(2026, 12, 1)) == [(date(2024, 3, 31), date(2024, 3, 31))]
    # The fourth Thursday of November.
    assert told("Thanksgiving was lovely.", date(2023, 11, 28)) == [(date(2023, 11, 23), date(2023, 11, 23))]
    assert told("Worked on New Year's Eve.", date(2024, 1, 2)) == [(date(2023, 12, 31), date(2023, 12, 31))]
    # A holiday anchors a relative phrase as a date does.
    assert (date(2024, 2, 9), date(2024, 2, 9)) in spans_of(
        "What did Priya do the Friday before Valentine's Day 2024?", date(2026, 12, 1)
    )


def test_a_question_by_date_finds_a_vaguely_dated_memory(user, memory_factory):
    # "a couple of days ago", said on 11 May, tells of 8-10 May: the only words of the
    # question are its date, so only the date brings it in.
    proposal = memory_factory("Finished my dissertation proposal a couple of days ago.", occurred_at=when(2023, 5, 11))
    for i in range(40):
        memory_factory(f"Ordinary note {i}: emails and groceries.", occurred_at=when(2023, 3, 1 + i % 28))
    got = hybrid(user, "What did I finish on 9 May 2023?", k=5, now=when(2025, 12, 1)).memory_ids
    assert proposal.pk in got


def test_a_stored_reading_of_dates_from_an_earlier_version_is_not_used(user, memory_factory):
    # A value stored by a reading that did not know "the other day" agrees with the text
    # and the day but not with the reading: it is read again.
    from memories.recall import dates

    said = date(2023, 3, 16)
    text = "I went skating the other day."
    old = dates.EVENT_READING
    try:
        dates.EVENT_READING = "1:"
        stale = dates.stored_event_dates(text, said).replace('"the other day"', '"x"')
    finally:
        dates.EVENT_READING = old
    assert [s.start for s in dates.events_of(text, said, stale)] == [date(2023, 3, 9)]


def test_a_speakers_line_that_dates_what_she_did_outranks_her_short_lines(user, memory_factory, monkeypatch):
    # "What did Ann do on 10 July?": the only words are her name and the date. Her name
    # opens every line of hers and matches the shortest best ("Ann: Bye!"); the line that
    # tells of 10 July ("two days ago", said on the 12th) is long. Her name is left to
    # the speaker rule, and the date picks among her lines (issue 31). With her name
    # searched as a word (SPEAKER_NAMES_AS_WORDS = 2) this fails: her short lines said
    # near the date come first.
    from memories.recall import hybrid as hybrid_module

    monkeypatch.setattr(hybrid_module, "SPEAKER_NAMES_AS_WORDS", 1)
    told = memory_factory(
        "Ann: Hey Bo, so much has happened since we last spoke, I went to a pottery fair two days ago "
        "and it was wonderful to see all the makers and their glazes, I bought a blue bowl.",
        source="chat:D7:1",
        occurred_at=when(2023, 7, 12),
    )
    for i in range(30):
        memory_factory(
            f"Ann: {['Bye!', 'Ok!', 'Ha, nice.', 'Sure thing.', 'Yes!'][i % 5]}",
            source=f"chat:D{7 + i % 3}:{i + 2}",
            occurred_at=when(2023, 7, 9 + i % 6),
        )
        memory_factory(f"Bo: Ann, how was day {i}?", source=f"chat:D{7 + i % 3}:{i + 40}", occurred_at=when(2023, 7, 9 + i % 6))
    ids = hybrid(user, "What did Ann do on 10 July 2023?", k=5, now=when(2026, 12, 1)).memory_ids
    assert ids[0] == told.pk


def test_the_days_of_rows_are_remembered_without_keeping_the_collector_busy():
    """local_day remembers the day of each time it is asked, hundreds a question: what it
    keeps must not stay on the garbage collector's books (a key holding the zone did, and
    the full collections it brought on were recall's slowest questions)."""
    import gc
    from datetime import timedelta
    from zoneinfo import ZoneInfo

    from memories.recall.dates import local_day

    zone = ZoneInfo("Pacific/Auckland")
    start = datetime(2031, 1, 1, 11, 30)  # naive, as SQLite's rows hand it over
    times = [start + timedelta(hours=i) for i in range(3000)]
    gc.collect()
    before = len(gc.get_objects())
    days = [local_day(t, zone) for t in times]
    gc.collect()
    assert len(gc.get_objects()) - before < 100
    assert days == [t.replace(tzinfo=timezone.UTC).astimezone(zone).date() for t in times]
    assert local_day(times[0], ZoneInfo("America/Anchorage")) == date(2031, 1, 1)  # another zone, its own day


def test_a_time_question_can_leave_the_persons_name_to_the_speaker_rule(user, memory_factory, monkeypatch):
    # "When did Tom hurt his back?": Tom's name opens every line of his and, searched as a
    # word, matched his shortest best ("Tom: Oh fun!"); the line that tells what he did
    # shares one other word with the question. A question that asks for a time leaves the
    # name to the speaker rule, as one that names a date does (issue 31), when
    # NAMES_AS_WORDS_WHEN_TIME_ASKED is off (it is on: see its comment).
    from memories.recall import hybrid as hybrid_module

    monkeypatch.setattr(hybrid_module, "NAMES_AS_WORDS_WHEN_TIME_ASKED", False)
    told = memory_factory(
        "Tom: I hurt my back lifting the new sofa a couple of weeks ago and I've been seeing a physio ever since, "
        "which has been slow going but the exercises are starting to help a little.",
        source="chat:D6:22",
        occurred_at=when(2022, 11, 12),
    )
    for i in range(30):
        memory_factory(
            f"Tom: {['Oh fun!', 'Ha, nice.', 'Right?', 'Sure thing.', 'Yes!'][i % 5]}",
            source=f"chat:D{1 + i % 9}:{i + 2}",
            occurred_at=when(2022, 1 + i % 9, 3),
        )
        memory_factory(
            f"Priya: Day {i} was long, I only got back from the school at seven and then marked homework until late.",
            source=f"chat:D{1 + i % 9}:{i + 40}",
            occurred_at=when(2022, 1 + i % 9, 3),
        )
    ids = hybrid(user, "When did Tom injure his back?", k=5, now=when(2026, 12, 1)).memory_ids
    assert ids[0] == told.pk


@pytest.mark.parametrize(
    "text, first, last",
    [
        ("in the summer of 2022", date(2022, 6, 1), date(2022, 8, 31)),
        ("spring 2024", date(2024, 3, 1), date(2024, 5, 31)),
        ("the winter of 2021", date(2021, 12, 1), date(2022, 2, 28)),
        ("early 2023", date(2023, 1, 1), date(2023, 4, 30)),
        ("mid-2022", date(2022, 5, 1), date(2022, 8, 31)),
        ("by the end of 2022", date(2022, 9, 1), date(2022, 12, 31)),
        ("late May 2023", date(2023, 5, 21), date(2023, 5, 31)),
        ("at the beginning of March, 2023", date(2023, 3, 1), date(2023, 3, 10)),
    ],
)
def test_a_part_of_a_year_or_a_month_is_that_part_not_the_whole(text, first, last):
    # Read as the year or the month it names, "the summer of 2022" credited every line of
    # 2022 as much as those of its summer.
    assert spans_of(f"What did Luis do {text}?", date(2026, 12, 1)) == [(first, last)]


def test_a_part_of_a_month_named_without_a_year_is_that_month_and_may_the_verb_is_none():
    today = date(2026, 12, 1)
    assert [(s.month, s.start) for s in date_spans("What did she plant in late March?", today=today)] == [(3, None)]
    assert date_spans("Leaving early may be best.", today=today) == []
