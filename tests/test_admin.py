"""The admin console: staff only, sees every owner, and its actions call the services."""

import pytest
from django.test import Client
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
    assert (
        "Porto"
        not in admin_client_.get(reverse("admin:memories_memory_changelist"), {"status__exact": "failed"}).content.decode()
    )
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
    response = admin_client_.post(
        reverse("admin:memories_memory_changelist"),
        {"action": "retry_extraction", "_selected_action": [failed.pk, ready.pk]},
        follow=True,
    )
    assert b"Queued 1 failed memories" in response.content
    assert Memory.objects.get(pk=failed.pk).status == "pending"
    assert Memory.objects.get(pk=ready.pk).status == "ready"


@pytest.mark.django_db
def test_delete_action_goes_through_the_service(admin_client_, memory_factory):
    a, b = memory_factory("one"), memory_factory("two")
    response = admin_client_.post(
        reverse("admin:memories_memory_changelist"), {"action": "delete_with_service", "_selected_action": [a.pk]}, follow=True
    )
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
    response = admin_client_.post(
        reverse("admin:memories_memory_changelist"), {"action": "reextract", "_selected_action": [memory.pk]}, follow=True
    )
    assert b"Re-extracted 1 memories" in response.content
    assert Memory.objects.get(pk=memory.pk).summary != "stale"


# --- corrections: tombstones, history, purge ---------------------------------------------------


@pytest.mark.django_db
def test_memory_admin_shows_deleted_and_superseded_with_filters(admin_client_, user, memory_factory):
    from memories.services import delete_memory, supersede_memory

    text = "The quarterly review covered hiring plans, the billing migration schedule and the cloud budget for next year."
    live = memory_factory("Live note about Lima.")
    gone = memory_factory("Deleted note about Quito.")
    old = memory_factory("Old version about Bogota.")
    new = memory_factory("New version about Bogota and Cali.")
    original = memory_factory(text)
    near = memory_factory(text + " And snacks.")
    delete_memory(owner=user, memory_id=gone.pk)
    supersede_memory(old=old, new=new)
    url = reverse("admin:memories_memory_changelist")

    everything = admin_client_.get(url).content.decode()
    assert all(f"Memory {m.pk}" in everything or f">{m.pk}<" in everything for m in (live, gone, old, new))
    assert "Quito" in everything and "Bogota." in everything
    deleted = admin_client_.get(url, {"state": "deleted"}).content.decode()
    assert "Quito" in deleted and "Lima" not in deleted
    superseded = admin_client_.get(url, {"state": "superseded"}).content.decode()
    assert "Old version" in superseded and "Quito" not in superseded
    live_only = admin_client_.get(url, {"state": "live"}).content.decode()
    assert "Lima" in live_only and "Quito" not in live_only and "Old version" not in live_only
    duplicates = admin_client_.get(url, {"duplicate": "yes"}).content.decode()
    assert f'href="{reverse("admin:memories_memory_change", args=[near.pk])}' in duplicates
    assert f'href="{reverse("admin:memories_memory_change", args=[original.pk])}' not in duplicates

    page = admin_client_.get(reverse("admin:memories_memory_change", args=[gone.pk])).content.decode()
    assert "Deleted" in page and "deleted" in page and "All events of this memory" in page
    page = admin_client_.get(reverse("admin:memories_memory_change", args=[old.pk])).content.decode()
    assert "Superseded by" in page and reverse("admin:memories_memory_change", args=[new.pk]) in page
    page = admin_client_.get(reverse("admin:memories_memory_change", args=[near.pk])).content.decode()
    assert "Near-duplicate of" in page


