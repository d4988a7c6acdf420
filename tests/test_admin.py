"""The admin console: staff only, sees every owner, and its actions call the services."""

import pytest
from django.urls import reverse

from memories.models import ApiToken, Consolidation, ConsolidationRun, Memory, MemoryLink, ProcessedFile


@pytest.fixture
def admin_client_(client, user_factory):
    client.force_login(user_factory("root", is_staff=True, is_superuser=True))
    return client


@pytest.mark.django_db
def test_non_staff_cannot_enter(client, user):
    client.force_login(user)
    response = client.get(reverse("admin:memories_memory_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.django_db
def test_staff_see_every_owner_and_every_model(admin_client_, user, other_user, memory_factory):
    a = memory_factory("Alice's note about Lisbon.")
    b = memory_factory("Bob's note about Porto.", owner=other_user)
    c = Consolidation.objects.create(owner=user, summary="s", insight="Cities in Portugal")
    c.sources.set([a])
    MemoryLink.objects.create(from_memory=a, to_memory=b, relationship="both Portugal", consolidation=c)
    ConsolidationRun.objects.create(owner=user)
    ProcessedFile.objects.create(owner=user, path="/inbox/x.txt", size=1, mtime=1, sha256="0" * 64, status="ingested", memory=a)
    ApiToken.objects.create(owner=user, name="script", prefix="abc", token_hash="f" * 64)

    listing = admin_client_.get(reverse("admin:memories_memory_changelist")).content.decode()
    assert "Lisbon" in listing and "Porto" in listing
    found = admin_client_.get(reverse("admin:memories_memory_changelist"), {"q": "Porto"}).content.decode()
    assert "Porto" in found and "Lisbon" not in found
    assert "Porto" not in admin_client_.get(reverse("admin:memories_memory_changelist"), {"status__exact": "failed"}).content.decode()
    for model in ["consolidation", "memorylink", "consolidationrun", "processedfile", "apitoken"]:
        assert admin_client_.get(reverse(f"admin:memories_{model}_changelist")).status_code == 200, model
    change = admin_client_.get(reverse("admin:memories_memory_change", args=[a.pk])).content.decode()
    assert "both Portugal" in change and reverse("admin:memories_consolidation_change", args=[c.pk]) in change
    assert admin_client_.get(reverse("admin:memories_consolidation_change", args=[c.pk])).status_code == 200
    assert admin_client_.get(reverse("admin:django_q_schedule_changelist")).status_code == 200


@pytest.mark.django_db
def test_retry_action_requeues_only_failed(admin_client_, memory_factory):
    failed = memory_factory("broke", extract=False)
    ready = memory_factory("fine")
    Memory.objects.filter(pk=failed.pk).update(status="failed", error="boom")
    response = admin_client_.post(reverse("admin:memories_memory_changelist"),
                                  {"action": "retry_extraction", "_selected_action": [failed.pk, ready.pk]}, follow=True)
    assert b"Queued 1 failed memories" in response.content
    assert Memory.objects.get(pk=failed.pk).status == "pending"
    assert Memory.objects.get(pk=ready.pk).status == "ready"


@pytest.mark.django_db
def test_delete_action_goes_through_the_service(admin_client_, memory_factory):
    a, b = memory_factory("one"), memory_factory("two")
    response = admin_client_.post(reverse("admin:memories_memory_changelist"),
                                  {"action": "delete_with_service", "_selected_action": [a.pk]}, follow=True)
    assert b"Deleted 1 memories" in response.content
    assert list(Memory.objects.values_list("pk", flat=True)) == [b.pk]


@pytest.mark.django_db
def test_consolidate_action_runs_for_each_owner(admin_client_, user, memory_factory, sync_tasks):
    a = memory_factory("Alice planned the Lisbon trip.")
    memory_factory("Alice booked flights to Lisbon.")
    admin_client_.post(reverse("admin:memories_memory_changelist"), {"action": "consolidate_owners", "_selected_action": [a.pk]})
    assert Consolidation.objects.filter(owner=user).count() == 1


@pytest.mark.django_db
def test_reextract_action_extracts_again(admin_client_, memory_factory):
    memory = memory_factory("Alice met Bob in Lisbon.")
    Memory.objects.filter(pk=memory.pk).update(summary="stale")
    response = admin_client_.post(reverse("admin:memories_memory_changelist"),
                                  {"action": "reextract", "_selected_action": [memory.pk]}, follow=True)
    assert b"Re-extracted 1 memories" in response.content
    assert Memory.objects.get(pk=memory.pk).summary != "stale"
