"""Round 26 (issue 25, knowing when it does not know): a reply that takes up what the turn
before told as its speaker's own speaks of that person's thing. "Melanie: I ran a charity
race ..." / "Caroline: That charity race sounds great, Mel!": the race is Melanie's, though
Caroline says the words with no person word, so "What did Caroline realize after her
charity race?" is answered "not found". Lines and questions written for this file."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories.llm.extractive import answers, quote_order, whose, whose_thing
from memories.llm.extractive.asked_about import held_by_asked
from tests.test_offline_engine import needs_meaning

PEOPLE = frozenset({"melanie", "caroline"})


def _chat(*lines: str) -> AnswerContext:
    return AnswerContext(memories=[MemoryNote(id=i, summary=t, text=t, source=f"chat:D4:{i}") for i, t in enumerate(lines, 1)])


RACE = (
    "Melanie: I ran a charity race for mental health on Saturday. I realized self-care is really important.",
    "Caroline: That charity race sounds great, Mel! So proud of you.",
    "Caroline: I'm still looking into counseling jobs, by the way.",
)


def test_a_sentence_with_no_person_word_gives_back_what_the_turn_before_held():
    sentence = "That charity race sounds great, Mel!"
    echoed = whose.owners(sentence, people=PEOPLE, vocatives=frozenset({"mel"}), echoed=frozenset({"race", "chariti"}))
    assert echoed["race"] == {whose.LISTENER}
    # Not echoed, the words of a sentence with no person word are the speaker's, as before.
    assert whose.owners(sentence, people=PEOPLE, vocatives=frozenset({"mel"}))["race"] == {whose.SPEAKER}
    # A person word decides whose the words are, echoed or not.
    mine = whose.owners("My race is next month.", people=PEOPLE, echoed=frozenset({"race"}))
    assert mine["race"] == {whose.SPEAKER}


def test_held_by_the_asked_speaker_leaves_out_what_the_reply_echoed():
    held = held_by_asked(_chat(*RACE), {"caroline"})
    assert "race" not in held[2]
    assert "sound" in held[2]  # what the reply adds of its own stays Caroline's
    # The echo is read only from the turn just before, by another speaker.
    apart = _chat("Melanie: I ran a charity race on Saturday.", "Melanie: It was hard.", "Caroline: That race sounds great!")
    assert "race" in held_by_asked(apart, {"caroline"})[3]


def test_a_thing_only_echoed_by_the_asked_speaker_is_the_others():
    context = _chat(*RACE)
    assert whose_thing.anothers_thing("What did Caroline realize after her charity race?", context, {"caroline"})
    assert not whose_thing.anothers_thing("What did Melanie realize after her charity race?", context, {"melanie"})
    # Told as her own, the race is Caroline's too.
    own = _chat(*RACE[:2], "Caroline: My charity race is next month, I'm nervous.")
    assert not whose_thing.anothers_thing("When is Caroline's charity race?", own, {"caroline"})


@pytest.mark.parametrize(
    "lines, question",
    [
        (RACE, "What did Caroline realize after her charity race?"),
        (
            (
                "Melanie: We went camping with my family in the forest last weekend, roasted marshmallows all night.",
                "Caroline: Exploring nature and family time is so special.",
                "Caroline: I've been busy with the adoption paperwork.",
            ),
            "What did Caroline and her family do while camping?",
        ),
    ],
)
@needs_meaning
def test_the_answer_says_not_found_for_a_thing_the_asked_speaker_only_echoed(lines, question, local_embeddings):
    assert not cited_ids(answers.answer(question=question, context=_chat(*lines)))


@needs_meaning
def test_the_speaker_whose_thing_it_is_is_still_answered(local_embeddings):
    text = answers.answer(question="What did Melanie realize after her charity race?", context=_chat(*RACE))
    assert cited_ids(text)[:1] == [1], text


def _dated_chat(*lines: tuple[str, int]) -> AnswerContext:
    return AnswerContext(
        memories=[
            MemoryNote(id=i, summary=t, text=t, source=f"chat:D{i}:1", occurred_at=datetime(2023, month, 8, tzinfo=UTC))
            for i, (t, month) in enumerate(lines, 1)
        ]
    )


BOOKS = (
    ("Caroline: I've got lots of kids' books - classics, stories from different cultures, educational books, all of that.", 5),
    ("Melanie: I've been painting the fence all weekend, my arms are sore.", 6),
    ("Melanie: Wow, Caroline! Books have such an awesome power! Which one has been your favorite guide?", 7),
)


@needs_meaning
def test_another_speakers_later_line_is_no_newer_value_of_a_line(local_embeddings):
    # The two book lines are each other's nearest (0.87 on e5): read as one fact said
    # again later, Melanie's reply was quoted first as the newer value of Caroline's.
    context = _dated_chat(*BOOKS)
    assert quote_order._newer_by_meaning(context) == {}
    text = answers.answer(question="What kind of books does Caroline have?", context=context)
    assert cited_ids(text) == [1], text


@needs_meaning
def test_a_speakers_own_later_line_still_continues_hers(local_embeddings):
    context = _dated_chat(
        BOOKS[0], BOOKS[1], ("Caroline: Got even more kids' books now, classics and stories from all over the world.", 7)
    )
    assert {k: m.id for k, m in quote_order._newer_by_meaning(context).items()} == {1: 3}


SUMMER = (
    "Melanie: My kids are so excited about summer break! We're thinking about going camping next month. Any fun plans for the summer?",
    "Caroline: Researching adoption agencies — it's been a dream to have a family and give a loving home to kids who need it.",
)


@needs_meaning
def test_a_sentence_saying_the_question_only_as_the_other_speakers_is_no_answer(local_embeddings):
    # The reply holds Melanie's "summer" through the turn before; the sentence itself says
    # "adoption" only as Caroline's.
    text = answers.answer(question="What are Melanie's plans for the summer with respect to adoption?", context=_chat(*SUMMER))
    assert 2 not in cited_ids(text), text
    text = answers.answer(question="What are Caroline's plans with respect to adoption?", context=_chat(*SUMMER))
    assert cited_ids(text)[:1] == [2], text
