"""The closed classes of grammar the update check reads, per language (llm/extractive/grammar.py)."""

import pytest

from memories.llm.extractive import grammar


@pytest.mark.parametrize(
    "sentence, lang, someone_else",
    [
        ("He moved to Leeds.", "en", True),
        ("He cambiado de número.", "es", False),  # "I have changed", not English "he"
        ("Il mio numero è 333.", "it", False),  # Italian article, not French "il"
        ("Il habite à Lyon.", "fr", True),
        ("Ella vive en Cádiz.", "es", True),
        ("He cambiado de número.", "", True),  # language unknown: every language's class
    ],
)
def test_a_third_person_subject_is_read_in_the_notes_language(sentence, lang, someone_else):
    assert bool(grammar.third_person_subject(lang).search(sentence)) is someone_else


@pytest.mark.parametrize(
    "sentence, lang, noun",
    [
        ("Il mio numero è 333.", "it", "numero"),
        ("O meu carro é um Fiat.", "pt", "carro"),
        ("Nos mudamos a Valencia.", "es", None),  # Spanish "nos" is "us", not French "our"
        ("Nos voisins ont déménagé.", "fr", "voisins"),
        ("My new manager is Ana.", "en", "manager"),
    ],
)
def test_the_writers_possessive_is_read_in_the_notes_language(sentence, lang, noun):
    m = grammar.possessive_subject(lang).search(sentence)
    assert (m.group(1).lower() if m else None) == noun


@pytest.mark.parametrize(
    "sentence, lang, first",
    [
        ("Nos mudamos a Valencia.", "es", True),
        ("Vivimos en Bilbao.", "es", True),
        ("Ci siamo trasferiti a Trento.", "it", True),
        ("Ho cambiato numero.", "it", True),
        ("Mudamos para o Porto.", "pt", True),
        ("Marta vive en Bilbao.", "es", False),
        ("Vivimos en Bilbao.", "en", False),  # not a pro-drop language
    ],
)
def test_a_first_person_verb_opens_a_pro_drop_sentence(sentence, lang, first):
    assert grammar.pro_drop_first_person(sentence, lang) is first


def test_the_grammar_of_time_modality_and_number():
    """Closed classes read in the note's language (changes/cues.py, statements.py)."""
    from memories.llm.extractive.changes.cues import HEDGED, PAST_FRAME, negated, said_as_past
    from memories.llm.extractive.changes.statements import tokens_of

    assert said_as_past("J'habite à Nantes.", "j'habitais à Rennes")
    assert said_as_past("Trabajo en Telefónica.", "Trabajaba en Indra.")
    assert not said_as_past("I live in Paris.", "I moved to Berlin.")
    assert not said_as_past("Abito a Torino.", "Da settembre abito a Bologna.")
    assert PAST_FRAME.search("Quand j'étais étudiant, j'habitais à Rennes.")
    assert HEDGED.search("Might get an iPhone when the contract ends.")
    assert not HEDGED.search("Moving to Leeds in May.")  # the month, not the modal
    assert negated("No nos mudamos a Madrid.", "es")
    assert not negated("Agora sou enfermeira no Hospital da Luz.", "pt")  # "no" is "in the"
    assert not negated("No more coffee for me.", "en")  # an ending, not a denial
    assert "0612345678" in tokens_of("Mon numéro est le 06 12 34 56 78.")
