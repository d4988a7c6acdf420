"""Corrections on the web pages: edits, history, deleted memories, purge, review, stale insights."""

import os
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memories.models import Consolidation, Event, Memory, RejectedContent
from memories.services import Actor, delete_memory, ingest_file, ingest_text, supersede_memory
from tests.htmx import HX, hx


def edit_data(memory, **changes):
    """What the edit form posts: every field as shown, with some changed."""
    data = {
        "edit-summary": memory.summary,
        "edit-entities": ", ".join(memory.entities),
        "edit-topics": ", ".join(memory.topics),
        "edit-importance": f"{memory.importance:g}",
        "edit-occurred_at": timezone.localtime(memory.occurred_at).strftime("%Y-%m-%dT%H:%M"),
    }
    data.update({f"edit-{k}": v for k, v in changes.items()})
    return data


# --- edit and history --------------------------------------------------------------------------


@pytest.mark.django_db
def test_detail_shows_the_edit_form_and_the_history(signed_in, user, memory_factory):
    memory = memory_factory("Alice met Bob in Lisbon to plan the offsite.")
    html = signed_in.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    assert 'id="edit-form"' in html and reverse("memories:edit", args=[memory.pk]) in html
    assert 'id="history"' in html
    # Created and extracted, newest first.
    assert re.findall(r'data-action="(\w+)"', html) == ["extracted", "created"]


@pytest.mark.django_db
def test_htmx_edit_saves_only_what_changed_and_records_it(signed_in, user, memory_factory):
    memory = memory_factory("Met Bob in Lisbon to plan the offsite.")  # the engine finds Bob and Lisbon
    old_summary = memory.summary
    response = hx(
        signed_in,
        "post",
        reverse("memories:edit", args=[memory.pk]),
        edit_data(
            memory,
            summary="Alice and Bob planned the June offsite in Lisbon.",
            entities="Alice, Bob, Lisbon",
            importance="0.9",
            occurred_at="2024-05-01T10:00",
        ),
    )
    assert response.status_code == 200
    html = response.content.decode()
    # The form comes back; card, details and history follow out of band, with a success flash.
    assert (
        'id="edit-form"' in html and 'id="history" hx-swap-oob="true"' in html and 'id="detail-card" hx-swap-oob="true"' in html
    )
    assert "corrected: summary, entities, importance, occurred at" in html
    assert "memories-changed" in response["HX-Trigger"]

    memory.refresh_from_db()
    assert memory.summary == "Alice and Bob planned the June offsite in Lisbon."
    assert memory.entities == ["Alice", "Bob", "Lisbon"]
    assert memory.importance == 0.9
    assert memory.occurred_at.strftime("%Y-%m-%d %H:%M") == "2024-05-01 10:00"
    event = Event.objects.filter(subject_type="memory", subject_id=memory.pk, action="edited").get()
    assert event.actor == f"user:{user.username}" and event.actor_user == user
    assert set(event.before) == {"summary", "entities", "importance", "occurred_at"}  # topics was not touched
    assert event.before["summary"] == old_summary and event.after["importance"] == 0.9

    history = signed_in.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    assert re.findall(r'data-action="(\w+)"', history)[0] == "edited"
    assert "Alice and Bob planned the June offsite in Lisbon." in history and f"user:{user.username}" in history
    assert '<td class="now">2024-05-01 10:00</td>' in history  # dates shown as dates, not ISO strings