@pytest.mark.django_db
def test_admin_edit_goes_through_the_service_and_is_recorded(admin_client_, memory_factory):
    from memories.models import Event

    memory = memory_factory("Alice met Bob in Lisbon.")
    url = reverse("admin:memories_memory_change", args=[memory.pk])
    page = admin_client_.get(url).content.decode()
    assert 'name="summary"' in page and 'name="raw_text"' not in page and 'name="status"' not in page
    data = {
        "summary": "Alice met Bob in Porto.",
        "entities": '["Alice", "Bob", "Porto"]',
        "topics": '["travel"]',
        "importance": "0.8",
        "occurred_at_0": memory.occurred_at.strftime("%Y-%m-%d"),
        "occurred_at_1": memory.occurred_at.strftime("%H:%M:%S"),
    }
    bad = admin_client_.post(url, {**data, "importance": "3"})
    assert bad.status_code == 200 and b"less than or equal to 1" in bad.content
    bad = admin_client_.post(url, {**data, "entities": '"Alice"'})
    assert bad.status_code == 200 and b"must be a JSON list of strings" in bad.content
    assert Memory.objects.get(pk=memory.pk).summary != "Alice met Bob in Porto."

    saved = admin_client_.post(url, data)
    assert saved.status_code == 302
    memory.refresh_from_db()
    assert (
        memory.summary == "Alice met Bob in Porto." and memory.entities == ["Alice", "Bob", "Porto"] and memory.importance == 0.8
    )
    event = Event.objects.get(subject_id=memory.pk, action="edited")
    assert event.actor == "user:root" and event.after["summary"] == "Alice met Bob in Porto."
    assert "occurred_at" not in event.before  # unchanged fields are not part of the edit
    history = admin_client_.get(url).content.decode()
    edited_link = f'<a href="{reverse("admin:memories_event_change", args=[event.pk])}">Edited</a>'
    assert edited_link in history and "summary: Alice met Bob in Lisbon. → Alice met Bob in Porto." in history
    assert admin_client_.get(reverse("admin:memories_memory_add")).status_code == 403


@pytest.mark.django_db
def test_restore_action_restores_only_deleted_memories(admin_client_, user, memory_factory):
    from memories.models import Event, RejectedContent
    from memories.services import delete_memory

    gone, live = memory_factory("Restore me."), memory_factory("Never deleted.")
    delete_memory(owner=user, memory_id=gone.pk)
    response = admin_client_.post(
        reverse("admin:memories_memory_changelist"),
        {"action": "restore_memories", "_selected_action": [gone.pk, live.pk]},
        follow=True,
    )
    assert b"Restored 1 memories" in response.content
    assert Memory.objects.filter(pk=gone.pk).exists() and not RejectedContent.objects.filter(owner=user).exists()
    assert Event.objects.filter(subject_id=gone.pk, action="restored", actor="user:root").exists()


@pytest.mark.django_db
def test_purge_action_asks_for_confirmation_then_erases(admin_client_, user, memory_factory):
    from memories.models import Event, RejectedContent
    from memories.services import delete_memory

    memory = memory_factory("My passport number is X1234567.")
    keep = memory_factory("Unrelated note.")
    delete_memory(owner=user, memory_id=memory.pk)
    url = reverse("admin:memories_memory_changelist")
    confirm = admin_client_.post(url, {"action": "purge_memories", "_selected_action": [memory.pk]})
    assert (
        confirm.status_code == 200 and b"Yes, purge them for good" in confirm.content and b"cannot be undone" in confirm.content
    )
    assert Memory.all_objects.filter(pk=memory.pk).exists()  # only asked so far

    done = admin_client_.post(url, {"action": "purge_memories", "_selected_action": [memory.pk], "post": "yes"}, follow=True)
    assert b"Purged 1 memories" in done.content
    assert not Memory.all_objects.filter(pk=memory.pk).exists() and Memory.objects.filter(pk=keep.pk).exists()
    assert RejectedContent.objects.filter(owner=user, memory_ref=memory.pk, reason="purged").exists()
    assert "X1234567" not in str(list(Event.objects.filter(subject_id=memory.pk).values("before", "after", "note")))
    assert Event.objects.filter(subject_id=memory.pk, action="purged", actor="user:root").exists()


