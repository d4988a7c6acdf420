"""What recall reads of a memory on every question and is worked out when the memory is
written (Memory.event_dates: the times its words name; Memory.context_cost: what showing
it costs): stored by every way a memory is written, kept right by an edit, and never
used once it no longer agrees with the memory (a path that bypassed save)."""

from datetime import date, datetime
from importlib import import_module

import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone

from memories.llm.base import AnswerContext
from memories.models import Memory
from memories.recall import recall
from memories.recall import budget
from memories.recall.candidates import fetch
from memories.recall.dates import _listed_spans, date_pool, date_spans, event_dates_of, event_spans, events_of
from memories.recall.result import memory_note
from memories.services.bulk import bulk_remember
from memories.services.lifecycle import update_memory
from memories.textutil import estimate_tokens

pytestmark = pytest.mark.django_db


def when(y, m, d):
    return timezone.make_aware(datetime(y, m, d, 12, 0))


def rendered_cost(memory, brief=False):
    return estimate_tokens(AnswerContext(memories=[memory_note(memory, brief=brief)]).render())


def stored_spans(memory):
    """The spans recall reads for the memory from its stored value alone."""
    return _listed_spans(memory.event_dates.split(" ", 3)[3])


def fresh(memory):
    return Memory.all_objects.get(pk=memory.pk)


def test_a_saved_memory_stores_the_times_its_words_name_and_its_cost(user, memory_factory):
    m = fresh(memory_factory("Ann: I ran a charity race last Saturday, then we went to Lisbon.", occurred_at=when(2023, 5, 8)))
    assert stored_spans(m) == event_spans(m.raw_text, date(2023, 5, 8)) != ()
    assert m.context_cost is not None
    for brief in (False, True):
        assert budget._cost(m, brief=brief) == rendered_cost(m, brief)


def test_an_edit_of_the_day_keeps_the_stored_dates_right(user, memory_factory):
    m = memory_factory("I went to a support group yesterday.", occurred_at=when(2023, 5, 8))
    assert [(s.start, s.end) for s in stored_spans(fresh(m))] == [(date(2023, 5, 7), date(2023, 5, 7))]
    update_memory(owner=user, memory_id=m.pk, changes={"occurred_at": "2024-02-10T12:00:00Z"})
    m = fresh(m)
    assert [(s.start, s.end) for s in stored_spans(m)] == [(date(2024, 2, 9), date(2024, 2, 9))]
    assert m.event_dates == event_dates_of(m)
    # What recall reads for it: the new day's, by the candidates' fetch and the date arm.
    q_spans = date_spans("What happened on 9 February 2024?", today=date(2024, 3, 1))
    assert fetch(user, [m.pk], dates=True)[m.pk].events == event_spans(m.raw_text, date(2024, 2, 10))
    assert date_pool(user, q_spans, 10, date(2024, 3, 1)) == [m.pk]


def test_an_edit_of_what_the_note_shows_keeps_the_stored_cost_right(user, memory_factory):
    m = memory_factory("We talked about the garden and the new fence for an hour, and about the roses too. " * 3)
    before = fresh(m).context_cost
    update_memory(
        owner=user,
        memory_id=m.pk,
        changes={"summary": "A long talk about the garden, the fence and the roses.", "topics": ["garden", "fence", "roses"]},
    )
    m = fresh(m)
    assert m.context_cost != before
    for brief in (False, True):
        assert budget._cost(m, brief=brief) == rendered_cost(m, brief)


