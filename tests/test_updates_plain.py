"""A new value stated plainly (extractive/changes/plain.py): the same subject, the same
attribute and a value of the same type, with no word that says it changed; and the
look-alikes that are two facts, which a verdict by meaning must not mark."""

from __future__ import annotations

import pytest

from memories.llm.base import MemoryNote
from memories.llm.extractive.changes.plain import value_type
from memories.llm.offline import OfflineProvider
from tests.test_updates import needs_meaning


def marked(old: str, new: str) -> bool:
    older, newer = MemoryNote(id=1, summary=old, text=old), MemoryNote(id=2, summary=new, text=new)
    return bool(OfflineProvider().judge_updates(new=newer, candidates=[older]))


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        # A thing's price, told as an event with no change word.
        ("Spotify costs me £10.99 a month.", "Spotify raised the price again - £12.99."),
        # Lower case: no capitals to find the names by.
        ("my dentist is dr patel on king street", "dentist is dr okoro at the harbour clinic since april"),
        # A label for the slot, the old value opening the older sentence.
        ("Lena is the team lead for mobile.", "Mobile team lead: Farid Haddad."),
        ("Aisha coaches the under-12s on Saturdays.", "Ben Carter coaches the under-12s this season."),
        # Another language, the noun inflected for gender.
        ("Mi jefe es Carlos Ruiz.", "Mi jefa es Ana Gómez desde marzo."),
        # Someone else's fact, the same someone in both.
        ("Mum's care home is Rosewood House.", "Mum is at Elmbrook Lodge since the summer."),
        ("Standup is at 9:30 every day.", "standup 10:00 from monday"),
        # The newer note's past-tense verb says what happened to the thing, not its attribute.
        ("My season ticket costs £3,200 a year.", "Season ticket renewed at £3,390."),
    ],
)
def test_a_new_value_for_the_same_subject_and_slot_is_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new), (old, new)


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        # Close by meaning (0.85) with nothing shared in subject or slot.
        ("Book club pick for June: The Remains of the Day.", "these days my physio is Dr Okafor at Harbour Health"),
        # The old value's own thing, and a narrower kind of the thing.
        ("My dentist is Dr Patel.", "Dr Patel's receptionist is called Joan."),
        ("The wifi password is sunflower42.", "The guest wifi password is tulip99."),
        # Two attributes of one subject; an amount of another thing.
        ("My favorite color is blue.", "My favorite food is lasagna."),
        ("Daycare costs $1,400 a month.", "The daycare fundraiser raised $3,000."),
        ("The house is listed at $450,000.", "The house next door sold for $480,000."),
        # A visit and a one-off are not a new state.
        ("Jonas lives in Hamburg.", "Jonas flew to Lisbon for a conference."),
        ("I run 5k three times a week.", "I ran 10k on Sunday for the first time."),
        # Someone else's: a possessive makes another subject than the writer.
        ("My store on Main Street sells vinyl records.", "My brother's store in Denver sells comics."),
        ("I live in Lisbon, in Alfama.", "Mi hermana vive en Sevilla con su novio."),
        # Compatible additions.
        ("I teach maths at Hillside School.", "I also tutor physics on weekends."),
        ("Our cat is called Miso.", "We got a second cat, Tofu."),
    ],
)
def test_two_facts_that_look_alike_are_not_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new), (old, new)


@pytest.mark.parametrize(
    "value, clause, kind",
    [
        ("12.99", "Spotify raised the price again £12.99.", "amount"),
        ("9:30", "Standup is at 9:30 every day.", "time"),
        ("monday", "standup 10:00 from monday", "time"),
        ("tulip99", "The guest wifi password is tulip99.", "code"),
        ("7th", "Kenji sits on the 7th floor.", "number"),
        ("okoro", "dentist is dr okoro", "word"),
    ],
)
def test_a_value_has_a_type(value, clause, kind):
    assert value_type(value, clause) == kind
