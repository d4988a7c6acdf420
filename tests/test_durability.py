"""Nothing accepted is lost: stuck ingests are resumed, failures retried, tasks idempotent."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from memories.llm import ProviderError
from memories.llm.offline import OfflineProvider
from memories.models import Event, Memory
from memories.services import extract_memory, ingest_text, resume_stuck, retry_memory

pytestmark = pytest.mark.django_db


def age(memory, minutes):
    Memory.objects.filter(pk=memory.pk).update(updated_at=timezone.now() - timedelta(minutes=minutes))


def test_sweeper_finishes_ingests_whose_task_was_lost(user, sync_tasks, django_capture_on_commit_callbacks):
    lost = ingest_text(owner=user, text="Saved, then the web process died before queueing.").memory
    fresh = ingest_text(owner=user, text="Saved a moment ago; its task is still on the way.").memory
    age(lost, 30)
    with django_capture_on_commit_callbacks(execute=True):
        assert resume_stuck() == [lost.pk]
    lost.refresh_from_db()
    fresh.refresh_from_db()
    assert lost.status == "ready" and fresh.status == "pending"


def test_sweeper_takes_over_from_a_worker_that_died_mid_extraction(user, sync_tasks, django_capture_on_commit_callbacks):
    memory = ingest_text(owner=user, text="The worker was killed while the model was thinking.").memory
    Memory.objects.filter(pk=memory.pk).update(attempts=1, extracting_since=timezone.now() - timedelta(minutes=30))
    # While the lease holds, a second delivery leaves it alone.
    working = ingest_text(owner=user, text="A worker is on this one right now.").memory
    Memory.objects.filter(pk=working.pk).update(
        attempts=1, extracting_since=timezone.now(), updated_at=timezone.now() - timedelta(minutes=30)
    )
    assert extract_memory(working.pk).status == "pending"
    with django_capture_on_commit_callbacks(execute=True):
        assert resume_stuck() == [memory.pk]
    memory.refresh_from_db()
    assert memory.status == "ready" and memory.attempts == 2 and memory.extracting_since is None


def test_sweeper_gives_up_after_repeated_crashes(user):
    memory = ingest_text(owner=user, text="Crashes the worker every time.").memory
    Memory.objects.filter(pk=memory.pk).update(attempts=5)
    age(memory, 30)
    assert resume_stuck() == []
    memory.refresh_from_db()
    assert memory.status == "failed" and "Gave up after 5 attempts" in memory.error
    assert memory.raw_text == "Crashes the worker every time."


def test_extraction_delivered_twice_runs_the_model_once(user, monkeypatch):
    memory = ingest_text(owner=user, text="One memory, two deliveries of its task.").memory
    calls = []
    real = OfflineProvider.extract

    def counting(self, **kwargs):
        calls.append(1)
        # The second delivery arrives while the first is still at the model.
        if len(calls) == 1:
            extract_memory(memory.pk)
        return real(self, **kwargs)

    monkeypatch.setattr(OfflineProvider, "extract", counting)
    assert extract_memory(memory.pk).status == "ready"
    assert len(calls) == 1
    assert Event.objects.filter(subject_id=memory.pk, action="extracted").count() == 1


def test_retry_failed_command_retries_all_failures_of_one_user(user, other_user, monkeypatch):
    mine = [ingest_text(owner=user, text=f"note {i} about budgets").memory for i in range(3)]
    theirs = ingest_text(owner=other_user, text="not mine").memory
    monkeypatch.setattr(OfflineProvider, "extract", lambda self, **kw: (_ for _ in ()).throw(ProviderError("model down")))
    for memory in [*mine, theirs]:
        extract_memory(memory.pk)
    monkeypatch.undo()
    out = io.StringIO()
    call_command("retry_failed", "--user", "alice", stdout=out, stderr=io.StringIO())
    assert sorted(Memory.objects.filter(status="ready").values_list("pk", flat=True)) == [m.pk for m in mine]
    theirs.refresh_from_db()
    assert theirs.status == "failed"


def test_status_says_when_the_model_is_down(signed_in, settings, monkeypatch):
    from memories.llm import circuit

    assert "not answering" not in signed_in.get("/status/").content.decode()
    for _ in range(circuit.FAILURES_TO_OPEN):
        circuit.record_failure("offline", "HTTP 503 overloaded")
    page = signed_in.get("/status/").content.decode()
    assert "The model is not answering (HTTP 503 overloaded)" in page


def test_input_from_a_person_or_agent_is_queued_with_its_save_and_a_command_extracts_its_own(
    user, sync_tasks, django_capture_on_commit_callbacks, monkeypatch
):
    """ingest(queue=True) and retry queue the extraction when the save commits (one call for
    the pages, the API and MCP); without it the memory waits for the caller to extract it."""
    with django_capture_on_commit_callbacks(execute=True):
        queued = ingest_text(owner=user, text="Queued with its save: the lease ends in June.", queue=True).memory
        waiting = ingest_text(owner=user, text="Saved only: the command extracts this one itself.").memory
    queued.refresh_from_db()
    waiting.refresh_from_db()
    assert queued.status == "ready" and waiting.status == "pending"

    with monkeypatch.context() as down:
        down.setattr(OfflineProvider, "extract", lambda self, **kw: (_ for _ in ()).throw(ProviderError("down")))
        failed = extract_memory(waiting.pk)
    assert failed.status == "failed"
    with django_capture_on_commit_callbacks(execute=True):
        retry_memory(owner=user, memory_id=failed.pk)
    failed.refresh_from_db()
    assert failed.status == "ready"
