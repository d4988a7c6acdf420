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
