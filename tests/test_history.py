"""The history is whole and honest: a change and its record are saved together or not at
all, each change is recorded as what it was, and by whom, including a command."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import IntegrityError
from django.test import Client

from memories.llm import ProviderError
from memories.llm.offline import OfflineProvider
from memories.models import Event, Memory, RejectedContent
from memories.services import (
    Actor,
    RestoreError,
    RetryError,
    approve_memory,
    bulk_remember,
    delete_memory,
    extract_memory,
    ingest_text,
    memory_history,
    reextract_memory,
    reject_memory,
    restore_memory,
    retry_failed,
    retry_memory,
    update_memory,
)
from memories.services.tokens import create_token

LEASE = "The Lisbon office lease ends in June 2026 and will not be renewed, according to Marta."
OFFSITE = "Marta booked the team offsite in Lisbon for the first week of June."
GARDEN = "The tomatoes in the garden need watering twice a week in July."


def actions(owner, memory) -> list[str]:
    return [e.action for e in memory_history(owner=owner, memory_id=memory.pk).order_by("created_at", "id")]


def fail_extraction(monkeypatch, *memories):
    monkeypatch.setattr(OfflineProvider, "extract", lambda self, **kw: (_ for _ in ()).throw(ProviderError("model down")))
    for memory in memories:
        extract_memory(memory.pk)
    monkeypatch.undo()


# --- a change and its record: both or neither ------------------------------------------


def _ready(memory_factory, monkeypatch, settings):
    return memory_factory(GARDEN)


def _failed(memory_factory, monkeypatch, settings):
    memory = memory_factory(GARDEN, extract=False)
    fail_extraction(monkeypatch, memory)
    return memory


def _pending_while_the_model_is_down(memory_factory, monkeypatch, settings):
    memory = memory_factory(GARDEN, extract=False)
    monkeypatch.setattr(OfflineProvider, "extract", lambda self, **kw: (_ for _ in ()).throw(ProviderError("model down")))
    return memory


def _in_review(memory_factory, monkeypatch, settings):
    settings.MEMORY_REVIEW_MODE = True
    return memory_factory(GARDEN)


def _deleted(memory_factory, monkeypatch, settings):
    memory = memory_factory(GARDEN)
    delete_memory(owner=memory.owner, memory_id=memory.pk)
    return memory


# Each write: how to make the memory it applies to, and the write itself.
WRITES = {
    "edit": (
        _ready,
        lambda memory, actor: update_memory(
            owner=memory.owner,
            memory_id=memory.pk,
            changes={"summary": "Water the tomatoes daily.", "importance": 0.9},
            actor=actor,
        ),
    ),
    "retry": (_failed, lambda memory, actor: retry_memory(owner=memory.owner, memory_id=memory.pk, actor=actor)),
    "retry every failed": (_failed, lambda memory, actor: retry_failed(owner=memory.owner, actor=actor)),
    "re-extract a failed memory": (
        _failed,
        lambda memory, actor: reextract_memory(owner=memory.owner, memory_id=memory.pk, actor=actor),
    ),
    "re-extract": (_ready, lambda memory, actor: reextract_memory(owner=memory.owner, memory_id=memory.pk, actor=actor)),
    "extraction fails": (_pending_while_the_model_is_down, lambda memory, actor: extract_memory(memory.pk, actor=actor)),
    "approve": (_in_review, lambda memory, actor: approve_memory(owner=memory.owner, memory_id=memory.pk, actor=actor)),
    "reject": (_in_review, lambda memory, actor: reject_memory(owner=memory.owner, memory_id=memory.pk, actor=actor)),
    "restore": (_deleted, lambda memory, actor: restore_memory(owner=memory.owner, memory_id=memory.pk, actor=actor)),
}

# What a write may change and a failed record must leave as it was.
STATE = ("summary", "entities", "topics", "importance", "status", "error", "deleted_at", "consolidated_at", "provider")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_whose_history_record_fails_leaves_the_memory_unchanged(
    write, user_factory, memory_factory, monkeypatch, settings
):
    make, change = WRITES[write]
    memory = make(memory_factory, monkeypatch, settings)
    before = Memory.all_objects.values(*STATE).get(pk=memory.pk)
    events = Event.objects.count()
    rejected = list(RejectedContent.objects.values_list("content_hash", flat=True))
    # The person acting is gone by the time the record is written (their account was
    # removed mid-request): the database refuses the record's reference to them, so the
    # change it records must not stay either.
    gone = user_factory("gone")
    get_user_model().objects.filter(pk=gone.pk).delete()
    with pytest.raises(IntegrityError):
        change(memory, Actor.for_user(gone))
    assert Memory.all_objects.values(*STATE).get(pk=memory.pk) == before
    assert Event.objects.count() == events
    assert list(RejectedContent.objects.values_list("content_hash", flat=True)) == rejected


# --- each change recorded as what it was --------------------------------------------------


@pytest.mark.django_db
def test_retry_reextract_and_retry_failed_are_recorded_as_themselves(user, memory_factory, monkeypatch):
    alice = Actor.for_user(user)
    one, every = memory_factory(LEASE, extract=False), memory_factory(OFFSITE, extract=False)
    fail_extraction(monkeypatch, one, every)

    retry_memory(owner=user, memory_id=one.pk, actor=alice)
    assert actions(user, one) == ["created", "failed", "retried"]
    assert retry_failed(owner=user, actor=Actor.for_command("retry_failed")) == [every.pk]
    retried = memory_history(owner=user, memory_id=every.pk).get(action="retried")
    assert retried.actor == "command:retry_failed" and Memory.objects.get(pk=every.pk).status == Memory.Status.PENDING

    ready = memory_factory(GARDEN)
    original_summary = ready.summary
    Memory.objects.filter(pk=ready.pk).update(summary="A summary the extractor will replace.")
    reextract_memory(owner=user, memory_id=ready.pk, actor=alice)
    assert actions(user, ready) == ["created", "extracted", "reextracted"]
    again = memory_history(owner=user, memory_id=ready.pk).get(action="reextracted")
    assert again.actor == "user:alice"
    assert again.before["summary"] == "A summary the extractor will replace." and again.after["summary"] == original_summary

    # A failed memory asked to be re-extracted is retried, then extracted the usual way.
    fail_extraction(monkeypatch, one)
    reextract_memory(owner=user, memory_id=one.pk, actor=alice)
    assert actions(user, one)[-3:] == ["failed", "retried", "extracted"]
    assert not Event.objects.filter(action="edited").exists()


@pytest.mark.django_db
def test_commands_record_themselves_as_the_actor(user, monkeypatch):
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command("ingest", "--text", LEASE, "--user", "alice", **quiet)
    call_command("ingest", "--text", OFFSITE, "--user", "alice", **quiet)
    lease, offsite = Memory.objects.get(raw_text=LEASE), Memory.objects.get(raw_text=OFFSITE)
    made = memory_history(owner=user, memory_id=lease.pk)
    assert {(e.action, e.actor) for e in made} == {("created", "command:ingest"), ("extracted", "command:ingest")}

    call_command("consolidate", "--user", "alice", **quiet)
    consolidated = Event.objects.filter(action="consolidated", subject_id__in=[lease.pk, offsite.pk])
    assert consolidated.count() == 2 and {e.actor for e in consolidated} == {"command:consolidate"}

    call_command("reextract", str(lease.pk), "--user", "alice", **quiet)
    assert memory_history(owner=user, memory_id=lease.pk).filter(action="reextracted").get().actor == "command:reextract"

    garden = ingest_text(owner=user, text=GARDEN).memory
    fail_extraction(monkeypatch, garden)
    call_command("retry_failed", "--user", "alice", **quiet)
    latest = memory_history(owner=user, memory_id=garden.pk).order_by("-created_at", "-id")[:2]
    assert [(e.action, e.actor) for e in latest] == [("extracted", "command:retry_failed"), ("retried", "command:retry_failed")]

    # An answer that reads a faded memory brings its importance back, recorded by the command.
    Memory.objects.filter(pk=offsite.pk).update(importance=0.1, base_importance=0.8)
    call_command("query", "When is the Lisbon offsite Marta booked?", "--user", "alice", "--json", **quiet)
    revived = Event.objects.get(action="revived", subject_id=offsite.pk)
    assert revived.actor == "command:query"
    assert not Event.objects.filter(subject_id__in=[lease.pk, offsite.pk]).exclude(actor__startswith="command:").exists()


@pytest.mark.django_db
def test_bulk_remember_records_each_memory_it_stores(user):
    stored = bulk_remember(
        owner=user,
        items=[{"text": LEASE, "source": "chat:1"}, {"text": GARDEN, "entities": ["Marta"]}],
        actor=Actor.for_command("evaluate"),
    )
    assert [m.status for m in stored] == [Memory.Status.READY] * 2 and "Marta" in stored[1].entities
    for memory in stored:
        events = memory_history(owner=user, memory_id=memory.pk)
        assert sorted((e.action, e.actor) for e in events) == [("created", "command:evaluate"), ("extracted", "command:evaluate")]
    assert memory_history(owner=user, memory_id=stored[0].pk).get(action="created").after["source"] == "chat:1"


# --- other owners ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_owners_cannot_retry_reextract_or_restore_anothers_memory(user, other_user, memory_factory, monkeypatch, bob_client):
    failed = memory_factory(LEASE, extract=False)
    fail_extraction(monkeypatch, failed)
    ready, deleted = memory_factory(OFFSITE), memory_factory(GARDEN)
    delete_memory(owner=user, memory_id=deleted.pk)
    state = {m.pk: Memory.all_objects.values(*STATE).get(pk=m.pk) for m in (failed, ready, deleted)}
    bob = Actor.for_user(other_user)

    with pytest.raises(RetryError):
        retry_memory(owner=other_user, memory_id=failed.pk, actor=bob)
    assert retry_failed(owner=other_user, actor=bob) == []
    assert reextract_memory(owner=other_user, memory_id=ready.pk, actor=bob) is None
    assert reextract_memory(owner=other_user, memory_id=failed.pk, actor=bob) is None
    assert restore_memory(owner=other_user, memory_id=deleted.pk, actor=bob) is None
    # Through the API and the pages: what is not theirs looks absent.
    api = Client(headers={"Authorization": f"Bearer {create_token(owner=other_user, name='bob')[1]}"})
    assert api.post(f"/api/memories/{failed.pk}/retry").status_code == 404
    assert api.post(f"/api/memories/{deleted.pk}/restore").status_code == 404
    assert bob_client.post(f"/memories/{failed.pk}/retry/").status_code == 404
    assert bob_client.post(f"/memories/{deleted.pk}/restore/").status_code == 404

    assert {m.pk: Memory.all_objects.values(*STATE).get(pk=m.pk) for m in (failed, ready, deleted)} == state
    assert not Event.objects.filter(actor_user=other_user).exists()


@pytest.mark.django_db
def test_a_refused_restore_or_retry_is_a_conflict_that_says_why(user, memory_factory, signed_in):
    deleted = memory_factory(LEASE)
    delete_memory(owner=user, memory_id=deleted.pk)
    # The same content is stored again as a new memory meanwhile.
    RejectedContent.objects.all().delete()
    memory_factory(LEASE)
    with pytest.raises(RestoreError, match="stored again"):
        restore_memory(owner=user, memory_id=deleted.pk)
    api = Client(headers={"Authorization": f"Bearer {create_token(owner=user, name='t')[1]}"})
    refused = api.post(f"/api/memories/{deleted.pk}/restore")
    assert refused.status_code == 409 and "stored again" in json.loads(refused.content)["detail"]
    assert "stored again" in signed_in.post(f"/memories/{deleted.pk}/restore/").content.decode()
    ready = memory_factory(GARDEN)
    with pytest.raises(RetryError, match="Only a failed memory"):
        retry_memory(owner=user, memory_id=ready.pk)
    assert api.post(f"/api/memories/{ready.pk}/retry").status_code == 409


@pytest.mark.django_db(transaction=True)
def test_migration_gives_past_retries_and_reextractions_their_own_actions(user):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = ("memories", "0011_meaning_embeddings"), ("memories", "0012_history_retry_reextract")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        OldEvent = executor.loader.project_state([before]).apps.get_model("memories", "Event")
        for note in ("retry requested", "re-extracted", ""):  # the last one a person's edit
            OldEvent.objects.create(
                owner_id=user.pk, subject_type="memory", subject_id=1, action="edited", actor="user:alice", note=note
            )
        executor = MigrationExecutor(connection)
        executor.migrate([after])
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert sorted(Event.objects.values_list("note", "action")) == [
        ("", "edited"),
        ("re-extracted", "reextracted"),
        ("retry requested", "retried"),
    ]


def test_an_answer_on_the_ask_page_records_its_asker_when_it_revives_a_memory(signed_in, user):
    offsite = ingest_text(owner=user, text=OFFSITE).memory
    extract_memory(offsite.pk)
    Memory.objects.filter(pk=offsite.pk).update(importance=0.1, base_importance=0.8)
    response = signed_in.get("/query/", {"q": "When is the Lisbon offsite Marta booked?"})
    assert response.status_code == 200
    revived = Event.objects.get(action="revived", subject_id=offsite.pk)
    assert revived.actor == f"user:{user.get_username()}"


def test_an_answer_through_the_api_records_its_token_when_it_revives_a_memory(user):
    offsite = ingest_text(owner=user, text=OFFSITE).memory
    extract_memory(offsite.pk)
    Memory.objects.filter(pk=offsite.pk).update(importance=0.1, base_importance=0.8)
    api = Client(headers={"Authorization": f"Bearer {create_token(owner=user, name='asker')[1]}"})
    response = api.get("/api/query", {"q": "When is the Lisbon offsite Marta booked?"})
    assert response.status_code == 200, response.content
    revived = Event.objects.get(action="revived", subject_id=offsite.pk)
    assert revived.actor.startswith("api token 'asker'")
