"""Notes read out of order: an agent adds two notes in quick succession and the worker
finishes the newer one first, while the older one is still being read. The newer note's
update check then had no older note to judge; when the older one is ready, it is judged
as the older note of the newer ones read before it (services/updates.newer_ready_first).
Found on the agent's path (MCP add_memory twice, task cluster running): "Cancelled the gym
membership" was left beside "Signed up at EasyGym" as two current facts."""

from __future__ import annotations

from memories.models import Memory
from memories.services import extract_memory, ingest_text

PARIS = "I live in Paris, in a small flat near the canal."
BERLIN = "I moved to Berlin last month for the new job."


def _stored(owner, text, when):
    return ingest_text(owner=owner, text=text, occurred_at=when).memory


def test_an_older_note_read_after_a_newer_one_is_still_superseded(user):
    old, new = _stored(user, PARIS, "2024-03-10"), _stored(user, BERLIN, "2025-06-12")
    extract_memory(new.pk)  # the newer note is read first: the older one is no candidate yet
    old.refresh_from_db()
    assert old.status != Memory.Status.READY and old.outdated_by_id is None
    extract_memory(old.pk)
    old.refresh_from_db()
    assert old.outdated_by_id == new.pk and old.valid_until is not None


def test_notes_read_in_order_are_judged_once_and_the_same(user):
    old, new = _stored(user, PARIS, "2024-03-10"), _stored(user, BERLIN, "2025-06-12")
    extract_memory(old.pk)
    extract_memory(new.pk)
    old.refresh_from_db()
    assert old.outdated_by_id == new.pk


def test_a_newer_note_that_changes_nothing_leaves_the_older_one_current(user):
    old, new = _stored(user, PARIS, "2024-03-10"), _stored(user, "I visited Berlin for a conference last week.", "2025-06-12")
    extract_memory(new.pk)
    extract_memory(old.pk)
    old.refresh_from_db()
    assert old.outdated_by_id is None


def test_another_owners_newer_note_never_supersedes(user, other_user):
    theirs = _stored(other_user, BERLIN, "2025-06-12")
    extract_memory(theirs.pk)
    mine = _stored(user, PARIS, "2024-03-10")
    extract_memory(mine.pk)
    mine.refresh_from_db()
    assert mine.outdated_by_id is None


def test_an_older_note_told_of_a_later_time_is_not_judged_by_an_earlier_one(user):
    # Arrived later but tells of an earlier time: the newer note by time is this one.
    berlin = _stored(user, BERLIN, "2025-06-12")
    extract_memory(berlin.pk)
    paris = _stored(user, PARIS, "2024-03-10")
    extract_memory(paris.pk)
    paris.refresh_from_db()
    berlin.refresh_from_db()
    # Paris arrived after Berlin, so no newer note was read before it: nothing marks Paris
    # by this path, and Berlin (the later time) is not marked by the older one.
    assert berlin.outdated_by_id is None
