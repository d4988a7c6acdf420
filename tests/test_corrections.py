"""Corrections that stick: history, tombstones, dedup, edits, versions and repaired insights."""

import io
import os
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from memories.models import Consolidation, Event, Memory, MemoryLink, RejectedContent
from memories.recall import recall
from memories.services import (
    Actor,
    EditError,
    RejectedContentError,
    approve_memory,
    clear_owner,
    consolidate_owner,
    delete_memory,
    extract_memory,
    ingest_file,
    ingest_text,
    memory_history,
    purge_memory,
    reject_memory,
    restore_memory,
    update_memory,
)
from memories.services.inbox import scan_inbox

from .test_owner_rule import state_of

pytestmark = pytest.mark.django_db

CLAIM = "The Lisbon office lease ends in June 2026 and will not be renewed, according to Marta."
OTHER = "Marta booked the team offsite in Lisbon for the first week of June."
THIRD = "The Lisbon office lease negotiations with Marta continue next month."


def actions(owner, memory):
    return [e.action for e in memory_history(owner=owner, memory_id=memory.pk).order_by("created_at", "id")]


def test_history_records_each_change_with_actor_and_values(user, memory_factory):
    memory = memory_factory(CLAIM)
    update_memory(
        owner=user,
        memory_id=memory.pk,
        changes={"summary": "Lease ends June 2026.", "importance": 0.9},
        actor=Actor.for_user(user),
    )
    delete_memory(owner=user, memory_id=memory.pk, actor=Actor.for_user(user))
    restore_memory(owner=user, memory_id=memory.pk)
    assert actions(user, memory) == ["created", "extracted", "edited", "deleted", "restored"]
    edit = Event.objects.get(action="edited")
    assert edit.actor == "user:alice" and edit.actor_user == user
    assert edit.before["importance"] != 0.9 and edit.after == {"summary": "Lease ends June 2026.", "importance": 0.9}


def test_delete_is_a_tombstone_that_leaves_recall_and_lists(user, memory_factory):
    memory = memory_factory(CLAIM)
    assert delete_memory(owner=user, memory_id=memory.pk)
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert Memory.all_objects.get(pk=memory.pk).deleted_at is not None
    for strategy in ("recent", "hybrid"):
        assert memory.pk not in recall(owner=user, question="Lisbon office lease", strategy=strategy).memory_ids


def test_reingest_of_deleted_content_is_refused_on_every_path(user, memory_factory, settings):
    memory = memory_factory(CLAIM)
    delete_memory(owner=user, memory_id=memory.pk)
    with pytest.raises(RejectedContentError, match=r"deleted on \d{4}-\d\d-\d\d; restore memory"):
        ingest_text(owner=user, text=CLAIM)
    with pytest.raises(RejectedContentError):
        ingest_text(owner=user, text="  " + CLAIM.replace(" ", "\n") + " ")
    # The command says so and stores nothing.
    with pytest.raises(Exception, match="input"):
        call_command("ingest", "--text", CLAIM, "--user", "alice", stdout=io.StringIO(), stderr=io.StringIO())
    # A file: refused by its bytes, under any name, also from the inbox.
    doc = ingest_file(owner=user, fileobj=io.BytesIO(b"file bytes of a rejected note"), name="a.txt").memory
    delete_memory(owner=user, memory_id=doc.pk)
    with pytest.raises(RejectedContentError):
        ingest_file(owner=user, fileobj=io.BytesIO(b"file bytes of a rejected note"), name="renamed.md")
    settings.MEMORY_INBOX_USER = "alice"
    inbox = Path(settings.MEMORY_INBOX_DIR)
    inbox.mkdir()
    (inbox / "new name.txt").write_bytes(b"file bytes of a rejected note")
    report = scan_inbox(settle_seconds=0)
    assert report.failed == 1 and Memory.objects.count() == 0
    # Another user may still store the same text.
    assert ingest_text(owner=user.__class__.objects.create_user("carol"), text=CLAIM).created


