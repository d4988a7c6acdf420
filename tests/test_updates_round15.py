"""Round 15's look-alikes of a fact update, found on scenarios written apart from the rules
and written again here in other words: someone else's fact told with kin or a title before
the name, two of the writer's roles when "own" comes before the role, a thing of several
people ("the kids' dentist"), and an older event told in another language with its subject
dropped ("Jantei com a Rita no Porto"). The true updates beside them stay updates."""

from __future__ import annotations

import pytest

from memories.llm.extractive.changes.cues import past_event
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        # Someone else's home, kin or a title before the name.
        ("Uncle Femi lives in Lagos.", "I live in Bristol now."),
        ("Aunt Rosa lives in Valencia, by the beach.", "We live in Madrid these days."),
        # Two roles of the writer's: "own" and "new" before the second one's noun.
        ("Our paediatrician is Dr Sandhu.", "My own new physio is Dr Greaves."),
        # The children's dentist is not the writer's GP.
        ("The kids' dentist is Dr Moss.", "My new GP is Dr Chen."),
        # A dinner out (a past event, its subject dropped) is no home left behind.
        ("Jantei com a Rita no Porto, comida ótima.", "Mudei de casa, agora moro em Lisboa."),
        ("Pasé el finde con Ana en Sevilla, qué buena comida.", "Ahora vivo en Madrid, en un piso pequeño."),
    ],
)
def test_look_alikes_of_an_update_stay_apart(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        ("I live in Paris.", "I live in Berlin now."),
        ("My GP is Dr Patel.", "My new GP is Dr Chen."),
        ("The kids' dentist is Dr Moss.", "The kids' new dentist is Dr Varga."),
        ("Moved to Porto last year.", "Mudei de casa, agora moro em Lisboa."),
    ],
)
def test_the_updates_beside_them_stay_updates(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@pytest.mark.parametrize(
    ("sentence", "past"),
    [
        ("Jantei com a Rita no Porto.", True),
        ("Compré un coche nuevo.", True),
        ("Had dinner with Tom in Porto.", True),
        # The present, and a name opening the note.
        ("Vivo em Lisboa.", False),
        # "To be" in the present, whose ending looks like a past's ("comprou").
        ("Estou a aprender alemão às terças.", False),
        ("José vive en Sevilla.", False),
    ],
)
def test_a_past_event_is_read_in_the_notes_language(sentence, past):
    assert past_event(sentence, any_language=True) is past
