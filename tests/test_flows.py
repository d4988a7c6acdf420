"""The three flows of the design through their service functions, offline."""

import io

import pytest
from django.utils import timezone

from memories.llm import ProviderError
from memories.llm.offline import OfflineProvider
from memories.models import Consolidation, ConsolidationRun, Memory, MemoryLink
from memories.services import (
    ConsolidationBusy,
    IngestError,
    RetryError,
    answer_question,
    clear_owner,
    consolidate_owner,
    delete_memory,
    extract_memory,
    ingest_file,
    ingest_text,
    retry_memory,
)
from memories.services.query import strip_foreign_citations

pytestmark = pytest.mark.django_db

FALCON = "Q1 planning: we decided to launch Project Falcon on March 15 with a budget of $2.5M. Sarah Chen leads it."
BERLIN = "Sarah Chen moved the Project Falcon kickoff to Berlin because the Acme Corp team is there."
GARDEN = "The tomatoes in the garden need watering twice a week in July."


def test_ingest_saves_input_pending_then_extracts(user):
    result = ingest_text(owner=user, text=FALCON, source="meeting notes")
    memory = result.memory
    assert result.created and memory.status == Memory.Status.PENDING and memory.raw_text == FALCON
    memory = extract_memory(memory.pk)
    assert memory.status == Memory.Status.READY
    assert "Project Falcon" in memory.entities and "Sarah Chen" in memory.entities
    assert "$2.5M" in memory.entities and "March 15" in memory.entities
    assert memory.summary and 0 <= memory.importance <= 1
    assert memory.provider.startswith("offline")


def test_same_text_twice_is_one_memory(user):
    first = ingest_text(owner=user, text=FALCON)
    again = ingest_text(owner=user, text="  " + FALCON.replace(" ", "  ") + "\n")
    assert not again.created and again.memory.pk == first.memory.pk
    assert Memory.objects.count() == 1


def test_same_text_for_two_owners_is_two_memories(user, other_user):
    ingest_text(owner=user, text=FALCON)
    assert ingest_text(owner=other_user, text=FALCON).created


def test_occurred_at_is_kept_and_validated(user):
    memory = ingest_text(owner=user, text=GARDEN, occurred_at="2024-07-02").memory
    assert memory.occurred_at.date().isoformat() == "2024-07-02"
    with pytest.raises(IngestError, match="not a date"):
        ingest_text(owner=user, text="other", occurred_at="next-ish week")


@pytest.mark.parametrize("text", ["", "   \n\t", None])
def test_empty_text_is_refused(user, text):
    with pytest.raises(IngestError):
        ingest_text(owner=user, text=text)


def test_text_file_is_read_as_text_and_original_kept(user, settings):
    result = ingest_file(owner=user, fileobj=io.BytesIO(BERLIN.encode()), name="../../notes.md")
    memory = extract_memory(result.memory.pk)
    assert memory.status == Memory.Status.READY and memory.raw_text == BERLIN
    assert memory.source == "notes.md" and memory.mime_type == "text/markdown"
    path = memory.original.path
    assert path.startswith(str(settings.MEDIA_ROOT)) and open(path, "rb").read() == BERLIN.encode()


def test_unsupported_and_empty_files_are_refused(user):
    with pytest.raises(IngestError, match="not supported"):
        ingest_file(owner=user, fileobj=io.BytesIO(b"MZ\x00"), name="tool.exe")
    with pytest.raises(IngestError, match="empty"):
        ingest_file(owner=user, fileobj=io.BytesIO(b""), name="blank.txt")
    assert not Memory.objects.exists()


def test_oversized_file_is_refused(user, settings):
    settings.MEMORY_MAX_UPLOAD_MB = 1
    with pytest.raises(IngestError, match="1 MB limit"):
        ingest_file(owner=user, fileobj=io.BytesIO(b"a" * (1024 * 1024 + 1)), name="big.txt")


def test_provider_error_keeps_input_and_retry_recovers(user, monkeypatch):
    def broken(self, **kwargs):
        raise ProviderError("model unavailable (503)")

    memory = ingest_text(owner=user, text=FALCON).memory
    monkeypatch.setattr(OfflineProvider, "extract", broken)
    memory = extract_memory(memory.pk)
    assert memory.status == Memory.Status.FAILED and "503" in memory.error and memory.raw_text == FALCON
    monkeypatch.undo()
    retry_memory(owner=user, memory_id=memory.pk)
    assert extract_memory(memory.pk).status == Memory.Status.READY


def test_provider_crash_is_recorded_not_left_pending(user, monkeypatch):
    monkeypatch.setattr(OfflineProvider, "extract", lambda self, **kw: 1 / 0)
    memory = extract_memory(ingest_text(owner=user, text=GARDEN).memory.pk)
    assert memory.status == Memory.Status.FAILED and "ZeroDivisionError" in memory.error


def test_retry_only_for_own_failed_memory(user, other_user, memory_factory):
    ready = memory_factory(GARDEN)
    with pytest.raises(RetryError):
        retry_memory(owner=user, memory_id=ready.pk)
    ready.status = Memory.Status.FAILED
    ready.save()
    with pytest.raises(RetryError):
        retry_memory(owner=other_user, memory_id=ready.pk)