def test_a_value_gone_stale_by_a_bare_update_is_not_used(user, memory_factory):
    m = memory_factory("Dinner with Mum last night.", occurred_at=when(2023, 5, 8))
    stale_dates, stale_cost = fresh(m).event_dates, fresh(m).context_cost
    # A path that bypasses save (a queryset update, raw SQL) leaves the stored values behind.
    Memory.all_objects.filter(pk=m.pk).update(
        raw_text="Camping next month with the whole family, and Ann brings her new tent and the big stove.",
        summary="Camping next month.",
        importance=0.9,
    )
    m = fresh(m)
    assert (m.event_dates, m.context_cost) == (stale_dates, stale_cost)
    assert fetch(user, [m.pk], dates=True)[m.pk].events == event_spans(m.raw_text, date(2023, 5, 8))
    assert [(s.start, s.end) for s in fetch(user, [m.pk], dates=True)[m.pk].events] == [(date(2023, 6, 1), date(2023, 6, 30))]
    for brief in (False, True):
        assert budget._cost(m, brief=brief) == rendered_cost(m, brief)
    # Only the importance changed (faded, by a bulk update): the figure is not trusted either.
    m.save()
    Memory.all_objects.filter(pk=m.pk).update(importance=0.1)
    m = fresh(m)
    assert budget._fingerprint(m) != int(m.context_cost.split()[0])


def test_stored_values_are_read_only_for_the_text_they_were_made_of():
    said = date(2023, 5, 8)
    stored = Memory(raw_text="Lunch with Bob yesterday.", occurred_at=when(2023, 5, 8))
    value = event_dates_of(stored)
    assert events_of("Lunch with Bob yesterday.", said, value) == event_spans("Lunch with Bob yesterday.", said)
    # Another text of the same length, another day, a shorter head (a pending memory's): read again.
    assert events_of("Lunch with Bob tomorrow.", said, value) == event_spans("Lunch with Bob tomorrow.", said)
    assert events_of("Lunch with Bob and Carol.", said, value) == ()
    assert events_of("Lunch with Bob yesterday.", date(2023, 6, 1), value)[0].start == date(2023, 5, 31)
    assert events_of("Lunch with Bob", said, value) == ()


def test_memories_written_in_bulk_store_them_too(user):
    made = bulk_remember(
        owner=user,
        items=[
            {"text": "Ann: we moved to Porto in March 2022.", "source": "chat:D1:1", "occurred_at": when(2023, 5, 8)},
            {"text": "Bob: and I started the new job two weeks ago.", "source": "chat:D1:2", "occurred_at": when(2023, 5, 8)},
        ],
    )
    for m in map(fresh, made):
        assert m.event_dates == event_dates_of(m) and stored_spans(m)
        assert budget._cost(m, brief=False) == rendered_cost(m)


def test_the_migration_fills_what_rows_written_before_it_lack(user, memory_factory):
    made = [
        memory_factory("Ann: I painted a sunrise last week.", occurred_at=when(2023, 5, 8)),
        memory_factory("Nothing dated here, only a note about the piano."),
    ]
    expected = {m.pk: (fresh(m).event_dates, fresh(m).context_cost) for m in made}
    Memory.all_objects.update(event_dates=None, context_cost=None)

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    import_module("memories.migrations.0018_memory_event_dates").fill(apps, editor)
    import_module("memories.migrations.0019_memory_context_cost").fill(apps, editor)
    assert {m.pk: (fresh(m).event_dates, fresh(m).context_cost) for m in made} == expected


def test_recall_is_the_same_with_the_stored_values_and_without(user, memory_factory):
    for i, text in enumerate(
        [
            "Ann: I went to the support group yesterday.",
            "Ann: the charity race last Saturday was for mental health.",
            "Bob: we are going camping next month at the lake.",
            "Ann: my painting class started in May.",
            "Bob: the garden needs a new fence before the summer.",
        ]
    ):
        memory_factory(text, source=f"chat:D1:{i}", occurred_at=when(2023, 5, 8))
    question = "What did Ann do in May 2023?"
    now = when(2023, 6, 1)
    with_stored = recall(owner=user, question=question, strategy="hybrid", k=5, now=now)
    Memory.all_objects.update(event_dates=None, context_cost=None)
    budget._COSTS.clear()
    without = recall(owner=user, question=question, strategy="hybrid", k=5, now=now)
    assert with_stored.memory_ids == without.memory_ids
    assert [r.score for r in with_stored.memories] == [r.score for r in without.memories]
    assert with_stored.brief_ids == without.brief_ids
