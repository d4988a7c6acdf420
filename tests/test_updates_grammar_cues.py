"""Grammar-level evidence of the update check by meaning (extractive/changes/): a possessive's
noun phrase, "too" of degree, a state begun told as a fragment, a chain's middle link told
as the event that began it, a passive of now; and the look-alikes that change nothing (a
denied change, an end for a while, a stay bounded in time, a beginning beside a list)."""

from __future__ import annotations

import pytest

from memories.llm.extractive.changes.cues import ADDITION, BOUNDED, TEMPORARY, past_event, said_as_past
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        # The possessive's noun phrase: "phone number" and "new number" share their noun.
        ("Mira's phone number is 0176 5558 2210.", "Mira's new number is 0157 4431 9902."),
        # "My work email" is the writer's email, whose head noun the newer note repeats.
        ("My work email is j.burke@northwind.com.", "IT migrated us, my email is now jburke@northwind.io."),
        # "too slow" is a degree, not "as well".
        ("My accountant is Dana Whitfield.", "Switched my taxes over to Priya Raman this year, Dana was too slow."),
        # A fragment that begins a state, by meaning, with no change word.
        ("I work as a backend developer at Brightline.", "Started at Veloxa today. Nervous but excited."),
        # A chain's middle link is the event that began its state.
        ("Moved to Geneva for the new contract.", "We relocated again, now in Zurich."),
        # "Ahmed" is a name, not a verb in -ed: the older note is a state.
        ("New GP: Dr. Ahmed at the Riverside practice.", "Had to switch GPs again; it's Dr. Lindqvist now."),
        # "New address" opens the sentence: an adjective of the older note's noun, not someone.
        ("Our address is 12 Elm Road, Bath.", "New address from 1 May: Flat 3, 40 Kingsmead Square, Bath."),
        # A passive of now is no past tense.
        ("Ben coaches the U12s.", "The U12s are coached by Marta this season."),
    ],
)
def test_an_update_in_other_words_is_found(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        # A change denied.
        ("My phone number is 0161 555 0101.", "I did not change my number, people keep asking."),
        # An end for a while.
        ("Our cleaner is Rosa, Tuesdays.", "Rosa is off next Tuesday, back the week after."),
        # A stay bounded in time.
        ("I live in Manchester.", "Spending two weeks in Lisbon for a conference."),
        ("J'habite à Nantes.", "Je suis à Paris pour trois jours chez ma tante."),
        # A beginning beside a slot that lists several values.
        ("I speak Dutch and English.", "Started learning Japanese on Duolingo."),
        # An older event is not a state a beginning replaces.
        ("Started a sourdough starter called Bubbles.", "Mia starts at Oakwood Academy in September."),
        ("Started a sourdough starter called Bubbles.", "Changed the home wifi password to Orca!Sunset9."),
        # A to-do is no state of the writer's ("need" is no verb in -ed), whatever a newer
        # note switches (found on independent scenarios: a background note replaced).
        ("Need to buy printer ink and AA batteries.", "Switched car insurance to Progressive, $94 a month."),
        ("Need to buy printer ink and AA batteries.", "Switched my runs to evenings, Mon/Wed/Fri."),
        # The newer note keeps the older event's value.
        ("I moved to Berlin in 2023.", "In Berlin I now take the U-Bahn to work every day."),
        # An addition across a dash of the same sentence.
        ("We have a dog named Biscuit.", "Adopted a kitten too — her name is Miso."),
        # A change denied at the sentence's head, in Spanish.
        ("Mi médico es el doctor Ruiz.", "No he cambiado de médico, sigo con el doctor Ruiz."),
        # Someone else's fact.
        ("My parents live in Cork.", "I live in Dublin."),
        ("I weigh 80 kg.", "My suitcase weighs 23 kg."),
    ],
)
def test_what_changes_nothing_is_not_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


def test_too_of_degree_is_no_addition():
    assert not ADDITION.search("Dana was too slow")
    assert ADDITION.search("I drink green tea in the afternoon too.")
    assert ADDITION.search("Adopted a kitten too — her name is Miso.")


def test_a_capitalised_word_inside_a_sentence_is_no_past_tense():
    assert not past_event("New GP: Dr. Ahmed at the Riverside practice.")
    assert past_event("Moved to Geneva for the new contract.")


def test_a_passive_of_now_is_no_past():
    assert not said_as_past("Ben coaches the U12s.", "The U12s are coached by Marta this season.")
    assert said_as_past("I live in Paris.", "I lived in Rennes.")


def test_bounds_in_time():
    assert BOUNDED.search("Estou em São Paulo a trabalho até sexta.")
    assert BOUNDED.search("In Lisbon for two weeks.")
    assert not BOUNDED.search("Standup moves to 10:00 from next Monday.")
    assert TEMPORARY.search("Rosa is off next Tuesday.")


def test_a_negation_denies_within_its_own_clause():
    from memories.llm.extractive.changes.cues import negated

    old_words = frozenset({"moro", "porto"})
    assert negated("Não vamos nos mudar para Braga, decidimos ficar no Porto.", "pt", old_words)
    # The old value right after the negation: a correction, not a denial.
    assert not negated("Ella's school pickup is at 2:45 on Fridays, not 3:30.", "en", frozenset({"3:30"}))


@needs_meaning
def test_a_move_denied_in_one_clause_and_the_old_value_kept_in_the_next_is_no_update(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked("Moro no Porto.", "Não vamos nos mudar para Braga, decidimos ficar no Porto.")


def test_a_word_of_time_before_the_noun_is_no_narrower_kind():
    from memories.llm.extractive.changes import other_thing_of_slot

    assert not other_thing_of_slot("Daily standup is at 9:15.", "From next week standup is at 9:45 so the US folks can join.")
    assert other_thing_of_slot("The wifi password is tulip42.", "The guest wifi password is orca9.")
