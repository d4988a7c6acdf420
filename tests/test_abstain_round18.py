"""Issue 25, knowing when it does not know, in a conversation: a question about one speaker
that names a thing only the other speaker ever has ("How did Caroline's son handle the
accident?" where only Melanie has a son) is answered "not found", read from whose the
thing is in the recalled lines. Lines and questions written for this file."""

from __future__ import annotations

from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories.llm.extractive import answers, whose_thing
from tests.test_offline_engine import needs_meaning

LINES = (
    "Melanie: We got into a car accident last week. My son was really brave about it.",
    "Caroline: Oh no, sorry about the accident! Glad your son is okay, Melanie.",
    "Melanie: Thanks. He handled it better than I did, honestly.",
    "Caroline: I spent the weekend painting my bedroom a deep green.",
    "Melanie: Sounds lovely, green is such a calm colour.",
)


def _chat() -> AnswerContext:
    return AnswerContext(memories=[MemoryNote(id=i, summary=t, text=t, source=f"chat-1#{i}") for i, t in enumerate(LINES, 1)])


def test_a_thing_only_the_other_speaker_has_is_not_the_asked_ones():
    context = _chat()
    assert whose_thing.anothers_thing("How did Caroline's son handle the accident?", context, {"caroline"})
    assert not whose_thing.anothers_thing("How did Melanie's son handle the accident?", context, {"melanie"})
    # Caroline's own bedroom is hers, though Melanie's line asks about it.
    assert not whose_thing.anothers_thing("What colour did Caroline paint her bedroom?", context, {"caroline"})


@needs_meaning
def test_the_answer_says_not_found_for_the_others_thing_and_cites_the_owners():
    context = _chat()
    # Before, "Caroline: Glad your son is okay, Melanie." was quoted: Caroline says "son".
    assert not cited_ids(answers.answer(question="How did Caroline's son handle the accident?", context=context))
    assert cited_ids(answers.answer(question="How did Melanie's son handle the accident?", context=context))


def test_notes_without_speakers_are_not_read_so():
    notes = AnswerContext(
        memories=[MemoryNote(id=1, summary="My son Leo starts school in May.", text="My son Leo starts school in May.")]
    )
    assert not whose_thing.anothers_thing("When does Caroline's son start school?", notes, {"caroline"})


def test_a_turn_before_lends_its_words_not_its_speakers_name():
    # "Marco: We adopted a greyhound" after Priya's turn is not about Priya's dog.
    turn = MemoryNote(id=1, summary="", text="Priya: My brother Arjun just moved to Toronto.")
    words = frozenset({"priya", "my", "brother", "arjun", "just", "moved", "to", "toronto"})
    assert answers._without_speaker(turn, words) == words - {"priya"}
    # A turn that says its speaker's name keeps it.
    said = MemoryNote(id=2, summary="", text="Priya: Priya's kiln arrived today.")
    assert "priya" in answers._without_speaker(said, frozenset({"priya", "kiln", "arrived", "today"}))


def test_the_slot_asked_is_no_thing_anyone_holds():
    lines = (
        "Oscar: We finally chose a name for the boat, it's Albatross.",
        "Nadia: Great! I've been baking sourdough every Sunday, my starter is called Bubbles.",
    )
    context = AnswerContext(memories=[MemoryNote(id=i, summary=t, text=t, source=f"chat-3#{i}") for i, t in enumerate(lines, 1)])
    # "name" is only ever Oscar's in these lines: still the
    # question asks a name of Nadia's starter, which is hers.
    assert not whose_thing.anothers_thing("What is the name of Nadia's sourdough starter?", context, {"nadia"})
    assert whose_thing.anothers_thing("What is the name of Nadia's boat?", context, {"nadia"})


def test_a_question_naming_both_speakers_is_answered_by_their_exchange():
    # Each line names one of them by its speaker; the exchange names both (TURN_LABELS_LENT).
    lines = (
        "Leo: I'm flying into Detroit in December, let's meet up in Ann Arbor.",
        "Nadia: Okay, are we still on for Ann Arbor? I can do the 27th.",
    )
    context = AnswerContext(memories=[MemoryNote(id=i, summary=t, text=t, source=f"chat:D9:{i}") for i, t in enumerate(lines, 1)])
    assert cited_ids(answers.answer(question="When were Nadia and Leo meeting up in Ann Arbor?", context=context))
