"""A memory the answer brings in for the fact it replaced (extractive/quote_order.py:
brought_text) is quoted whole when short: a note of a change often says first what ended
("Helga retired.") and only then what holds now, in words the question does not use."""

import pytest

from memories.llm.base import MemoryNote
from memories.llm.extractive.quote_order import WHOLE_NOTE_WORDS, brought_text
from memories.services import answer_question, mark_superseded, undo_update

pytestmark = pytest.mark.django_db


def test_a_short_note_is_quoted_whole():
    note = MemoryNote(id=1, summary="", text="Helga retired. The new head of department is Marco Bianchi, friendly guy.")
    assert brought_text(note, ["boss"]) == "Helga retired. The new head of department is Marco Bianchi, friendly guy."


def test_a_long_note_gives_the_sentence_with_the_questions_words_and_what_follows_a_short_one():
    filler = " ".join(["Spent the morning sorting the garage and the old paint tins."] * 3)
    text = f"{filler} Bank news. Opened an account at Triodos, the old one charged fees. Then pizza with Dad."
    assert len(text.split()) > WHOLE_NOTE_WORDS
    note = MemoryNote(id=1, summary="", text=text)
    assert brought_text(note, ["bank"]) == "Bank news. Opened an account at Triodos, the old one charged fees."
    assert brought_text(note, ["pizza"]) == "Then pizza with Dad."


@pytest.mark.parametrize(
    "old, new, question, now",
    [
        (
            "My boss Helga wants the report every Monday.",
            "Helga retired. The new head of department is Marco Bianchi, friendly guy.",
            "Who is my boss?",
            "Marco Bianchi",
        ),
        (
            "My phone is a Samsung Galaxy S21.",
            "The Samsung finally died! Picked up a Pixel 9, still learning the gestures.",
            "What phone do I have?",
            "Pixel 9",
        ),
    ],
)
def test_the_answer_names_the_current_value_when_the_change_opens_with_what_ended(
    old, new, question, now, user, memory_factory, sync_tasks
):
    first = memory_factory(old, occurred_at="2024-01-10")
    second = memory_factory(new, occurred_at="2025-02-01")
    first.refresh_from_db()
    if first.outdated_by_id:
        undo_update(owner=user, memory_id=first.pk)
    assert mark_superseded(old=first, new=second)
    reply = answer_question(owner=user, question=question)
    lines = [line for line in reply.answer.splitlines() if line.startswith("- ")]
    assert lines and f"[Memory {second.pk}]" in lines[0] and now in lines[0], reply.answer
    assert any(line.startswith("- Past") and f"[Memory {first.pk}]" in line for line in lines), reply.answer
