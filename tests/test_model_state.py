"""State on the model: what views, admin and templates read instead of re-deriving it."""

from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from memories.models import Consolidation, Memory
from memories.services import clear_owner, consolidate_owner, delete_memory, ingest_text, supersede_memory

pytestmark = pytest.mark.django_db


def test_a_memory_is_pending_then_extracted_and_editable(memory_factory):
    memory = memory_factory("The dentist moved the appointment to Thursday.", extract=False)
    assert memory.is_pending and not memory.is_extracted and not memory.is_editable
    memory = memory_factory("The dentist moved the appointment to Thursday.")
    assert not memory.is_pending and memory.is_extracted and memory.is_editable


def test_a_memory_waiting_for_review_is_extracted_but_a_failed_one_is_not(settings, memory_factory):
    settings.MEMORY_REVIEW_MODE = True
    waiting = memory_factory("Lunch with Ana on Friday at the harbour.")
    assert waiting.status == Memory.Status.REVIEW and waiting.is_extracted and waiting.is_editable
    failed = memory_factory("The boiler service is due in March.", extract=False)
    Memory.objects.filter(pk=failed.pk).update(status=Memory.Status.FAILED, error="model down")
    failed.refresh_from_db()
    assert not failed.is_extracted and not failed.is_pending and not failed.is_editable


def test_state_follows_delete_supersede_and_near_duplicate(user, memory_factory):
    first = memory_factory("Priya's new phone number ends in 4411.")
    assert first.state == Memory.State.LIVE == "live" and first.is_live
    copy = memory_factory("Priya's new phone number ends in 4411!")
    Memory.objects.filter(pk=copy.pk).update(duplicate_of=first)
    copy.refresh_from_db()
    assert copy.state == Memory.State.DUPLICATE and copy.is_live  # still in the bank, only left out of recall

    newer = memory_factory("Priya's phone number now ends in 9020.")
    supersede_memory(old=first, new=newer)
    first.refresh_from_db()
    assert first.state == Memory.State.SUPERSEDED and not first.is_live and not first.is_editable

    delete_memory(owner=user, memory_id=newer.pk)
    newer = Memory.all_objects.get(pk=newer.pk)
    assert newer.state == Memory.State.DELETED and newer.state.label == "Deleted" and not newer.is_editable


def test_a_deleted_old_version_reads_as_deleted(user, memory_factory):
    old, new = memory_factory("Version one of the packing list."), memory_factory("Version two of the packing list.")
    supersede_memory(old=old, new=new)
    Memory.all_objects.filter(pk=old.pk).update(deleted_at=timezone.now())
    assert Memory.all_objects.get(pk=old.pk).state == Memory.State.DELETED


@pytest.mark.parametrize(
    ("mime", "name", "kind"),
    [
        ("image/png", "photo.png", "image"),
        ("image/svg+xml", "drawing.svg", ""),  # can carry script: download only
        ("audio/mpeg", "memo.mp3", "audio"),
        ("video/mp4", "clip.mp4", "video"),
        ("application/pdf", "report.pdf", "pdf"),
        ("application/zip", "archive.zip", ""),
    ],
)
def test_preview_kind_by_file_type(user, mime, name, kind):
    memory = ingest_text(owner=user, text=f"A note with {name} attached.", source="test").memory
    assert memory.preview_kind == ""  # no file, nothing to preview whatever the type says
    memory.mime_type = mime
    memory.original.save(name, ContentFile(b"bytes"), save=True)
    assert Memory.objects.get(pk=memory.pk).preview_kind == kind


def test_a_consolidation_is_current_then_stale_then_retired(user, memory_factory):
    a = memory_factory("Sam plans the garden: tomatoes along the south fence.")
    memory_factory("Sam plans the garden: beans next to the tomatoes.")
    consolidate_owner(owner=user)
    insight = Consolidation.objects.get(owner=user)
    assert insight.state == Consolidation.State.CURRENT and not insight.is_stale

    delete_memory(owner=user, memory_id=a.pk)
    insight.refresh_from_db()
    assert insight.state == Consolidation.State.STALE and insight.is_stale

    clear_owner(owner=user)
    insight = Consolidation.all_objects.get(pk=insight.pk)
    assert insight.state == Consolidation.State.RETIRED


def test_expiry_and_state_are_independent(memory_factory):
    memory = memory_factory("The parking permit runs out at the end of the month.")
    memory.expires_at = timezone.now() - timedelta(days=1)
    assert memory.is_expired and memory.state == Memory.State.LIVE


def test_the_admin_lists_and_filters_by_the_same_states(client, user_factory, user, memory_factory):
    client.force_login(user_factory("root", is_staff=True, is_superuser=True))
    live, gone = memory_factory("Keep the receipt for the boiler."), memory_factory("Old shopping list: eggs.")
    expired = memory_factory("The guest wifi password for the weekend.")
    delete_memory(owner=user, memory_id=gone.pk)
    Memory.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    url = "/admin/memories/memory/"

    def ids(**params):
        return {m.pk for m in client.get(url, params).context["cl"].result_list}

    assert ids(state="live") == {live.pk, expired.pk} and ids(state="deleted") == {gone.pk}
    assert ids(fact="expired") == {expired.pk} and expired.pk not in ids(fact="current")
    listed = client.get(url).content.decode()
    assert '<td class="field-state">Deleted</td>' in listed and '<td class="field-state">Live</td>' in listed