@pytest.mark.django_db
def test_editing_nothing_records_nothing(signed_in, memory_factory):
    memory = memory_factory("A quiet note.")
    response = hx(signed_in, "post", reverse("memories:edit", args=[memory.pk]), edit_data(memory))
    assert response.status_code == 200 and b"Nothing changed" in response.content
    assert not Event.objects.filter(subject_id=memory.pk, action="edited").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("importance", "7", "importance must be between 0 and 1."),
        ("importance", "very", "importance must be a number between 0 and 1."),
        ("summary", "   ", "The summary cannot be empty."),
        ("occurred_at", "last tuesday", "is not a date or datetime"),
        ("occurred_at", "", "occurred_at cannot be empty."),
        ("summary", "x" * 5001, "at most 5000 characters"),
    ],
)
def test_bad_edits_are_400_with_the_reason_at_the_field_and_change_nothing(signed_in, memory_factory, field, value, message):
    import re

    memory = memory_factory("Lunch with Carol on Friday.")
    before = (memory.summary, memory.importance, memory.occurred_at)
    response = hx(signed_in, "post", reverse("memories:edit", args=[memory.pk]), edit_data(memory, **{field: value}))
    # The form itself comes back (not the flash area a screen away), the reason under the field.
    assert response.status_code == 400 and "HX-Retarget" not in response
    html = response.content.decode()
    assert html.lstrip().startswith('<form id="edit-form"')
    at_field = re.search(rf'<span class="field-error" id="error-{field}">([^<]*)</span>', html)
    assert at_field and message in at_field.group(1).replace("&#x27;", "'"), html
    assert re.search(rf'name="edit-{field}"[^>]*aria-invalid="true"', html) or re.search(
        rf'aria-invalid="true"[^>]*name="edit-{field}"', html
    )
    memory.refresh_from_db()
    assert (memory.summary, memory.importance, memory.occurred_at) == before
    assert not Event.objects.filter(subject_id=memory.pk, action="edited").exists()


@pytest.mark.django_db
def test_plain_form_edit_redirects_and_a_bad_one_keeps_what_was_typed(signed_in, memory_factory):
    memory = memory_factory("Dentist appointment in March.")
    ok = signed_in.post(reverse("memories:edit", args=[memory.pk]), edit_data(memory, topics="health, appointments"))
    assert ok.status_code == 302 and ok["Location"] == reverse("memories:detail", args=[memory.pk])
    assert Memory.objects.get(pk=memory.pk).topics == ["health", "appointments"]
    bad = signed_in.post(reverse("memories:edit", args=[memory.pk]), edit_data(memory, summary="Typed by hand", importance="2"))
    assert bad.status_code == 400
    html = bad.content.decode()
    assert "importance must be between 0 and 1." in html and "Typed by hand" in html and 'id="edit-form"' in html
    assert 'id="error-importance"' in html


@pytest.mark.django_db
def test_edit_needs_post_and_refuses_a_deleted_memory(signed_in, user, memory_factory):
    memory = memory_factory("Old phone number.")
    assert signed_in.get(reverse("memories:edit", args=[memory.pk])).status_code == 405
    delete_memory(owner=user, memory_id=memory.pk)
    response = hx(signed_in, "post", reverse("memories:edit", args=[memory.pk]), edit_data(memory, summary="new"))
    assert response.status_code == 409 and b"restore it before editing" in response.content


@pytest.mark.django_db
def test_a_memory_not_yet_extracted_cannot_be_corrected(signed_in, memory_factory):
    memory = memory_factory("Still waiting for the extractor.", extract=False)
    assert 'id="edit-form"' not in signed_in.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    response = hx(signed_in, "post", reverse("memories:edit", args=[memory.pk]), edit_data(memory, summary="too early"))
    assert response.status_code == 409 and b"not been extracted yet" in response.content
    assert Memory.objects.get(pk=memory.pk).summary == ""


@pytest.mark.django_db
def test_detail_of_a_deleted_memory_shows_its_history_and_restores(signed_in, user, memory_factory):
    memory = memory_factory("The wrong address for the office.")
    delete_memory(owner=user, memory_id=memory.pk, actor=Actor.for_user(user))
    html = signed_in.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    assert "Deleted on" in html and 'id="restore-memory"' in html and 'id="edit-form"' not in html
    assert re.findall(r'data-action="(\w+)"', html)[0] == "deleted"
    restored = signed_in.post(reverse("memories:restore", args=[memory.pk]))
    assert restored.status_code == 302 and Memory.objects.filter(pk=memory.pk).exists()
    assert Event.objects.filter(subject_id=memory.pk, action="restored", actor=f"user:{user.username}").exists()


