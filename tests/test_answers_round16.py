"""Issue 25, round 16: a line about a neighbour of the thing asked is no answer (near_miss.py).
"Who is the cat's vet?" over the dog's vet, "my brother's birthday" over the sister's, "my
favourite film" over a favourite podcast: the line says part of what the question names and
another member of the same class in place of the rest. A synonym in that place ("wifi" for
"internet", "manager" for "boss") still answers, and so does a line that names nothing the
question names but gives an instance of it ("Which gym?" / "The Foundry climbing wall") is
not set aside by this reading (it has no anchor); it is not answered on main either.
Notes and questions written for this file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memories.llm.extractive import answers, near_miss
from memories.services.query import answer_question
from tests.test_offline_engine import NOTHING, needs_meaning

DAY = datetime(2025, 3, 2, 9, 0, tzinfo=UTC)

NOTES = (
    "Took Biscuit (the dog) to Dr Hale at Oakfield Vets for his jabs.",
    "My sister Ines's birthday is on 9 October; she wants a new kettle.",
    "Favourite album this year: Blue Rev by Alvvays.",
    "Our broadband password is taped under the router; provider is Zen.",
    "My line manager is Ruth Ng, we meet every Friday.",
    "Signed up at The Boulder Shed climbing wall, Monday evenings.",
    "Planted leeks and chard at the allotment in May.",
)


@pytest.fixture
def notes(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    return [memory_factory(text, occurred_at=DAY + timedelta(days=i)) for i, text in enumerate(NOTES)]


@needs_meaning
def test_a_neighbour_of_the_thing_asked_is_no_answer(user, notes):
    for question in ("Who is the cat's vet?", "When is my brother's birthday?", "What is my favourite film?"):
        result = answer_question(owner=user, question=question)
        assert NOTHING in result.answer, (question, result.answer)


@needs_meaning
def test_the_thing_asked_its_synonym_or_an_instance_still_answers(user, notes):
    for question, index in (
        ("Who is Biscuit's vet?", 0),
        ("When is my sister's birthday?", 1),
        ("What is my favourite album?", 2),
        ("Who is our internet provider?", 3),
        ("Who is my boss?", 4),
    ):
        result = answer_question(owner=user, question=question)
        assert result.cited[:1] == [notes[index].pk], (question, result.answer)


@needs_meaning
def test_a_sibling_stands_for_another_thing_a_synonym_does_not(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    dog = "Took Biscuit (the dog) to Dr Hale at Oakfield Vets for his jabs."
    stems = frozenset({"took", "biscuit", "dog", "dr", "hale", "oakfield", "vet", "jab"})
    assert near_miss.stands_for_another("Who is the cat's vet?", dog, stems, set())
    # Nothing the question names is in the line: no anchor, no contrast to read.
    assert not near_miss.stands_for_another("Who is the hamster's doctor?", dog, stems, set())
    wifi = "Our wifi password is taped under the router; provider is Zen."
    wifi_stems = frozenset({"wifi", "password", "tap", "router", "provider", "zen"})
    assert not near_miss.stands_for_another("Who is our internet provider?", wifi, wifi_stems, set())


def test_words_alone_cannot_tell_a_sibling(settings):
    """Without the embedding layer nothing is set aside (the words arm cannot tell "dog"
    from a synonym of "cat")."""
    settings.MEMORY_EMBEDDINGS = "off"
    line = "Took Biscuit (the dog) to Dr Hale at Oakfield Vets for his jabs."
    assert not near_miss.stands_for_another("Who is the cat's vet?", line, frozenset({"dog", "vet"}), set())
    assert answers.NEAR_MISS