def test_restore_brings_it_back_and_allows_reingest_dedup(user, memory_factory):
    memory = memory_factory(CLAIM)
    delete_memory(owner=user, memory_id=memory.pk)
    restored = restore_memory(owner=user, memory_id=memory.pk)
    assert restored.is_live and not RejectedContent.objects.exists()
    again = ingest_text(owner=user, text=CLAIM)
    assert not again.created and again.memory.pk == memory.pk


def test_purge_erases_content_keeps_hash_and_event(user, memory_factory):
    memory = ingest_file(owner=user, fileobj=io.BytesIO(CLAIM.encode()), name="lease.txt").memory
    extract_memory(memory.pk)
    path = Path(memory.original.path)
    assert purge_memory(owner=user, memory_id=memory.pk)
    assert not Memory.all_objects.filter(pk=memory.pk).exists() and not path.exists()
    assert RejectedContent.objects.get().memory_ref == memory.pk
    events = list(memory_history(owner=user, memory_id=memory.pk))
    assert events[0].action == "purged"
    assert all(e.before == {} and e.after == {} for e in events)
    assert "Lisbon" not in str([(e.before, e.after, e.note) for e in Event.objects.all()])
    with pytest.raises(RejectedContentError, match="purged"):
        ingest_file(owner=user, fileobj=io.BytesIO(CLAIM.encode()), name="again.txt")


def test_other_user_cannot_delete_restore_purge_or_edit(user, other_user, memory_factory):
    """Refused in words, and nothing of the owner's changes: a purge or edit that ran and then
    reported "not found" would pass a test of return values alone."""
    memory = memory_factory(CLAIM)
    before = state_of(user)
    assert delete_memory(owner=other_user, memory_id=memory.pk) is None
    assert not purge_memory(owner=other_user, memory_id=memory.pk)
    with pytest.raises(Memory.DoesNotExist):
        update_memory(owner=other_user, memory_id=memory.pk, changes={"summary": "hacked"})
    assert state_of(user) == before
    delete_memory(owner=user, memory_id=memory.pk)
    deleted = state_of(user)
    assert restore_memory(owner=other_user, memory_id=memory.pk) is None
    assert state_of(user) == deleted
    assert not Event.objects.filter(owner=other_user).exists()


def test_edits_are_validated_and_reach_recall(user, memory_factory):
    memory = memory_factory(CLAIM)
    for bad in (
        {"importance": 3},
        {"importance": "high"},
        {"summary": " "},
        {"raw_text": "x"},
        {"occurred_at": "soon"},
        {"topics": [1, 2]},
    ):
        with pytest.raises(EditError):
            update_memory(owner=user, memory_id=memory.pk, changes=bad)
    update_memory(
        owner=user,
        memory_id=memory.pk,
        changes={"summary": "Zanzibar branch closes.", "topics": "real estate, leases", "occurred_at": "2025-02-01"},
    )
    memory.refresh_from_db()
    assert memory.topics == ["real estate", "leases"] and memory.occurred_at.year == 2025
    assert memory.pk in recall(owner=user, question="Zanzibar", strategy="hybrid").memory_ids


def test_exact_duplicate_reports_existing_and_near_duplicate_is_linked_not_recalled_twice(user, memory_factory):
    original = memory_factory(CLAIM)
    assert ingest_text(owner=user, text=CLAIM).memory.pk == original.pk
    near = memory_factory(CLAIM.replace("according to Marta", "according to Marta!") + " Noted.")
    assert near.duplicate_of_id == original.pk
    assert MemoryLink.objects.filter(from_memory=near, to_memory=original, relationship="near-duplicate").exists()
    different = memory_factory(OTHER)
    assert different.duplicate_of_id is None
    ids = recall(owner=user, question="Lisbon office lease Marta", strategy="hybrid").memory_ids
    assert original.pk in ids and near.pk not in ids


