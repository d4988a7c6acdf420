"""Round 27 (issue 25): a changed fact asked for in words neither of its notes says.

Found on the agent's path (MCP add_memory, then ask): after "Started at Brightline as a
data analyst this week" and "Last day at Brightline today. On Monday I start at Veloxa",
the update was marked, yet "Where do I work?" and "What is my job?" answered "not found":
neither line says "work" or "job", and both sit a little further in meaning than the bar a
line with no word of the question needs. What the update check said changed ("employer:
Brightline -> Veloxa") is the slot the two hold, and it is near those questions; it is not
near "What is my salary?" or "Who is my manager?", which the notes cannot answer."""

from datetime import UTC, datetime

import pytest

from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories import textutil
from memories.llm.extractive import answers, spelling
from memories.models import Memory, MemoryLink
from memories.recall import recall
from memories.services import answer_question
from memories.services.updates import detect_updates, mark_superseded
from tests.test_offline_engine import NOTHING, needs_meaning

OLD_JOB = "Started at Brightline as a data analyst this week, the team is lovely."
NEW_JOB = "Last day at Brightline today. On Monday I start at Veloxa as a senior analyst."
ASKED = ("Where do I work?", "What is my job?", "Where am I working these days?")
NOT_SAID = ("What is my salary?", "Who is my manager?", "What car do I drive?", "Where do I live?")


@pytest.mark.parametrize(
    "reason, said",
    [
        ("employer: Brightline as a data analyst -> Veloxa as a senior analyst", "employer: Brightline -> Veloxa"),
        ("civic -> tesla (one value swapped for another, 0.87)", "civic -> tesla"),
        ("residence: Porto -> Lisbon", "residence: Porto -> Lisbon"),
        ("a newer fact", "a newer fact"),
    ],
)
def test_what_changed_is_the_slot_and_each_value_by_its_head(reason, said):
    assert answers._what_changed(reason) == said


def _job_change(*, changes: bool = True, others: tuple[str, ...] = ()) -> AnswerContext:
    old_at, new_at = datetime(2024, 3, 4, tzinfo=UTC), datetime(2025, 10, 31, tzinfo=UTC)
    return AnswerContext(
        memories=[
            MemoryNote(id=2, summary=NEW_JOB, text=NEW_JOB, occurred_at=new_at),
            MemoryNote(id=1, summary=OLD_JOB, text=OLD_JOB, occurred_at=old_at, valid_until=new_at, outdated_by=2),
            *(
                MemoryNote(id=3 + i, summary=t, text=t, occurred_at=datetime(2025, 1, 8 + i, tzinfo=UTC))
                for i, t in enumerate(others)
            ),
        ],
        changes=((1, 2, "employer: Brightline as a data analyst -> Veloxa as a senior analyst"),) if changes else (),
    )


