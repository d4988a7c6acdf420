"""Round 21: a name asked for by "called", and things said in other words in a note.

Found on forty-four questions written by someone who read none of the code, asked in other
words than the notes: "What's our new pet called?" was no question for a name ("What's"
was not read as "What is") and "called" counted as what it was about, and "the reading
group" was never said by "Book club pick for Sept".
"""

import pytest

from memories.llm.extractive import asked_for
from memories.llm.extractive.asked_about import asked_phrases
from memories.services import answer_question
from tests.test_offline_engine import needs_meaning

NOTHING = "couldn't find anything"


@pytest.mark.parametrize(
    "question, name",
    [
        ("What's our new kitten called?", True),
        ("What’s the boat called?", True),
        ("What was the band named?", True),
        ("What is the cat called?", True),
        ("What's been called off?", False),
        ("What was called off at the meeting?", False),
    ],
)
def test_a_question_ending_in_called_asks_for_a_name(question, name):
    assert (asked_for.kind_asked(question) == asked_for.Asked(asked_for.NAME)) is name


@pytest.mark.parametrize(
    "question, phrases",
    [
        ("How much was in my rainy-day fund last time I checked?", [["rainy-day", "fund"]]),
        ("What did my sister cook last night?", [["sister"]]),
        ("What was my last job?", [["last", "job"]]),
        # A quantifier opens a phrase as "the" does, unless it floats after whom it counts.
        ("How much does each physio session cost?", [["physio"]]),
        ("How much is every swim lesson?", [["swim", "lesson"]]),
        ("Did Jon and Gina both take part in the race?", [["race"]]),
        ("What did they each bring?", []),
    ],
)
def test_the_things_a_question_names(question, phrases):
    assert asked_phrases(question) == phrases


NOTES = [
    "Swapped the bathroom extractor fan, the old one rattled.",
    "Ines's swimming teacher is called Gwen, lessons are Thursdays at 5.",
    "Quote for the new fence: £1,180 from Hallam Fencing.",
    "Took the train to York for Dad's birthday lunch at Bettys.",
    "Allotment waiting list: number 14, they said maybe spring.",
]


@needs_meaning
def test_called_is_how_a_name_is_asked_for_not_what_about(user, memory_factory, local_embeddings):
    """A line that says "called" and a name answers only for what it names."""
    for text in NOTES:
        memory_factory(text)
    assert NOTHING in answer_question(owner=user, question="What's our hamster called?").answer
    rescued = memory_factory("We adopted a kitten! Miso, 12 weeks old, from the shelter on Kent Road.")
    result = answer_question(owner=user, question="What's our new pet called?")
    assert result.cited and result.cited[0] == rescued.pk, result.answer


@needs_meaning
def test_a_note_says_what_the_question_names_in_other_words(user, memory_factory, local_embeddings):
    """The owner wrote "book club"; the question asks about the reading group."""
    for text in NOTES:
        memory_factory(text)
    pick = memory_factory("Book club pick for Nov: 'The Overstory'.")
    result = answer_question(owner=user, question="Which novel did my reading group choose for November?")
    assert result.cited and result.cited[0] == pick.pk, result.answer
    # Still nothing for what the notes never say.
    assert NOTHING in answer_question(owner=user, question="Which film did my cinema club choose?").answer


@needs_meaning
def test_a_price_of_something_else_is_no_answer_to_each_session(user, memory_factory, local_embeddings):
    """ "each osteo session" names osteo: a lodge's or a flight's price does not answer it."""
    for text in NOTES:
        memory_factory(text)
    memory_factory("Osteo for my shoulder. Stretches every morning, check-up in a month.")
    memory_factory("Booked a lodge near Aviemore for the stag do, £420 for three nights.")
    memory_factory("Ryanair flights £89 each, staying at a little hostel in Porto called Casa Azul.")
    assert NOTHING in answer_question(owner=user, question="How much does each osteo session cost?").answer
    fee = memory_factory("Osteo is £55 a session, paid on the day.")
    result = answer_question(owner=user, question="How much does each osteo session cost?")
    assert result.cited and result.cited[0] == fee.pk, result.answer
