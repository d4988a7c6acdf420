"""The services behind the pages: the bank's keyset pages, a memory's page, the consolidation
run state, the status panel and the nav's review count, each scoped to its owner."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from memories.models import ConsolidationRun, Memory, MemoryLink
from memories.services import browse, delete_memory, purge_memory, supersede_memory
from memories.services.status import QUEUED_FOR, consolidation_run, space_totals, status_panel

from .htmx import hx

pytestmark = pytest.mark.django_db


@pytest.fixture
def bank(user, other_user, memory_factory):
    """Five memories of the user's (oldest first) and three of someone else's."""
    mine = [memory_factory(f"Harbour note {i}: the ferry leaves at {i + 6} o'clock.") for i in range(5)]
    for i in range(3):
        memory_factory(f"Harbour note of Bob's {i}: his boat is blue.", owner=other_user)
    return mine


def test_bank_pages_forward_and_back_through_the_owners_memories_only(user, bank):
    first = browse.bank_page(owner=user, size=2)
    assert [m.pk for m in first.memories] == [bank[4].pk, bank[3].pk]
    assert first.total == 5 and not first.more and first.has_next and not first.has_prev

    second = browse.bank_page(owner=user, size=2, after=first.memories[-1].pk)
    assert [m.pk for m in second.memories] == [bank[2].pk, bank[1].pk] and second.has_next and second.has_prev
    last = browse.bank_page(owner=user, size=2, after=second.memories[-1].pk)
    assert [m.pk for m in last.memories] == [bank[0].pk] and not last.has_next

    back = browse.bank_page(owner=user, size=2, before=second.memories[0].pk)
    assert [m.pk for m in back.memories] == [m.pk for m in first.memories] and not back.has_prev and back.has_next


def test_bank_page_sorts_and_filters_like_the_filters_say(user, bank):
    oldest_first = browse.bank_page(owner=user, size=3, sort="old")
    assert [m.pk for m in oldest_first.memories] == [m.pk for m in bank[:3]]
    found = browse.bank_page(owner=user, q="ferry")
    assert found.total == 5 and all(m.owner_id == user.pk for m in found.memories)
    assert browse.bank_page(owner=user, q="blue boat").memories == []  # Bob's words are not in the user's bank


def test_a_cursor_from_another_owner_or_a_deleted_memory_starts_over(user, other_user, bank):
    bobs = Memory.objects.filter(owner=other_user).first()
    page = browse.bank_page(owner=user, size=2, after=bobs.pk)
    assert page.lost_cursor and [m.pk for m in page.memories] == [bank[4].pk, bank[3].pk]
    delete_memory(owner=user, memory_id=bank[3].pk)
    page = browse.bank_page(owner=user, size=2, after=bank[3].pk)
    assert page.lost_cursor and page.total == 4


def test_bank_page_counts_each_shown_memorys_connections(user, bank):
    MemoryLink.objects.create(from_memory=bank[4], to_memory=bank[3], relationship="same ferry")
    MemoryLink.objects.create(from_memory=bank[2], to_memory=bank[4], relationship="same harbour")
    counts = {m.pk: m.link_count for m in browse.bank_page(owner=user).memories}
    assert counts[bank[4].pk] == 2 and counts[bank[3].pk] == 1 and counts[bank[0].pk] == 0


def test_bank_count_stops_at_the_cap_for_searches_but_not_for_the_whole_bank(user, bank, monkeypatch):
    monkeypatch.setattr(browse, "COUNT_CAP", 3)
    assert browse.bank_count(owner=user, q="harbour") == (3, True)
    assert browse.bank_count(owner=user) == (5, False)


def test_memory_page_shows_every_state_to_its_owner_and_nothing_to_others(user, other_user, memory_factory):
    old = memory_factory("The spare key is under the blue pot.")
    new = memory_factory("The spare key is now with the neighbour.")
    supersede_memory(old=old, new=new)
    page = browse.memory_page(owner=user, memory_id=new.pk)
    assert page.memory == new and list(page.older_versions) == [old]
    assert [e.action for e in page.events] and page.context()["memory"] == new
    gone = browse.memory_page(owner=user, memory_id=old.pk)
    assert gone.memory.state == Memory.State.SUPERSEDED
    with pytest.raises(Memory.DoesNotExist):  # access_memory: someone else's is not found
        browse.memory_page(owner=other_user, memory_id=new.pk)


def test_run_state_from_idle_to_queued_to_running_to_finished(user, other_user, memory_factory):
    memory_factory("Notes from the Monday standup about the release.")
    idle = consolidation_run(owner=user)
    assert (idle.state, idle.latest, idle.just_finished, idle.request_done, idle.waiting) == ("idle", None, False, False, 1)

    asked = timezone.now()
    queued = consolidation_run(owner=user, requested_at=asked)
    assert queued.state == "queued" and not queued.request_done
    # Someone else's run says nothing about this owner's.
    ConsolidationRun.objects.create(owner=other_user)
    assert consolidation_run(owner=user, requested_at=asked).state == "queued"

    run = ConsolidationRun.objects.create(owner=user, consolidations_made=2, memories_consolidated=7)
    running = consolidation_run(owner=user, requested_at=asked)
    assert running.state == "running" and running.progress["done"] == 2 and running.progress["total"] >= 2
    assert running.progress["memories"] == 7 and not running.request_done

    run.finished_at = timezone.now()
    run.save()
    done = consolidation_run(owner=user, requested_at=asked)
    assert done.state == "idle" and done.just_finished and done.request_done and done.latest == run


def test_a_request_no_worker_picked_up_stops_showing_as_queued(user):
    stale = consolidation_run(owner=user, requested_at=timezone.now() - QUEUED_FOR - timedelta(seconds=1))
    assert stale.state == "idle" and stale.request_done and not stale.just_finished


def test_status_panel_and_space_totals_count_the_owners_space_only(user, other_user, memory_factory):
    memory_factory("Water the ferns on Sunday.")
    memory_factory("Bob's ferns need water too.", owner=other_user)
    memory_factory("Bob's cactus does not.", owner=other_user)
    panel = status_panel(owner=user)
    assert panel["counts"]["memories"] == 1 and panel["provider"]["name"]
    assert space_totals(owner=user)["memory_count"] == 1 and space_totals(owner=other_user)["memory_count"] == 2


def test_original_file_is_offered_only_to_whom_it_may_go(user, other_user, memory_factory):
    memory = memory_factory("A note without a file.")
    assert browse.original_file(user=other_user, memory_id=memory.pk) is None
    assert browse.original_file(user=user, memory_id=10**9) is None


def test_the_nav_counts_waiting_reviews_once_per_page_and_not_in_fragments(signed_in, user, settings, memory_factory):
    settings.MEMORY_REVIEW_MODE = True
    memory = memory_factory("Waiting for a look.")

    def review_counts(queries):
        return [q["sql"] for q in queries if "COUNT" in q["sql"].upper() and "'review'" in q["sql"]]

    with CaptureQueriesContext(connection) as page:
        html = signed_in.get(reverse("memories:list")).content.decode()
    assert 'id="review-count">1<' in html and len(review_counts(page.captured_queries)) == 1
    with CaptureQueriesContext(connection) as fragment:
        assert hx(signed_in, "get", reverse("memories:card", args=[memory.pk])).status_code == 200
    assert review_counts(fragment.captured_queries) == []


def test_history_outlives_a_purge_for_its_owner_only(user, other_user, memory_factory):
    memory = memory_factory("The old alarm code was 1234.")
    delete_memory(owner=user, memory_id=memory.pk)
    purge_memory(owner=user, memory_id=memory.pk)
    history = browse.history_page(owner=user, memory_id=memory.pk)
    assert history.memory is None and {"created", "deleted", "purged"} <= {e.action for e in history.events}
    assert browse.history_page(owner=other_user, memory_id=memory.pk) is None
    assert browse.purge_record(owner=user, memory_id=memory.pk).action == "purged"
    assert browse.purge_record(owner=other_user, memory_id=memory.pk) is None