@pytest.mark.django_db
def test_detail_says_near_duplicate_and_superseded_with_links(signed_in, user, memory_factory):
    text = "The quarterly review meeting covered hiring plans, the billing migration schedule and the budget for cloud spend next year."
    original = memory_factory(text)
    near = memory_factory(text + " Also snacks.")
    assert near.duplicate_of_id == original.pk
    html = signed_in.get(reverse("memories:detail", args=[near.pk])).content.decode()
    assert 'id="duplicate-note"' in html and reverse("memories:detail", args=[original.pk]) in html
    assert f"Memory {near.pk}" in signed_in.get(reverse("memories:detail", args=[original.pk])).content.decode()

    old = memory_factory("Version one of the packing list.")
    new = memory_factory("Version two of the packing list, with a raincoat.")
    supersede_memory(old=old, new=new)
    html = signed_in.get(reverse("memories:detail", args=[old.pk])).content.decode()
    assert "Superseded" in html and reverse("memories:detail", args=[new.pk]) in html
    assert re.findall(r'data-action="(\w+)"', html)[0] == "superseded"
    assert reverse("memories:detail", args=[old.pk]) in signed_in.get(reverse("memories:detail", args=[new.pk])).content.decode()


@pytest.mark.django_db
def test_history_page_outlives_a_purge(signed_in, user, memory_factory):
    memory = memory_factory("Private medical note.")
    url = reverse("memories:history", args=[memory.pk])
    assert signed_in.get(url).status_code == 200
    delete_memory(owner=user, memory_id=memory.pk)
    hx(signed_in, "post", reverse("memories:purge", args=[memory.pk]), {"confirm": "purge"})
    page = signed_in.get(url).content.decode()
    assert "was purged" in page and 'data-action="purged"' in page and "Private medical" not in page
    partial = hx(signed_in, "get", url).content.decode()
    assert "<html" not in partial and 'data-action="purged"' in partial
    assert signed_in.get(reverse("memories:history", args=[999_999])).status_code == 404


# --- deleted memories, restore, purge ----------------------------------------------------------


@pytest.mark.django_db
def test_deleted_page_lists_tombstones_and_is_linked_from_the_bank(signed_in, user, other_user, memory_factory):
    kept = memory_factory("A note I keep.")
    gone = memory_factory("A note I deleted about Oslo.")
    bobs = memory_factory("Bob's deleted note about Bergen.", owner=other_user)
    delete_memory(owner=user, memory_id=gone.pk)
    delete_memory(owner=other_user, memory_id=bobs.pk)
    assert reverse("memories:deleted") in signed_in.get(reverse("memories:list")).content.decode()
    html = signed_in.get(reverse("memories:deleted")).content.decode()
    assert "about Oslo" in html and "Bergen" not in html and "A note I keep" not in html
    assert reverse("memories:restore", args=[gone.pk]) in html and reverse("memories:purge", args=[gone.pk]) in html
    assert kept.pk not in [int(x) for x in re.findall(r'id="memory-(\d+)"', html)]


@pytest.mark.django_db
def test_restore_from_the_deleted_page_brings_the_card_back(signed_in, user, memory_factory):
    memory = memory_factory("Restore me, about Tromsø.")
    delete_memory(owner=user, memory_id=memory.pk)
    response = hx(signed_in, "post", reverse("memories:restore", args=[memory.pk]))
    html = response.content.decode()
    assert response.status_code == 200 and f'id="memory-{memory.pk}"' in html and "restored" in html
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert not RejectedContent.objects.filter(owner=user).exists()
    assert "Tromsø" not in signed_in.get(reverse("memories:deleted")).content.decode()