@pytest.mark.django_db
def test_purge_from_the_memory_page(admin_client_, user, memory_factory):
    from memories.services import delete_memory

    memory = memory_factory("Purge me from my own page.")
    delete_memory(owner=user, memory_id=memory.pk)
    url = reverse("admin:memories_memory_change", args=[memory.pk])
    assert b"purge_memories" in admin_client_.get(url).content
    form = {"CHANGE_FORM-action": "purge_memories", "_selected_action": [memory.pk]}
    confirm = admin_client_.post(url, form)
    assert confirm.status_code == 200 and b"Yes, purge them for good" in confirm.content
    done = admin_client_.post(url, {**form, "post": "yes"})
    assert done.status_code == 302 and done["Location"] == reverse("admin:memories_memory_changelist")
    assert not Memory.all_objects.filter(pk=memory.pk).exists()


@pytest.mark.django_db
def test_event_and_rejected_content_admins_are_read_only_and_filterable(admin_client_, user, other_user, memory_factory):
    from memories.models import Event, RejectedContent
    from memories.services import Actor, delete_memory, purge_memory, update_memory

    mine = memory_factory("Alice's note about Rome.")
    bobs = memory_factory("Bob's note about Naples.", owner=other_user)
    update_memory(owner=user, memory_id=mine.pk, changes={"importance": 0.95}, actor=Actor.for_user(user))
    delete_memory(owner=other_user, memory_id=bobs.pk, actor=Actor.for_command("test"))
    purge_memory(owner=other_user, memory_id=bobs.pk)

    url = reverse("admin:memories_event_changelist")
    listing = admin_client_.get(url).content.decode()
    assert f"Memory {mine.pk}" in listing and f"Memory {bobs.pk} (purged)" in listing  # every owner
    edited = admin_client_.get(url, {"action__exact": "edited"}).content.decode()
    assert "user:alice" in edited and "command:test" not in edited
    by_people = admin_client_.get(url, {"actor_kind": "user"}).content.decode()
    assert "user:alice" in by_people and "command:test" not in by_people
    by_command = admin_client_.get(url, {"actor_kind": "command"}).content.decode()
    assert "command:test" in by_command and "user:alice" not in by_command
    searched = admin_client_.get(url, {"q": "alice"}).content.decode()
    assert "user:alice" in searched and "command:test" not in searched
    of_one = admin_client_.get(url, {"subject_type__exact": "memory", "subject_id": mine.pk}).content.decode()
    assert f"Memory {mine.pk}" in of_one and f"Memory {bobs.pk}" not in of_one

    event = Event.objects.filter(action="edited").get()
    page = admin_client_.get(reverse("admin:memories_event_change", args=[event.pk])).content.decode()
    assert "0.95" in page and 'name="actor"' not in page
    assert (
        admin_client_.post(reverse("admin:memories_event_change", args=[event.pk]), {"actor": "someone else"}).status_code == 403
    )
    assert admin_client_.get(reverse("admin:memories_event_add")).status_code == 403
    assert admin_client_.post(reverse("admin:memories_event_delete", args=[event.pk]), {"post": "yes"}).status_code == 403
    assert Event.objects.get(pk=event.pk).actor == "user:alice"

    rejected = RejectedContent.objects.get()
    listing = admin_client_.get(reverse("admin:memories_rejectedcontent_changelist")).content.decode()
    assert rejected.content_hash[:16] in listing and f"Memory {bobs.pk} (purged)" in listing
    assert admin_client_.get(reverse("admin:memories_rejectedcontent_change", args=[rejected.pk])).status_code == 200
    assert (
        admin_client_.post(reverse("admin:memories_rejectedcontent_delete", args=[rejected.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert RejectedContent.objects.filter(pk=rejected.pk).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("model", ["event", "rejectedcontent", "memory"])
def test_non_staff_cannot_see_history_or_tombstones(client, user, model):
    client.force_login(user)
    response = client.get(reverse(f"admin:memories_{model}_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.django_db
def test_one_rule_for_originals_staff_may_fetch_the_file_the_admin_links(admin_client_, user, other_user, user_factory):
    import io

    from memories.services import delete_memory, ingest_file, purge_memory

    memory = ingest_file(owner=user, fileobj=io.BytesIO(b"alice's scan"), name="scan.txt").memory
    change = admin_client_.get(reverse("admin:memories_memory_change", args=[memory.pk])).content.decode()
    link = reverse("memories:file", args=[memory.pk]) + "?download=1"
    assert link in change
    served = admin_client_.get(link)
    assert served.status_code == 200 and b"".join(served.streaming_content) == b"alice's scan"
    # Staff without the permission to view memories, and other users, get nothing.
    plain_staff = user_factory("intern", is_staff=True)
    client = Client()
    client.force_login(plain_staff)
    assert client.get(link).status_code == 404
    client.force_login(other_user)
    assert client.get(link).status_code == 404
    # A deleted memory's file stays its owner's (its page links it) until a purge erases it.
    delete_memory(owner=user, memory_id=memory.pk)
    client.force_login(user)
    page = client.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    assert link in page
    assert client.get(link).status_code == 200
    purge_memory(owner=user, memory_id=memory.pk)
    assert client.get(link).status_code == 404


@pytest.mark.django_db
def test_admin_says_memories_and_writes_times_like_the_pages(admin_client_, memory_factory):
    from django.utils import timezone

    memory = memory_factory("Lunch with Priya.")
    index = admin_client_.get(reverse("admin:index")).content.decode()
    assert "Memories" in index and "Memorys" not in index and "Api tokens" not in index
    change = admin_client_.get(reverse("admin:memories_memory_change", args=[memory.pk])).content.decode()
    assert timezone.localtime(memory.created_at).strftime("%Y-%m-%d %H:%M") in change


@pytest.mark.django_db
def test_staff_who_may_only_view_memories_cannot_run_the_actions_that_change_them(user_factory, memory_factory, sync_tasks):
    """Actions with no permission named are offered to anyone who can open the list, so a
    read-only clerk could re-extract (overwriting corrections), retry or consolidate."""
    from django.contrib.auth.models import Permission

    memory = memory_factory("Alice met Bob in Lisbon.")
    memory_factory("Alice booked flights to Lisbon.")
    failed = memory_factory("broke", extract=False)
    Memory.objects.filter(pk=memory.pk).update(summary="corrected by alice")
    Memory.objects.filter(pk=failed.pk).update(status="failed", error="boom")
    clerk = user_factory("clerk", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_memory"))
    client = Client()
    client.force_login(clerk)
    changelist = reverse("admin:memories_memory_changelist")
    assert client.get(changelist).status_code == 200  # the clerk may look
    for action in ("reextract", "retry_extraction", "consolidate_owners"):
        client.post(changelist, {"action": action, "_selected_action": [memory.pk, failed.pk]})
    assert Memory.objects.get(pk=memory.pk).summary == "corrected by alice"
    assert Memory.objects.get(pk=failed.pk).status == "failed"
    assert not Consolidation.objects.exists()


@pytest.mark.django_db
def test_a_link_written_in_the_admin_cannot_join_two_owners_spaces(admin_client_, user, other_user, memory_factory):
    """Links are the one thing staff write by hand: one from Alice's memory to Bob's would
    show Bob's memory on Alice's page. The admin refuses it, and a link of that kind made
    some other way is still not shown."""
    alice = memory_factory("Alice: the Lisbon offsite is in May.", owner=user)
    bob = memory_factory("Bob: my bank PIN is 4812.", owner=other_user)
    response = admin_client_.post(
        reverse("admin:memories_memorylink_add"), {"from_memory": alice.pk, "to_memory": bob.pk, "relationship": "same trip"}
    )
    assert response.status_code == 200 and "different owners" in response.content.decode()
    assert not MemoryLink.objects.exists()

    MemoryLink.objects.create(from_memory=alice, to_memory=bob, relationship="same trip")
    MemoryLink.objects.create(from_memory=bob, to_memory=alice, relationship="same trip back")
    alice_client = Client()
    alice_client.force_login(user)
    page = alice_client.get(reverse("memories:detail", args=[alice.pk])).content.decode()
    assert "Lisbon" in page and "PIN" not in page and "same trip" not in page
