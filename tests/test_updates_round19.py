"""Round 19's false updates (issue 25), each written here in words of its own: two unrelated
notes that share a name, one of them in the possessive ("at Marta's" / "Lent Marta my
ladder"); a visit read as a home from the rest of its sentence; a comment with its subject
dropped ("Slow but really lovely") read as a name; a stay with its day of return ("Back
home Monday"); someone away for a while who comes back to the old value ("kommt er
zurück nach Köln"); and, in a language that drops its pronouns, someone named doing what
the writer's verb said of the writer ("Lavoro come ..." / "Marco ha cambiato lavoro").
Each was marked as an update before this round. The updates beside them stay found, and
one is found that was not: "Amit's gone ..." is "Amit has gone", not a thing of Amit's."""

from __future__ import annotations

import pytest

from memories.llm.extractive import grammar
from memories.llm.extractive.changes import back_to_old
from memories.llm.extractive.changes.cues import BOUNDED, past_event
from memories.llm.extractive.changes.statements import mentions
from memories.llm.extractive.changes.values import values_in
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

LOOK_ALIKES = [
    # One name, possessive in one note: a place of someone's, not another value.
    ("Had dinner at Marta's, she made a huge paella.", "Lent Marta my ladder, need it back before the gutters get done."),
    # A visit at someone's is no home, whatever the rest of its sentence says.
    ("Watched the match at Dev's, we won on penalties.", "Relocated to Leeds for the new job, flat in Headingley."),
    # A comment whose subject is dropped ("Slow but ...") names no one.
    (
        "Finished 'Middlemarch'. Slow but really lovely.",
        "Dropped the Spanish. I'm doing Greek now with a tutor on Mondays — Eleni, very strict, love it.",
    ),
    (
        "Read 'Stoner' on the train. Bleak but really lovely.",
        "Quit the guitar lessons. Doing pottery now on Wednesdays — Ilse, very strict, love it.",
    ),
    # The old value's own thing ("Harbor's app") is not the slot.
    ("Our bank is Harbor Mutual.", "Harbor's app is down again."),
    # A stay with its day of return.
    (
        "Settled into the Jesmond flat at last, Newcastle feels like home now.",
        "In Cardiff for the rugby all week, crashing on Gethin's floor. Back home Monday.",
    ),
    # Away for a while, coming back to the old value.
    ("Mein Bruder Lukas wohnt in Köln-Ehrenfeld.", "Lukas ist für ein Praktikum in Wien, im August kommt er zurück nach Köln."),
    # The writer's verb, then someone named with a verb of the third person.
    (
        "Lavoro come commessa alla libreria Feltrinelli in centro.",
        "Marco ha cambiato lavoro: ora è in banca, alla Unicredit. Niente più sabati per lui.",
    ),
    (
        "Trabajo como enfermera en el Hospital La Paz, en urgencias.",
        "Javier ha cambiado de trabajo: ahora está en la oficina del Ayuntamiento.",
    ),
]

UPDATES = [
    ("I live in Bristol.", "Moved to Leeds in March."),
    # "'s" after the sentence's subject is still "is".
    ("Tom works at Acme.", "Tom's at Globex now."),
    # The writer's own change, in the same language that drops its pronouns.
    ("Lavoro come commessa alla libreria Feltrinelli.", "Ho cambiato lavoro: ora sono alla Unicredit."),
    # "'s" before a participle is "has": the old holder left, not a thing of the old holder's.
    ("Reorg finished: I now report to Amit Shah.", "Amit's gone to the Leeds office, so my new manager is Hana Kimura."),
    ("My manager is Amit Shah.", "Amit's moved to the Leeds office; my new manager is Hana Kimura."),
]


@needs_meaning
@pytest.mark.parametrize("old, new", LOOK_ALIKES)
def test_look_alikes_are_not_updates(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


@needs_meaning
@pytest.mark.parametrize("old, new", UPDATES)
def test_updates_beside_them_are_still_found(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


def test_a_possessive_names_the_name():
    assert values_in("Watched the rugby at Callum's, we lost.", frozenset()) == ["callum"]
    assert mentions("callum", {"callum's"})
    assert mentions("callum's", {"callum"})


def test_a_possessive_is_no_present_tense():
    assert past_event("Watched the rugby at Callum's, we lost by a point.")
    assert not past_event("Tom's at Globex now.")
    assert past_event("Lent Callum my drill.")


def test_a_return_with_its_day_is_a_stay():
    assert BOUNDED.search("Back home Sunday.")
    assert BOUNDED.search("back on Monday")
    assert not BOUNDED.search("Moved back to Leeds.")


def test_a_return_to_the_old_value():
    assert back_to_old("Jana wohnt in Hamburg-Altona.", "Im Juli kommt sie zurück nach Hamburg.")
    # Told as done, or as now: a change the other judgements read.
    assert not back_to_old("I live in Leeds.", "Moved back to Leeds last year.")
    assert not back_to_old("Moved from Leeds to Bristol.", "Back in Leeds now.")


def test_a_named_subject_of_the_third_person():
    assert grammar.named_third_person_subject("Davide ha cambiato lavoro.", "it")
    assert grammar.named_third_person_subject("Marta es la jefa ahora.", "es")
    assert not grammar.named_third_person_subject("Ho cambiato lavoro.", "it")
    assert not grammar.named_third_person_subject("Tom has moved.", "en")
