"""Issue 25, knowing when it does not know, by two pieces of evidence that do not depend on
how a kind of data is written: a thing the question names that the owner never wrote of
("my dentist's phone number" among notes that name the dentist, never a phone) means
"not found"; and a chat reply is read with the turns it answers ("who's your new
landlord" / "an old guy called Mr Okoro"), each turn's words staying whose they were.
Notes, chats and questions written for this file."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories.llm.extractive import answers, exchange
from memories.llm.extractive.asked_about import asked_nouns
from memories.services.query import answer_question
from tests.test_offline_engine import NOTHING, needs_meaning

DAY = datetime(2025, 5, 4, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "nouns"),
    [
        ("What is my vet's phone number?", ["vet", "phone", "number"]),
        ("Which school does Omar's sister go to?", ["sister"]),
        ("What's Lena's salary at the new firm?", ["salary", "firm"]),
        ("When is the van insurance renewal?", ["van", "insurance", "renewal"]),
        # The verb after an auxiliary's subject is no thing named.
        ("What did the electrician find behind the fuse box?", ["electrician", "fuse", "box"]),
        ("How much did the sofa delivery cost?", ["sofa"]),
        # "Who's" is "who is"; names are checked apart.
        ("Who's watering the plants while we're away?", ["plants"]),
        ("Where did Omar go?", []),
    ],
)
def test_the_things_a_question_names_are_read_from_its_grammar(question, nouns):
    assert asked_nouns(question) == nouns


def _notes(*texts: str, source: str = "notes") -> AnswerContext:
    return AnswerContext(
        memories=[MemoryNote(id=i, summary=t, text=t, source=source, occurred_at=DAY) for i, t in enumerate(texts, 1)]
    )


NOTES = (
    "Vet (Dr. Amadi) moved Biscuit's jabs to Friday 9 May at 11:20.",
    "The electrician found a scorched wire behind the fuse box, fixed for 140.",
    "Omar's school report came home: top marks in maths.",
    "Paid the sofa delivery, 60 pounds, arrives Tuesday.",
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When are Biscuit's jabs?", 1),
        ("What did the electrician find behind the fuse box?", 2),
        ("What is my vet's phone number?", None),
        ("Which school does Omar's sister go to?", None),
    ],
)
def test_a_thing_no_note_names_is_not_found_while_the_notes_still_answer(question, expected):
    text = answers.answer(question=question, context=_notes(*NOTES))
    if expected is None:
        assert NOTHING in text, text
    else:
        assert cited_ids(text)[:1] == [expected], text


def _chat(*lines: str) -> AnswerContext:
    return AnswerContext(
        memories=[MemoryNote(id=i, summary=t, text=t, source=f"chat-1:D1:{i}", occurred_at=DAY) for i, t in enumerate(lines, 1)]
    )


CHAT = (
    "Ana: finally moved into the new flat!!",
    "Ben: yay. who's your new landlord",
    "Ana: an old guy called Mr Okoro, seems nice",
    "Ben: lucky. mine never answers",
)


def test_a_reply_is_read_with_the_turn_it_answers():
    assert exchange.turns_before(_chat(*CHAT)) == {2: (1,), 3: (1, 2), 4: (2, 3)}
    # Notes name no sequence: none lends another its words.
    assert exchange.turns_before(_notes(*NOTES)) == {}
    text = answers.answer(question="Who is Ana's new landlord?", context=_chat(*CHAT))
    assert cited_ids(text)[:1] == [3], text


def test_the_turn_before_stays_whose_it_was():
    # "your new landlord" is Ana's, said by Ben: Ben's landlord is never named.
    assert NOTHING in answers.answer(question="Who is Ben's new landlord?", context=_chat(*CHAT))


def test_without_the_turn_before_the_reply_says_nothing_of_it():
    alone = AnswerContext(memories=[m for m in _chat(*CHAT).memories if m.id != 2])
    assert NOTHING in answers.answer(question="Who is Ana's new landlord?", context=alone)


@needs_meaning
def test_notes_and_a_chat_through_the_whole_flow(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    notes = [memory_factory(text, occurred_at=DAY) for text in NOTES]
    chat = [memory_factory(text, source=f"chat-1:D1:{i}", occurred_at=DAY) for i, text in enumerate(CHAT, 1)]
    result = answer_question(owner=user, question="What did the electrician find behind the fuse box?")
    assert result.cited[:1] == [notes[1].pk], result.answer
    assert NOTHING in answer_question(owner=user, question="What is my vet's phone number?").answer
    result = answer_question(owner=user, question="Who is Ana's new landlord?")
    assert chat[2].pk in result.cited, result.answer
    assert NOTHING in answer_question(owner=user, question="Who is Ben's new landlord?").answer