@pytest.mark.django_db
def test_purge_asks_first_then_erases_the_content_for_good(signed_in, user, memory_factory):
    memory = ingest_file(
        owner=user, fileobj=SimpleUploadedFile("secret.txt", b"My bank PIN is quokka-saffron-seven."), name="secret.txt"
    ).memory
    stored = memory.original.path
    delete_memory(owner=user, memory_id=memory.pk)
    url = reverse("memories:purge", args=[memory.pk])
    confirm = hx(signed_in, "get", url)
    assert b"Purge it" in confirm.content and b"cannot be brought back" in confirm.content
    assert b"Purge it" in signed_in.get(url).content  # a page of its own without htmx
    # A POST that did not come from the confirmation erases nothing.
    refused = hx(signed_in, "post", url)
    assert refused.status_code == 400 and b"nothing was erased" in refused.content
    assert Memory.all_objects.filter(pk=memory.pk).exists()

    done = hx(signed_in, "post", url, {"confirm": "purge"})
    assert done.status_code == 200 and b"purged" in done.content
    assert not Memory.all_objects.filter(pk=memory.pk).exists()
    assert not os.path.exists(stored)
    events = Event.objects.filter(subject_id=memory.pk, subject_type="memory")
    assert "quokka-saffron-seven" not in str(list(events.values("before", "after", "note")))
    assert events.filter(action="purged", actor=f"user:{user.username}").exists()
    # Still refused if it comes back, and nothing left to restore.
    again = hx(
        signed_in,
        "post",
        reverse("memories:ingest_files"),
        {"files": [SimpleUploadedFile("again.txt", b"My bank PIN is quokka-saffron-seven.")]},
    )
    assert again.status_code == 400 and b"purged" in again.content and b"Restore memory" not in again.content
    assert hx(signed_in, "post", reverse("memories:restore", args=[memory.pk])).status_code == 404


@pytest.mark.django_db
def test_plain_purge_redirects_to_the_deleted_page(signed_in, user, memory_factory):
    memory = memory_factory("Erase me.")
    delete_memory(owner=user, memory_id=memory.pk)
    response = signed_in.post(reverse("memories:purge", args=[memory.pk]), {"confirm": "purge"})
    assert response.status_code == 302 and response["Location"] == reverse("memories:deleted")
    assert not Memory.all_objects.filter(pk=memory.pk).exists()


@pytest.mark.django_db
def test_purge_of_a_live_memory_is_refused(signed_in, memory_factory):
    memory = memory_factory("Still here.")
    response = hx(signed_in, "post", reverse("memories:purge", args=[memory.pk]), {"confirm": "purge"})
    assert response.status_code == 409 and b"Delete it first" in response.content
    assert Memory.objects.filter(pk=memory.pk).exists()


# --- ingest of deleted content ------------------------------------------------------------------


@pytest.mark.django_db
def test_reingest_of_deleted_text_says_when_and_offers_restore(signed_in, user):
    memory = ingest_text(owner=user, text="The wifi password is hunter2.").memory
    deleted = delete_memory(owner=user, memory_id=memory.pk)
    response = hx(signed_in, "post", reverse("memories:ingest_text"), {"text": "The wifi password is hunter2."})
    html = response.content.decode()
    assert response.status_code == 400 and response["HX-Retarget"] == "#flash"
    assert f"deleted on {deleted.deleted_at:%Y-%m-%d}" in html and f"restore memory {memory.pk}" in html
    assert f'hx-post="{reverse("memories:restore", args=[memory.pk])}"' in html and f"Restore memory {memory.pk}" in html
    assert Memory.all_objects.filter(owner=user).count() == 1

    plain = signed_in.post(reverse("memories:ingest_text"), {"text": "The wifi password is hunter2."})
    assert plain.status_code == 400 and f'action="{reverse("memories:restore", args=[memory.pk])}"' in plain.content.decode()
    assert b"hx-post" not in re.search(rb'<form class="flash restore-offer".*?</form>', plain.content, re.S).group(0)


@pytest.mark.django_db
def test_reupload_of_a_deleted_file_among_others_offers_restore(signed_in, user):
    old = ingest_file(owner=user, fileobj=SimpleUploadedFile("a.txt", b"Alpha file."), name="a.txt").memory
    delete_memory(owner=user, memory_id=old.pk)
    response = hx(
        signed_in,
        "post",
        reverse("memories:ingest_files"),
        {"files": [SimpleUploadedFile("a-again.txt", b"Alpha file."), SimpleUploadedFile("b.txt", b"Beta file.")]},
    )
    html = response.content.decode()
    assert response.status_code == 200 and "Saved as memory" in html and f"Restore memory {old.pk}" in html


# --- review queue -------------------------------------------------------------------------------


@pytest.fixture
def review_mode(settings):
    settings.MEMORY_REVIEW_MODE = True
    return settings


