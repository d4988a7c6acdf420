"""The rows recall reads with plain SQL are what the ORM would have read: the budget's
memories (sql.live_memories) are Memory.objects.in_bulk's, field for field."""

from datetime import datetime

import pytest
from django.utils import timezone

from memories.models import Memory
from memories.recall.sql import live_memories

pytestmark = pytest.mark.django_db


def fields(memory):
    return {f.attname: getattr(memory, f.attname) for f in Memory._meta.concrete_fields}


def test_live_memories_are_in_bulks_field_for_field(user, other_user, memory_factory):
    made = [
        memory_factory("Ann: we moved to Porto in March 2022.", occurred_at=timezone.make_aware(datetime(2023, 5, 8, 9, 30))),
        memory_factory("Bob started the new job.", source="chat:D1:2"),
        memory_factory("Someone else's note.", owner=other_user),
        memory_factory("Waiting for extraction.", extract=False),
    ]
    made[1].metadata = {"said_by": "assistant", "nested": {"a": [1, 2]}}
    made[1].entities, made[1].topics = ["Bob", "Ünïcode"], ["job"]
    made[1].save()
    deleted = memory_factory("Deleted since.")
    deleted.deleted_at = timezone.now()
    deleted.save()
    superseded = memory_factory("Replaced by a newer version.")
    superseded.superseded_by = made[0]
    superseded.save()
    ids = [m.pk for m in made] + [deleted.pk, superseded.pk, made[0].pk, 10_000_000]
    expected = Memory.objects.in_bulk(ids)
    got = live_memories(ids)
    assert sorted(got) == sorted(expected) == sorted(m.pk for m in made)
    for pk, memory in got.items():
        assert type(memory) is Memory
        assert fields(memory) == fields(expected[pk])
        assert {k: type(v) for k, v in fields(memory).items()} == {k: type(v) for k, v in fields(expected[pk]).items()}
        assert not memory._state.adding and memory._state.db == expected[pk]._state.db
        assert memory.get_deferred_fields() == set()
    # A memory read this way saves as one read by the ORM does (an update, not an insert).
    got[made[1].pk].summary = "Bob's new job."
    got[made[1].pk].save()
    assert Memory.objects.get(pk=made[1].pk).summary == "Bob's new job."
    assert Memory.all_objects.count() == len(made) + 2  # nothing was added


def test_live_memories_of_no_ids_or_of_many_sizes(user, memory_factory):
    assert live_memories([]) == {}
    made = [memory_factory(f"Note number {i}.") for i in range(7)]
    for n in range(1, 8):  # one compiled query per number of ids
        ids = [m.pk for m in made[:n]]
        assert sorted(live_memories(ids)) == sorted(Memory.objects.in_bulk(ids))