@needs_meaning
def test_a_question_near_what_changed_is_answered_by_the_newer_note(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    for question in ASKED:
        reply = answers.answer(question=question, context=_job_change())
        assert cited_ids(reply)[:1] == [2] and "Veloxa" in reply, (question, reply)
    # The same marked pair without what changed: only the lines' own closeness, too far.
    assert NOTHING in answers.answer(question="Where do I work?", context=_job_change(changes=False))


@needs_meaning
def test_a_note_nearer_the_question_than_the_older_line_does_not_hide_the_change(settings):
    """The agent's space held a gym note too, nearer "Where do I work?" (-0.039) than the
    older job line (-0.052): the change still answers, the gym note does not."""
    settings.MEMORY_EMBEDDINGS = "local"
    context = _job_change(others=("renewed gym membrship - Fitzone Bedminster, 25/mo",))
    reply = answers.answer(question="Where do I work?", context=context)
    assert cited_ids(reply)[:1] == [2] and 3 not in cited_ids(reply), reply


@needs_meaning
def test_a_question_the_change_does_not_answer_is_still_not_found(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    for question in NOT_SAID:
        assert NOTHING in answers.answer(question=question, context=_job_change()), question


@needs_meaning
def test_the_agents_path_marks_the_change_and_answers_from_it(user, memory_factory, local_embeddings):
    """Through the real update check and recall: the reason the check wrote on the link
    reaches the answer's context."""
    memory_factory("Booked the car in for its MOT on the 14th.", occurred_at="2024-01-20")
    old = memory_factory(OLD_JOB, occurred_at="2024-03-04")
    new = memory_factory(NEW_JOB, occurred_at="2025-10-31")
    if not Memory.objects.get(pk=old.pk).outdated_by_id:
        detect_updates(new)  # with embeddings on, ingest leaves the check to the worker
    assert Memory.objects.get(pk=old.pk).outdated_by_id == new.pk
    result = answer_question(owner=user, question="Where do I work?")
    assert result.cited[:1] == [new.pk], result.answer
    assert "Veloxa" in result.answer
    assert answer_question(owner=user, question="What is my salary?").cited == []


def test_recall_reads_what_changed_of_the_owners_own_links_only(user, other_user, memory_factory):
    old = memory_factory("I'm a data analyst at Brightline.", occurred_at="2024-03-04")
    new = memory_factory("Moving on: I start at Veloxa on Monday.", occurred_at="2025-10-31")
    mark_superseded(old=old, new=new, reason="employer: Brightline -> Veloxa")
    # Another space's memory linked by hand to this owner's (the admin refuses it; a row
    # written around it must still not be read into this owner's context).
    theirs = memory_factory("Bob's note about his new job.", owner=other_user)
    MemoryLink.objects.create(from_memory=theirs, to_memory=old, relationship="updates: salary: 40k -> 90k")
    context = recall(owner=user, question="Brightline Veloxa", k=10).to_context()
    assert context.changes == ((old.pk, new.pk, "employer: Brightline -> Veloxa"),)


# A line that writes the question's word its own way (spelling.py). Found on notes written
# by someone who read none of the code, in a hurry: "renewed gym membrship", "leah bday 11
# may", "harbourline 2nd intervew": each was set aside as not saying what was asked.


@pytest.mark.parametrize(
    "written, asked",
    [
        ("membrship", "membership"),  # a slip
        ("intervew", "interview"),
        ("emial", "email"),  # two letters swapped
        ("num", "number"),  # clipped
        ("bday", "birthday"),  # contracted
        ("appt", "appointment"),
        ("membrship", "member"),  # a noun of the noun, misspelt
    ],
)
def test_a_slip_a_clipping_or_a_contraction_spells_the_word(written, asked):
    assert spelling.spells(written, asked)
    assert spelling.respelled([written], [asked]) == {textutil.stem(asked)}


@pytest.mark.parametrize(
    "written, asked",
    [
        ("bay", "birthday"),  # a word of the language is itself, not a contraction
        ("pass", "password"),
        ("passport", "password"),
        ("mo", "month"),  # too short to tell
        ("leahs", "leah"),  # a name asked is the name check's (asked_about), not a spelling
        ("dentist", "dental"),
    ],
)
def test_a_word_of_the_language_or_a_near_name_is_not_respelled(written, asked):
    assert spelling.respelled([written], [asked]) == frozenset()


def _notes(*texts: str) -> AnswerContext:
    return AnswerContext(
        memories=[
            MemoryNote(id=i, summary=t, text=t, occurred_at=datetime(2025, 1, i, tzinfo=UTC)) for i, t in enumerate(texts, 1)
        ]
    )


@needs_meaning
def test_a_note_typed_in_a_hurry_answers_in_the_words_it_meant(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    context = _notes(
        "renewed gym membrship - Fitzone Bedminster, 25/mo",
        "leah bday 11 may - wants to try the bouldering place. book for 2",
        "bin day moved to weds from next month",
        "the bay window leaks again when it rains sideways",
    )
    reply = answers.answer(question="Which gym am I a member of?", context=context)
    assert cited_ids(reply)[:1] == [1] and "Fitzone" in reply, reply
    reply = answers.answer(question="When is Leah's birthday?", context=context)
    assert cited_ids(reply)[:1] == [2] and "11 may" in reply, reply
    # "bay" is a word, not "birthday" contracted.
    context = _notes("renewed gym membrship - Fitzone Bedminster, 25/mo", "the bay window leaks again when it rains sideways")
    assert NOTHING in answers.answer(question="When is my birthday?", context=context)