@pytest.mark.django_db
def test_review_nav_shows_only_when_review_mode_is_on_or_items_wait(signed_in, user, settings, memory_factory):
    settings.MEMORY_REVIEW_MODE = False
    assert b'id="nav-review"' not in signed_in.get(reverse("memories:list")).content
    settings.MEMORY_REVIEW_MODE = True
    page = signed_in.get(reverse("memories:list")).content.decode()
    assert re.search(r'id="review-count">0<', page)
    memory_factory("Waiting for a look.")
    settings.MEMORY_REVIEW_MODE = False  # left over from when it was on: still shown
    assert re.search(r'id="review-count">1<', signed_in.get(reverse("memories:list")).content.decode())


@pytest.mark.django_db
def test_review_approve_and_reject(signed_in, user, review_mode, memory_factory):
    a = memory_factory("Alice's flight lands at 9.")
    b = memory_factory("Spam: you won a cruise.")
    assert a.status == b.status == Memory.Status.REVIEW
    page = signed_in.get(reverse("memories:review")).content.decode()
    assert "flight lands" in page and "won a cruise" in page
    assert reverse("memories:approve", args=[a.pk]) in page and reverse("memories:reject", args=[b.pk]) in page
    assert f"{reverse('memories:detail', args=[a.pk])}#edit" in page

    approved = hx(signed_in, "post", reverse("memories:approve", args=[a.pk]))
    assert (
        approved.status_code == 200
        and b"approved" in approved.content
        and re.search(rb'id="review-count" hx-swap-oob="true">1<', approved.content)
    )
    assert Memory.objects.get(pk=a.pk).status == Memory.Status.READY
    assert Event.objects.filter(subject_id=a.pk, action="approved", actor=f"user:{user.username}").exists()
    again = hx(signed_in, "post", reverse("memories:approve", args=[a.pk]))
    assert again.status_code == 409 and b"not waiting for review" in again.content

    rejected = hx(signed_in, "post", reverse("memories:reject", args=[b.pk]))
    assert rejected.status_code == 200 and b"rejected" in rejected.content
    assert not Memory.objects.filter(pk=b.pk).exists()
    assert RejectedContent.objects.filter(owner=user, memory_ref=b.pk).exists()
    assert {"rejected", "deleted"} <= set(Event.objects.filter(subject_id=b.pk).values_list("action", flat=True))
    assert b"Nothing is waiting" in signed_in.get(reverse("memories:review")).content
    # Rejected content is refused like deleted content.
    refused = hx(signed_in, "post", reverse("memories:ingest_text"), {"text": "Spam: you won a cruise."})
    assert refused.status_code == 400 and f"Restore memory {b.pk}".encode() in refused.content


