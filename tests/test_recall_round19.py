"""Recall's orderings for now and for a period gone read the same first memories whatever
k is asked, so the first five of a recall are the first five of the fifty an answer
recalls. Notes written for this file."""

from __future__ import annotations

from memories.recall import recall
from memories.services import undo_update
from tests.test_offline_engine import needs_meaning

DATED_THEN = (
    "Book club pick for June: The Remains of the Day.",
    "The boiler service is due every October.",
    "Tried the new ramen place by the station; the broth was too salty.",
    "Lent my ladder to the neighbours at number 12.",
    "Renewed the passport, the photo is terrible.",
    "Watched the rugby at Callum's, we lost by a point.",
    "Repotted the monstera, the roots were coming out of the bottom.",
    "Planted tomatoes and basil on the kitchen windowsill.",
)


@needs_meaning
def test_the_first_five_are_the_first_five_of_fifty(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    for i, text in enumerate(DATED_THEN[:5]):
        memory_factory(text, occurred_at=f"2024-0{i + 1}-10")
    old = memory_factory("First week at Corvane Logistics done. Ops analyst, mostly spreadsheets.", occurred_at="2022-11-21")
    memory_factory("Signed with Brightwell Foods today! Supply planner, starting in June.", occurred_at="2025-05-15")
    old.refresh_from_db()
    if old.outdated_by_id:
        undo_update(owner=user, memory_id=old.pk)  # a change no update check marked
    question = "Who was I working for in 2024?"
    fifty = recall(owner=user, question=question, k=50).memory_ids
    five = recall(owner=user, question=question, k=5).memory_ids
    # Before, the first five of fifty were reordered over ten (the note that held then
    # came first) and those of five over five (it did not).
    assert five == fifty[:5], (five, fifty)
