"""Issue 25, knowing when it does not know, by two pieces of evidence that do not depend on
how a kind of data is written: a thing the question names that the owner never wrote of
("my dentist's phone number" among notes that name the dentist, never a phone) means
"not found"; and a chat reply is read with the turns it answers ("who's your new
landlord" / "an old guy called Mr Okoro"), each turn's words staying whose they were.
Notes, chats and questions written for this file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories.llm.extractive import answers, exchange
from memories.llm.extractive.asked_about import asked_nouns, attribute_asked
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


@pytest.mark.parametrize(
    ("question", "attribute"),
    [
        # The value answers: "I work as a nurse", "I moved to Lyon".
        ("What is my job?", {"job"}),
        ("Which city is my home?", {"home"}),
        ("What's Lena's salary at the new firm?", {"salary"}),
        # The head of the phrase: a type, of blood (blood is a thing named).
        ("What is my blood type?", {"type"}),
        # A measure of a thing named, the name of a thing named, a verb's object: no attribute.
        ("How much is my rent?", set()),
        ("What is my cat called?", set()),
        ("What did the electrician find behind the fuse box?", set()),
    ],
)
def test_the_noun_whose_value_is_asked_is_read_from_its_grammar(question, attribute):
    assert attribute_asked(question) == attribute


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


PERSONAL = (
    "I moved to Lyon in March, a small flat near the river.",
    "I work as a nurse at St Mary's, mostly nights.",
    "Paid the plumber 80 pounds for the kitchen tap.",
    "My manager said the appraisal is on 3 June.",
    "Our dog Biscuit loves the beach.",
)


@needs_meaning
def test_an_attribute_asked_is_answered_by_its_value_and_an_unsaid_thing_is_not_found(user, memory_factory, settings, sync_tasks):
    """ "What is my job?" never says "nurse", nor "Which city is my home?" "Lyon": the noun
    whose value is asked need not be written. "How much is my rent?" names a thing the
    owner never wrote: the plumber's price is not the answer; the manager is named but no
    name given."""
    settings.MEMORY_EMBEDDINGS = "local"
    notes = [memory_factory(text, occurred_at=DAY + timedelta(days=i)) for i, text in enumerate(PERSONAL)]
    for question, index in (("What is my job?", 1), ("Which city is my home?", 0), ("What is my dog called?", 4)):
        result = answer_question(owner=user, question=question)
        assert result.cited[:1] == [notes[index].pk], (question, result.answer)
    for question in ("How much is my rent?", "What is my manager's name?", "What is my cat called?"):
        assert NOTHING in answer_question(owner=user, question=question).answer, question


def test_the_line_that_answers_says_the_things_named():
    """Both words are the owner's, in two notes: the boiler's price is not the car's."""
    context = _notes("The boiler service cost 95 pounds, the engineer was quick.", "Car insurance renewal is due in April.")
    assert NOTHING in answers.answer(question="How much did the car service cost?", context=context)
    text = answers.answer(question="How much did the boiler service cost?", context=context)
    assert cited_ids(text)[:1] == [1], text
