"""Issue 25, round 15: what the offline answer reads as evidence. Notes kept in a sequence
with no speaker are not a conversation; a quoted title is the title; a line in another
language is read by meaning; a spelled-out "one" before a preposition is no amount; and a
reply answers the question turn before it in its own words, for the one who replies.
Notes, chats and questions written for this file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories.llm.extractive import answers, asked_about, asked_for, exchange
from memories.services.query import answer_question
from tests.test_offline_engine import NOTHING, needs_meaning

DAY = datetime(2025, 1, 5, 9, 0, tzinfo=UTC)


def _sequence(*texts: str) -> AnswerContext:
    """Texts stored as one sequence (a source ending in a position), as an import of a
    conversation or of dated notes keeps them."""
    return AnswerContext(
        memories=[MemoryNote(id=i, summary=t, text=t, source=f"seq-1:D1:{i}", occurred_at=DAY) for i, t in enumerate(texts, 1)]
    )


NOTES = (
    "Blood test on Tuesday, fasting from 8pm the night before.",
    "Meine Steuerberaterin heißt Frau Kessler, Termin am 20. Februar.",
    "Gym membership cancelled, the contract ends in March.",
    "Garage door code changed to 4417.",
    "Tessa recommended the book 'Piranesi', borrowed her copy.",
)


def test_notes_with_no_speaker_are_no_exchange():
    """The note before is not a question this one answers: "Where is the blood test?" was
    answered by the tax adviser's note, which borrowed "blood test" from the note before."""
    assert exchange.turns_before(_sequence(*NOTES)) == {}
    context = _sequence(*NOTES)
    for question in ("Where is the blood test?", "How much was the gym membership?"):
        assert NOTHING in answers.answer(question=question, context=context), question
    text = answers.answer(question="When is the blood test?", context=context)
    assert cited_ids(text)[:1] == [1], text


def test_a_quoted_title_is_the_title():
    assert "piranesi" in asked_about.plain_words("Tessa recommended the book 'Piranesi', borrowed her copy.")
    text = answers.answer(question="Who recommended Piranesi?", context=_sequence(*NOTES))
    assert cited_ids(text)[:1] == [5], text


def test_a_spelled_out_one_before_a_preposition_is_no_amount():
    asked = asked_for.Asked(asked_for.AMOUNT)
    question = "How much does the pottery class cost?"
    assert not asked_for.holds("my cousin teaches one in Kreuzberg, want her number?", asked, question)
    for line in ("it was forty quid for the term", "paid 95 for the term", "Pottery class: £12 a session"):
        assert asked_for.holds(line, asked, question), line


CHAT = (
    "Maya: Jonas!! the puppy finally came home yesterday",
    "Jonas: omg finally. what did you end up naming the puppy?",
    "Maya: we went with Biscuit, the kids outvoted me",
    "Jonas: love it. I started a new job btw, at a logistics startup",
    "Maya: no way, doing what?",
    "Jonas: product manager, mostly warehouse software",
)


def test_the_question_a_reply_answers():
    assert exchange.asked_by(_sequence(*CHAT)) == {3: 2, 6: 5}
    # Notes ask nothing of each other, and a turn that asks nothing is no question.
    assert exchange.asked_by(_sequence(*NOTES)) == {}
    assert exchange.asked_by(_sequence("Ana: we moved", "Ben: nice", "Ana: yes")) == {}


@needs_meaning
def test_a_reply_answers_in_its_own_words_for_the_one_who_replies(user, memory_factory, settings, sync_tasks):
    """ "we went with Biscuit" says no word of "What did Maya name the puppy?": it answers
    Jonas's question, which does. Maya's puppy is not Jonas's."""
    settings.MEMORY_EMBEDDINGS = "local"
    chat = [memory_factory(text, source=f"chat-7:D1:{i}", occurred_at=DAY) for i, text in enumerate(CHAT, 1)]
    result = answer_question(owner=user, question="What did Maya name the puppy?")
    assert chat[2].pk in result.cited, result.answer
    assert NOTHING in answer_question(owner=user, question="What did Jonas name his puppy?").answer


FOREIGN = (
    "mi número nuevo es 0612 448 903, el viejo ya no funciona",
    "il corso di ceramica inizia martedì 14 gennaio alle 19",
    "Blood test on Tuesday, fasting from 8pm the night before.",
    "The new winter tyres cost 480 euros fitted.",
    "Boiler service booked for next Friday morning.",
    "Planted garlic along the back fence.",
)


@needs_meaning
def test_a_note_in_another_language_answers_by_meaning(user, memory_factory, settings, sync_tasks):
    """The English question's words cannot be in a Spanish or Italian note: what it names
    is read from the note's meaning. An English note that does not say the thing named is
    still no answer."""
    settings.MEMORY_EMBEDDINGS = "local"
    notes = [memory_factory(text, occurred_at=DAY + timedelta(days=i)) for i, text in enumerate(FOREIGN)]
    for question, index in (("What's my new phone number?", 0), ("When does my pottery course start?", 1)):
        result = answer_question(owner=user, question=question)
        assert result.cited[:1] == [notes[index].pk], (question, result.answer)
    for question in ("How much did the boiler service cost?", "Where is the blood test?"):
        assert NOTHING in answer_question(owner=user, question=question).answer, question
