"""Insights over a batch written in several languages: grouped by what the notes say, not
by the language they say it in; loners get no insight; themes hold no stopword."""

import stopwordsiso

from memories.models import Consolidation
from memories.services.consolidate import consolidate_owner
from tests.test_offline_engine import needs_meaning

MIXED = [
    "Mein Hund Bruno hat beim Tierarzt eine Impfung bekommen.",
    "Took Bruno to the dog park, he played with a husky for an hour.",
    "Bruno frisst seit gestern kein Trockenfutter mehr.",
    "La reunión con Telefónica sobre el contrato de fibra se retrasa al jueves.",
    "Telefónica nos mandó el borrador del contrato; falta revisar las penalizaciones.",
    "Nous avons réservé le gîte en Bretagne pour les vacances d'août.",
    "The Brittany holiday cottage is booked for August, near Quimper.",
    "Comprei uma bicicleta nova para ir ao trabalho.",
    "Ho finito di leggere il romanzo di Elena Ferrante.",
    "Der Kühlschrank macht seit Tagen komische Geräusche.",
    "Paid the electricity bill for March.",
    "Gestern habe ich mit Oma telefoniert, sie ist wieder gesund.",
]


@needs_meaning
def test_a_mixed_language_batch_is_grouped_by_meaning_not_by_language(user, memory_factory, local_embeddings):  # noqa: F811
    made = [memory_factory(text) for text in MIXED]
    outcome = consolidate_owner(owner=user, batch_size=10)
    groups = sorted(sorted(made.index(m) for m in c.sources.all()) for c in outcome.consolidations)
    # Two German notes that share nothing (the fridge, a call with Oma) are as close to each
    # other as the German and the English note about Bruno: they stay alone.
    assert groups == [[0, 1, 2], [3, 4], [5, 6]], [c.summary for c in outcome.consolidations]
    loners = [made[i] for i in (7, 8, 9, 10, 11)]
    assert not Consolidation.objects.filter(sources__in=loners).exists()
    stops = set().union(*(stopwordsiso.stopwords(lang) for lang in ("de", "es", "fr", "pt", "it")))
    for c in outcome.consolidations:
        theme = c.summary.split(" about ", 1)[1].rstrip(".")
        assert not [w for w in theme.replace(",", " ").split() if w.lower() in stops - {"and", "with"}], c.summary


def test_a_theme_is_no_run_of_the_notes_own_stopwords():
    from memories.llm.base import MemoryNote
    from memories.llm.extractive import insights

    notes = [
        MemoryNote(id=1, summary="a", text="Nous avons réservé le gîte près de Quimper pour août."),
        MemoryNote(id=2, summary="b", text="Nous avons réservé les vélos à Quimper, le gîte est prêt."),
    ]
    result = insights.consolidate(notes)
    assert "nous avons" not in result.summary.lower() and "gîte" in result.summary, result.summary


def _notes(texts):
    from memories.llm.base import MemoryNote
    from memories.llm.extractive.entities import extract_entities, topics_of

    notes = []
    for i, text in enumerate(texts, 1):
        entities = extract_entities(text)
        notes.append(MemoryNote(id=i, summary=text, text=text, entities=entities, topics=topics_of(text, entities)))
    return notes


@needs_meaning
def test_a_thread_found_by_meaning_names_what_its_memories_share_and_holds_only_them(local_embeddings):  # noqa: F811
    from memories.llm.extractive import insights

    notes = _notes(
        [
            "Acheté un vélo électrique chez Decathlon, livraison prévue la semaine prochaine.",
            "Vandaag een nieuwe fiets gekocht bij de winkel in Utrecht.",
            "Vendí la bici vieja por Wallapop a un chico de Zaragoza.",
            "Ho comprato un divano nuovo da Ikea, arriva fra due settimane.",
            "Appelé le plombier pour la fuite sous l'évier. Il passe demain matin.",
        ]
    )
    result = insights.consolidate(notes)
    assert set(result.about) == {1, 2, 3}, (result.summary, result.about)
    theme = result.summary.split(" about ", 1)[1]
    assert not any(word in theme for word in ("divano", "plombier", "decathlon", "livraison")), result.summary


@needs_meaning
def test_notes_close_in_meaning_that_name_nothing_alike_get_no_catch_all(local_embeddings):  # noqa: F811
    from memories.llm.extractive import insights

    notes = _notes(
        [
            "Hoy me siento cansada, pero contenta. Terminé por fin el informe para Telefónica y mañana lo presento.",
            "Commencé un nouveau carnet. Je veux écrire tous les soirs ce qui s'est passé dans la journée.",
            "Oggi mi sento un po' giù. Il lavoro va bene ma mi manca la mia famiglia a Napoli.",
            "Habe heute endlich die Steuererklärung abgegeben.",
            "Heb eindelijk mijn rijbewijs gehaald! Sanne heeft me de hele tijd gesteund.",
        ]
    )
    result = insights.consolidate(notes)
    # Each note's own subject listed ("siento cansada, veux écrire and steuererklärung
    # abgegeben") would claim a thread the notes do not share.
    assert len(result.about) <= 2, (result.summary, result.about)
    assert not any(w in result.summary for w in ("cansada", "écrire", "carnet", "informe")), result.summary


def test_one_word_said_as_a_topic_and_as_a_name_is_a_thread_without_the_embedding_layer(settings):
    """ "quokka" is a topic of one note (it only opens its sentences) and a name in the
    other: the same word names one thing, and no meaning layer is needed to see it (the
    embedding layer off, the thread by meaning once named nothing and wrote no insight)."""
    from memories.llm.base import MemoryNote
    from memories.llm.extractive import insights

    settings.MEMORY_EMBEDDINGS = "off"
    notes = [
        MemoryNote(
            id=1,
            summary="",
            text="Quokka project: the vault code is 4471. Quokka launch in May.",
            topics=("quokka", "vault", "code"),
        ),
        MemoryNote(id=2, summary="", text="Quokka project launch planning with the Quokka team in May.", entities=("Quokka",)),
    ]
    result = insights.consolidate(notes)
    assert set(result.about) == {1, 2}, result
    assert "quokka" in result.summary.lower(), result.summary