def test_deleting_a_source_makes_insight_stale_and_next_run_repairs_it(user, memory_factory):
    a, b, c = memory_factory(CLAIM), memory_factory(OTHER), memory_factory(THIRD)
    consolidation = consolidate_owner(owner=user).consolidations[0]
    assert MemoryLink.objects.filter(to_memory=a).exists() or MemoryLink.objects.filter(from_memory=a).exists()
    delete_memory(owner=user, memory_id=a.pk)
    consolidation.refresh_from_db()
    assert consolidation.is_stale
    assert not MemoryLink.objects.filter(from_memory=a).exists() and not MemoryLink.objects.filter(to_memory=a).exists()
    assert consolidation.pk not in [c.pk for c in recall(owner=user, question="Lisbon", strategy="recent").consolidations]
    consolidate_owner(owner=user)
    consolidation.refresh_from_db()
    assert not consolidation.is_stale and consolidation.retired_at is None
    assert set(consolidation.sources.values_list("pk", flat=True)) == {b.pk, c.pk}
    assert f"Memory {a.pk}" not in consolidation.insight
    # One more source gone: fewer than two remain, so it retires.
    delete_memory(owner=user, memory_id=b.pk)
    consolidate_owner(owner=user)
    assert not Consolidation.objects.filter(pk=consolidation.pk).exists()
    assert Consolidation.all_objects.get(pk=consolidation.pk).retired_at is not None


def test_changed_inbox_file_supersedes_the_old_version(user, settings):
    settings.MEMORY_INBOX_USER = "alice"
    inbox = Path(settings.MEMORY_INBOX_DIR)
    inbox.mkdir()
    note = inbox / "plan.txt"
    note.write_text("Plan v1: launch in March.")
    first = scan_inbox(settle_seconds=0).ingested[0]
    note.write_text("Plan v2: launch moved to May.")
    os.utime(note, (time.time() - 60, time.time() - 60))
    second = scan_inbox(settle_seconds=0).ingested[0]
    old = Memory.all_objects.get(pk=first)
    assert old.superseded_by_id == second and not old.is_live
    assert list(Memory.objects.values_list("pk", flat=True)) == [second]
    assert "superseded" in actions(user, old)
    assert first not in recall(owner=user, question="launch plan", strategy="hybrid").memory_ids


def test_clear_all_is_a_recorded_start_over(user, other_user, memory_factory):
    memory_factory(CLAIM)
    memory_factory(OTHER)
    deleted_before = memory_factory(THIRD)
    delete_memory(owner=user, memory_id=deleted_before.pk)
    consolidate_owner(owner=user)
    kept = memory_factory(THIRD, owner=other_user)
    counts = clear_owner(owner=user, actor=Actor.for_user(user))
    assert counts["memories"] == 2 and counts["consolidations"] == 1
    assert list(Memory.objects.values_list("pk", flat=True)) == [kept.pk]
    assert Event.objects.filter(action="cleared", actor="user:alice").count() == 2
    # Starting over: nothing cleared (or deleted before) refuses to come back.
    again = ingest_text(owner=user, text=OTHER)
    assert again.created and again.memory.status == Memory.Status.PENDING
    assert ingest_text(owner=user, text=THIRD).created
    # A single delete still refuses its content.
    delete_memory(owner=user, memory_id=again.memory.pk)
    with pytest.raises(RejectedContentError):
        ingest_text(owner=user, text=OTHER)


def test_review_mode_holds_new_memories_until_approved(user, settings):
    settings.MEMORY_REVIEW_MODE = True
    held = extract_memory(ingest_text(owner=user, text=CLAIM).memory.pk)
    rejected = extract_memory(ingest_text(owner=user, text=OTHER).memory.pk)
    assert held.status == rejected.status == Memory.Status.REVIEW
    assert recall(owner=user, question="Lisbon", strategy="recent").memory_ids == []
    assert approve_memory(owner=user, memory_id=held.pk).status == Memory.Status.READY
    reject_memory(owner=user, memory_id=rejected.pk)
    assert recall(owner=user, question="Lisbon", strategy="recent").memory_ids == [held.pk]
    with pytest.raises(RejectedContentError):
        ingest_text(owner=user, text=OTHER)
