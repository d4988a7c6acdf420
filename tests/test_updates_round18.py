"""Round 18's kinds of fact update (issue 25), each written here in words of its own: an end
and its successor told in two statements of one note ("X left; Y runs it now"), and a
value owned by someone after a preposition ("meets at Ellie's house"), which is where,
not whose. Their look-alikes stay apart: another holder of a role several people fill
("my brother Sam" after "My brother, Tom, ..."), a change looked at and then not made
("..., aber wir bleiben"), an old value kept "for now", an end told of another thing than
the old value ("no fleas"), and an absence for a while ("went on holiday; X is covering")."""

from __future__ import annotations

import pytest

from memories.llm.extractive.changes import another_of_several, stays_after_all, succeeded
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

UPDATES = [
    # An end in one statement, the successor in another, with a change in grammar.
    (
        "Quick note: Lily's swimming coach is Mr. Grant, Tuesdays at the leisure centre.",
        "Lily finished with Mr. Grant in July; since August her swimming lessons are with a coach called Petra Voss.",
    ),
    # A place owned by someone is the slot's value, not whose fact it is.
    ("The chess club meets at Omar's flat.", "Chess club has moved to the community centre on Elm Road."),
]

LOOK_ALIKES = [
    # Another holder of a role several people fill.
    ("My brother, Tom, lives in Leeds.", "Lunch with my brother Sam."),
    ("My sister, Ana, works in Porto.", "Coffee with my sister Rita on Sunday."),
    # A change looked at, then not made: the words after "but" mean staying.
    ("Wir wohnen in Köln.", "Haben eine Wohnung in Bonn besichtigt, schön hell, aber wir bleiben."),
    # The old value kept "for now" (how long, not a change).
    ("I drive a Ford Focus.", "Test-drove a Kia EV6 but I'm keeping the Focus for now."),
    # An end of another thing, the old value named again in a clause of its own.
    ("Our vet is Dr. Moreau.", "Took the cat to Dr. Moreau for her jabs, no fleas."),
]


@needs_meaning
@pytest.mark.parametrize("old, new", UPDATES)
def test_updates_of_the_new_kinds_are_found(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize("old, new", LOOK_ALIKES)
def test_their_look_alikes_stay_apart(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


@needs_meaning
def test_the_new_evidence_gives_its_values(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    assert succeeded("Dana runs the support desk.", "Dana left the company; Felix is running support now.")[:2] == (
        ("dana",),
        ("felix",),
    )
    assert succeeded("Dana runs the support desk.", "Dana left early today. Felix made coffee.") is None
    # Away for a while is no end: a stand-in.
    assert succeeded("Dana runs the support desk.", "Dana went on holiday; Felix is covering support now.") is None
    assert another_of_several("My brother, Tom, lives in Leeds.", "Lunch with my brother Sam.")
    assert not another_of_several("Our landlord, Mr Haddad, fixed the boiler.", "Paid the rent to our landlord Greystone.")
    assert stays_after_all("Viewed a flat in Leith, but we're staying put.")
    assert not stays_after_all("Moved to Leith, but I miss the old neighbours.")
    # Italian "ma" is French "ma" ("my"): no contrast in a French note.
    assert not stays_after_all("Ma banque est la BNP, ma carte est bloquée.")