def test_consolidation_links_shared_entities_and_marks_sources(user, memory_factory):
    a, b, c = memory_factory(FALCON), memory_factory(BERLIN), memory_factory(GARDEN)
    outcome = consolidate_owner(owner=user)
    # The two Falcon memories are grouped; the garden note, close to nothing, waits alone.
    assert len(outcome.consolidations) == 1
    consolidation = outcome.consolidations[0]
    assert set(consolidation.sources.values_list("pk", flat=True)) == {a.pk, b.pk}
    link = MemoryLink.objects.get()
    assert {link.from_memory_id, link.to_memory_id} == {a.pk, b.pk}
    assert "Sarah Chen" in link.relationship and "Project Falcon" in link.relationship
    assert "Project Falcon" in consolidation.insight
    assert list(Memory.objects.filter(consolidated_at__isnull=True)) == [c]
    # Nothing new: a second run writes nothing.
    assert consolidate_owner(owner=user).consolidations == []


def test_consolidation_drains_backlog_in_batches(user, memory_factory):
    for i in range(7):
        memory_factory(f"Note {i} about the Falcon launch budget review number {i}.")
    outcome = consolidate_owner(owner=user, batch_size=3)
    # 3 + 3, then one memory alone waits for a partner.
    assert [c.sources.count() for c in outcome.consolidations] == [3, 3]
    assert outcome.run.memories_consolidated == 6 and outcome.run.finished_at


def test_consolidation_never_mixes_owners(user, other_user, memory_factory):
    memory_factory(FALCON)
    memory_factory(BERLIN, owner=other_user)
    memory_factory(FALCON + " Again.", owner=other_user)
    consolidate_owner(owner=other_user)
    consolidation = Consolidation.objects.get()
    assert consolidation.owner == other_user
    assert set(consolidation.sources.values_list("owner", flat=True)) == {other_user.pk}


def test_only_one_consolidation_runs_per_owner(user, other_user, memory_factory):
    memory_factory(FALCON)
    memory_factory(BERLIN)
    ConsolidationRun.objects.create(owner=user)
    with pytest.raises(ConsolidationBusy):
        consolidate_owner(owner=user)
    # Another owner is not blocked.
    assert consolidate_owner(owner=other_user).run.finished_at


def test_abandoned_run_does_not_block_forever(user, memory_factory):
    memory_factory(FALCON)
    memory_factory(BERLIN)
    ConsolidationRun.objects.create(owner=user, started_at=timezone.now() - timezone.timedelta(hours=2))
    assert len(consolidate_owner(owner=user).consolidations) == 1


def test_query_answers_from_memories_with_citations(user, memory_factory):
    falcon = memory_factory(FALCON)
    memory_factory(GARDEN)
    result = answer_question(owner=user, question="Who leads Project Falcon?")
    assert f"[Memory {falcon.pk}]" in result.answer and "Sarah Chen" in result.answer
    assert result.cited == [falcon.pk]
    assert falcon.pk in result.recall.memory_ids
    assert result.provider.startswith("offline") and not result.provider_is_language_model


def test_query_says_when_nothing_is_relevant(user, memory_factory):
    memory_factory(GARDEN)
    result = answer_question(owner=user, question="What is the capital of Peru?")
    assert "couldn't find" in result.answer and result.cited == []


def test_query_never_reads_another_owners_memories(user, other_user, memory_factory):
    memory_factory(FALCON, owner=other_user)
    result = answer_question(owner=user, question="Who leads Project Falcon?")
    assert result.recall.memory_ids == [] and result.cited == []


def test_citations_outside_the_context_are_removed():
    answer = "Falcon launches in March [Memory 3]. Also [Memory 99]."
    assert strip_foreign_citations(answer, allowed={3}) == "Falcon launches in March [Memory 3]. Also."


def test_recent_strategy_is_the_original_window(user, memory_factory):
    for i in range(55):
        memory_factory(f"Distinct note number {i}.")
    from memories.recall import recall

    result = recall(owner=user, question="anything", strategy="recent")
    ids = result.memory_ids
    assert len(ids) == 50 and ids == sorted(ids, reverse=True)


def test_delete_hides_memory_only_for_owner_and_keeps_file_for_restore(user, other_user):
    memory = ingest_file(owner=user, fileobj=io.BytesIO(b"hello file"), name="a.txt").memory
    path = memory.original.path
    assert not delete_memory(owner=other_user, memory_id=memory.pk)
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert delete_memory(owner=user, memory_id=memory.pk)
    assert not Memory.objects.filter(pk=memory.pk).exists()
    # A delete is a tombstone: the original stays until a purge, so a restore is whole.
    assert open(path, "rb").read() == b"hello file"


def test_clear_removes_everything_of_one_owner(user, other_user, memory_factory, settings, tmp_path):
    memory_factory(FALCON)
    memory_factory(BERLIN)
    consolidate_owner(owner=user)
    kept = memory_factory(GARDEN, owner=other_user)
    counts = clear_owner(owner=user)
    assert counts["memories"] == 2 and counts["consolidations"] == 1
    assert list(Memory.objects.values_list("pk", flat=True)) == [kept.pk]
