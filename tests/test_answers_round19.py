"""Issue 25, the offline answer naming the current value: a line that answers a plain
question about now must not be set aside as "not found" because it says a thing in other
words (the family's familiar names, "membership" for "member"), because the question is
read by English grammar when it is not English, or quoted without the sentence that holds
the value. Notes and questions written for this file."""

from __future__ import annotations

from memories.llm.base import AnswerContext, MemoryNote, cited_ids
from memories.llm.extractive import answers, asked_for, said_as
from memories.llm.extractive.sentences import sentences_of
from memories.textutil import terms
from tests.test_offline_engine import needs_meaning


def _notes(*texts: str) -> AnswerContext:
    return AnswerContext(memories=[MemoryNote(id=i, summary=t, text=t) for i, t in enumerate(texts, 1)])


def test_the_familys_familiar_names_are_the_plain_ones():
    said = said_as.spelled(terms("Mum moved into Larch House in March"))
    assert said_as.says("mother", said)
    assert said_as.says("father", said_as.spelled(terms("Dad's knee is better")))
    # Only the familiar names: a sibling is not a parent, "pa" is mostly another word.
    assert not said_as.says("father", said)
    assert not said_as.says("father", said_as.spelled(terms("Asked the PA to book it")))


def test_a_noun_made_from_another_says_it():
    assert said_as.says("member", said_as.spelled(terms("Got a membership at the climbing wall")))
    assert said_as.says("membership", said_as.spelled(terms("I'm a member of the choir")))
    assert said_as.says("neighbour", said_as.spelled(terms("A quiet neighbourhood")))
    # A longer word that only begins the same is not made from it.
    assert not said_as.says("member", said_as.spelled(terms("The membrane tore")))


def test_a_question_in_another_language_is_not_read_by_english_grammar():
    # "a" is Portuguese's article before a name; read as English's, "agora" ("now") was a
    # thing the question names and no line says.
    context = {0: frozenset(terms("A Joana começou no hospital de Coimbra no verão."))}
    assert answers._unsaid_things("Onde trabalha a Joana agora?", None, context) == []
    # An English question still names its things.
    assert answers._unsaid_things("When is the dog's booster?", None, {0: frozenset(terms("Vet visit on Tuesday"))}) == [
        "dog",
        "booster",
    ]


def test_the_sentence_before_that_holds_the_value_is_quoted_with_the_one_picked():
    text = "Maya switched to Riverside Academy in January. Bigger library, and the bus stops outside."
    question = "Which school does Maya go to?"
    kind = asked_for.kind_asked(question)
    second = sentences_of(_notes(text))[1]
    assert answers._value_before(second, kind, question) == "Maya switched to Riverside Academy in January."
    # The first sentence has none before it; a sentence that holds a value of its own and
    # a long one before keeps to itself.
    assert answers._value_before(sentences_of(_notes(text))[0], kind, question) == ""
    own = sentences_of(_notes("We toured Hillcrest Primary and Riverside Academy last spring. Maya goes to Oakdene School now."))
    assert answers._value_before(own[1], kind, question) == ""


@needs_meaning
def test_the_value_is_quoted_when_the_line_says_things_in_other_words(local_embeddings):  # noqa: F811
    context = _notes(
        "Mum moved into Larch House in March, closer to us, and she likes the garden.",
        "Booked the car in for its MOT on Friday.",
    )
    reply = answers.answer(question="Where is my mother living now?", context=context)
    assert cited_ids(reply) == [1] and "Larch House" in reply
    gym = _notes(
        "Cancelled the pool pass. Got a membership at Boulder Barn, the climbing gym by the station.", "Ran 5k in the park."
    )
    reply = answers.answer(question="Which climbing gym am I a member of?", context=gym)
    assert cited_ids(reply) == [1] and "Boulder Barn" in reply


@needs_meaning
def test_the_answer_quotes_the_sentence_that_names_the_school(local_embeddings):  # noqa: F811
    context = _notes(
        "Noor is at Westfield Academy now. Smaller classes and a great school library.", "Dentist on Tuesday for the kids."
    )
    reply = answers.answer(question="Which school does Noor go to?", context=context)
    # Before, only "Smaller classes and a great school library." was quoted: it says "school".
    assert "Westfield Academy" in reply and cited_ids(reply) == [1]
