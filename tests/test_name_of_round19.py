"""Issue 25, knowing when it does not know: a line that says the thing a question asks the
name of, and a name that is not its name (a place), does not answer "What is the name of
...?". Notes and questions written for this file."""

from __future__ import annotations

from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories.llm.extractive import answers, name_of


def _notes(*texts: str) -> AnswerContext:
    return AnswerContext(memories=[MemoryNote(id=i, summary=t, text=t) for i, t in enumerate(texts, 1)])


NOTES = (
    "Priya went to Lisbon with her boyfriend last weekend, lucky her.",
    "The boiler engineer comes on Thursday morning.",
    "Booked the dentist for a check-up in March.",
)


def test_the_thing_named_is_read_from_the_question():
    assert name_of.thing_named("What is the name of Priya's boyfriend?") == "boyfriend"
    assert name_of.thing_named("What's my uncle's name?") == "uncle"
    assert name_of.thing_named("What is the name of the cat's groomer?") == "groomer"
    assert name_of.thing_named("What is the name of the bakery we liked?") == "bakery"
    assert name_of.thing_named("Where does Priya live?") == ""


def test_a_place_beside_the_thing_is_not_its_name():
    question = "What is the name of Priya's boyfriend?"
    assert not name_of.gives_name_of("Priya went to Lisbon with her boyfriend last weekend.", question)
    assert not name_of.gives_name_of("Her boyfriend is a paramedic.", question)


def test_a_name_bound_to_the_thing_is_its_name():
    question = "What is the name of Priya's boyfriend?"
    for line in (
        "Priya went to Lisbon with her boyfriend Tomasz.",
        "Tomasz, Priya's boyfriend, cooked for us.",
        "Priya's boyfriend is called Tomasz.",
        "Her boyfriend's name is Tomasz.",
        # A possessor is a person, even after a preposition of place.
        "Dinner at Tomasz's flat, Priya's boyfriend cooked.",
    ):
        assert name_of.gives_name_of(line, question), line
    # A line that does not say the thing is left to the other checks ("a rescue greyhound
    # called Pepper" for "the name of Tom's dog").
    assert name_of.gives_name_of("Lunch in Porto on Sunday.", question)


def test_a_word_inside_a_name_is_not_the_thing():
    # "the Red Fox" is a pub; the question's "fox" is not said by it, so nothing is asked of it here.
    assert name_of.gives_name_of("Quiz night at the Red Fox", "What is my fox's name?")


def test_the_answer_says_not_found_for_a_name_never_given():
    assert answers.answer(question="What is the name of Priya's boyfriend?", context=_notes(*NOTES)) == answers.NOTHING
    named = _notes("Priya went to Lisbon with her boyfriend Tomasz last weekend.", *NOTES[1:])
    assert cited_ids(answers.answer(question="What is the name of Priya's boyfriend?", context=named)) == [1]


def test_i_is_no_name():
    assert not name_of.gives_name_of(
        "Priya went to Lisbon with her boyfriend, I'm so jealous.", "What is the name of Priya's boyfriend?"
    )
