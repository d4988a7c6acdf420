"""A newer note close in meaning to an older fact, which its grammar keeps apart, does not
go first for a question about now (recall/newer.py, extractive/quote_order.py): another
thing of the same shop, someone else's news, a price weighed and not taken, a stand-in for
a while, an appointment set after the older one. A real change no update check marked
still goes first (tests/test_updates.py)."""

import pytest

from memories.llm.extractive.changes.kept_apart import not_a_change
from memories.recall import recall
from memories.services import answer_question, undo_update

from .test_updates import needs_meaning


@pytest.mark.parametrize(
    "old, new",
    [
        ("I work at Siemens in Munich.", "My sister Lena just got hired at BMW in Munich!"),
        ("Gym membership is €30 a month.", "The gym also sells protein bars, €2 each."),
        ("Spotify Family costs £17.99 a month.", "Checked Spotify Duo, it'd be £14.99 - not worth switching."),
        ("Ana leads the design team.", "Ana is on leave for a month; Tom covers her 1:1s until she's back."),
        ("Our flat is in Leith, top floor.", "Staying with my parents in Perth for two weeks while the floors are redone."),
        ("Physio appointment Thursday 4pm.", "Booked a massage for right after the physio, 5pm."),
        ("Je travaille chez Renault.", "Mon frère travaille chez Airbus depuis lundi."),
    ],
)
def test_a_note_beside_the_older_fact_is_kept_apart(old, new):
    assert not_a_change(old, new)


@pytest.mark.parametrize(
    "old, new",
    [
        ("I work at Siemens in Munich.", "Started at BMW on Monday, last day at Siemens was Friday."),
        ("Gym membership is €30 a month.", "Gym put the price up to €35 a month."),
        ("Ana leads the design team.", "Ana moved to research; Tom leads design now."),
        ("Aditi looks after the payroll project.", "Aditi handed the payroll project to Sven; she's on leave until May."),
        ("Our flat is in Leith, top floor.", "We moved to Portobello last week!"),
        ("Spotify Family costs £17.99 a month.", "Spotify raised the family plan to £19.99."),
        ("I drive a Corolla.", "Sold the Corolla, bought a used Leaf."),
        ("Taking Spanish lessons on Mondays.", "Dropped the Spanish class, couldn't keep up with work."),
        ("Vivo en Sevilla, en Triana.", "Me mudé a Valencia en marzo."),
        ("Ich arbeite bei Bosch in Stuttgart.", "Seit Januar bin ich bei Zeiss in Jena."),
    ],
)
def test_a_change_is_not_kept_apart(old, new):
    assert not not_a_change(old, new)


@needs_meaning
@pytest.mark.parametrize(
    "old, new, question",
    [
        ("I work at Siemens in the Munich office.", "My sister Lena just got hired at BMW in Munich!", "Where do I work?"),
        (
            "Gym membership at Iron Works is €30 a month.",
            "Iron Works also sells protein bars, €2 each.",
            "How much is my gym membership?",
        ),
        (
            "Physio appointment Thursday 4pm at the clinic.",
            "Booked a massage for right after the physio, 5pm.",
            "When is my physio appointment?",
        ),
    ],
)
def test_a_note_kept_apart_does_not_go_first_for_now(old, new, question, user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    older = memory_factory(old, occurred_at="2024-03-10")
    newer = memory_factory(new, occurred_at="2025-06-12")
    older.refresh_from_db()
    if older.outdated_by_id:  # this test is about the ordering, not the update check
        undo_update(owner=user, memory_id=older.pk)
    ranked = recall(owner=user, question=question, k=5).memory_ids
    assert ranked[0] == older.pk and newer.pk in ranked, ranked
    reply = answer_question(owner=user, question=question)
    assert reply.cited and reply.cited[0] == older.pk, reply.answer