@pytest.mark.django_db
def test_review_without_htmx_redirects_back_to_the_queue(signed_in, review_mode, memory_factory):
    memory = memory_factory("Check me.")
    response = signed_in.post(reverse("memories:approve", args=[memory.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("memories:review")
    assert Memory.objects.get(pk=memory.pk).status == Memory.Status.READY


@pytest.mark.django_db
def test_editing_a_memory_in_review_keeps_it_waiting(signed_in, review_mode, memory_factory):
    memory = memory_factory("Meeting with Dana on Monday.")
    response = hx(
        signed_in, "post", reverse("memories:edit", args=[memory.pk]), edit_data(memory, summary="Meeting with Dana on Tuesday.")
    )
    assert response.status_code == 200
    memory.refresh_from_db()
    assert memory.summary == "Meeting with Dana on Tuesday." and memory.status == Memory.Status.REVIEW
    detail = signed_in.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    assert "Waiting for review." in detail and f'formaction="{reverse("memories:approve", args=[memory.pk])}"' in detail


# --- consolidations -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_stale_insights_are_marked_and_retired_ones_hidden(signed_in, user, memory_factory):
    a, b, c = memory_factory("Lisbon trip plan."), memory_factory("Lisbon hotel booked."), memory_factory("Lisbon flights.")
    stale = Consolidation.objects.create(owner=user, summary="s", insight="Everything about the Lisbon trip")
    stale.sources.set([a, b, c])
    retired = Consolidation.objects.create(owner=user, summary="s", insight="An insight that was retired")
    retired.sources.set([a])
    Consolidation.all_objects.filter(pk=retired.pk).update(retired_at="2024-01-01T00:00Z")
    fresh = signed_in.get(reverse("memories:consolidations")).content.decode()
    assert "Everything about the Lisbon trip" in fresh and "Stale" not in fresh and "retired" not in fresh

    delete_memory(owner=user, memory_id=c.pk)
    html = signed_in.get(reverse("memories:consolidations")).content.decode()
    article = re.search(rf'<article[^>]*id="consolidation-{stale.pk}".*?</article>', html, re.S).group(0)
    assert 'data-stale="true"' in article and "badge stale" in article
    assert "A source was deleted; it will be re-derived on the next run" in article
    assert f"Memory {c.pk} (deleted)" in article
    assert "An insight that was retired" not in html
    assert "badge stale" in signed_in.get(reverse("memories:detail", args=[a.pk])).content.decode()


# --- isolation and CSRF ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_another_user_gets_404_for_every_correction_of_mine(bob_client, user, settings, memory_factory):
    settings.MEMORY_REVIEW_MODE = True
    live = memory_factory("Alice's live note.")
    waiting = memory_factory("Alice's note waiting for review.")
    gone = memory_factory("Alice's deleted note.")
    delete_memory(owner=user, memory_id=gone.pk)
    for memory in (live, gone):
        assert bob_client.get(reverse("memories:detail", args=[memory.pk])).status_code == 404
        assert bob_client.get(reverse("memories:history", args=[memory.pk])).status_code == 404
        assert bob_client.post(reverse("memories:edit", args=[memory.pk]), edit_data(memory, summary="hacked")).status_code == 404
        assert bob_client.get(reverse("memories:purge", args=[memory.pk])).status_code == 404
        assert bob_client.post(reverse("memories:purge", args=[memory.pk]), {"confirm": "purge"}).status_code == 404
    assert bob_client.post(reverse("memories:restore", args=[gone.pk])).status_code == 404
    for name in ("approve", "reject"):
        assert bob_client.post(reverse(f"memories:{name}", args=[waiting.pk])).status_code == 404
    assert Memory.objects.get(pk=waiting.pk).status == Memory.Status.REVIEW
    assert Memory.objects.get(pk=live.pk).summary != "hacked"
    assert Memory.all_objects.filter(pk=gone.pk, deleted_at__isnull=False).exists()
    assert (
        b"deleted note" not in bob_client.get(reverse("memories:deleted")).content
        and b"Nothing deleted" in bob_client.get(reverse("memories:deleted")).content
    )
    assert b"Alice&#x27;s note" not in bob_client.get(reverse("memories:review")).content
    assert b"Nothing is waiting" in bob_client.get(reverse("memories:review")).content


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["deleted", "review"])
def test_new_pages_need_sign_in(client, name):
    response = client.get(reverse(f"memories:{name}"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
def test_correction_posts_need_the_csrf_token(user, settings, memory_factory):
    settings.MEMORY_REVIEW_MODE = True
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    memory = memory_factory("Needs a token to change.")
    gone = memory_factory("Deleted, needs a token to restore.")
    delete_memory(owner=user, memory_id=gone.pk)
    page = client.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    token = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', page).group(1)
    refused = [
        client.post(reverse("memories:edit", args=[memory.pk]), edit_data(memory, summary="no token"), **HX),
        client.post(reverse("memories:approve", args=[memory.pk]), **HX),
        client.post(reverse("memories:reject", args=[memory.pk]), **HX),
        client.post(reverse("memories:restore", args=[gone.pk]), **HX),
        client.post(reverse("memories:purge", args=[gone.pk]), {"confirm": "purge"}, **HX),
    ]
    assert [r.status_code for r in refused] == [403] * 5
    assert Memory.objects.get(pk=memory.pk).status == Memory.Status.REVIEW
    assert Memory.all_objects.filter(pk=gone.pk, deleted_at__isnull=False).exists()
    accepted = client.post(
        reverse("memories:edit", args=[memory.pk]), edit_data(memory, summary="with token"), HTTP_X_CSRFTOKEN=token, **HX
    )
    assert accepted.status_code == 200 and Memory.objects.get(pk=memory.pk).summary == "with token"
