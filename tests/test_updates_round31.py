"""Round 31 (issue 25): found on update scenarios written by someone who read none of the
code, in three voices (a landlord's notes on two flats, a nurse's, a pub band's
guitarist's). Missed: a role taken over told by its taker ("X's taken over ... from Y");
an end and its successor with no word of change in the successor's statement ("Dave
stepped down from being rep. Amara took it on"), the successor named by the name that
opens it; Swedish, Dutch and Polish words of change. False: a change said to hold for
one span only ("Christmas week only", "just for this week"), whatever words of change
the note uses. Past questions: of two notes said within the period asked, the one that
held for more of it goes first. Answers: "these days" read as a topic; "our band name"
not read as asking a name; a changed note quoted by a sentence naming only the older
value. Written here in words of their own."""

from __future__ import annotations

import importlib

import pytest

from memories import textutil
from memories.llm.extractive import asked_for
from memories.recall import recall
from memories.services import answer_question
from tests.test_time_questions import _unmarked
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

cues = importlib.import_module("memories.llm.extractive.changes.cues")

UPDATES = [
    # A role taken over, told by the taker, "has" contracted after the name.
    ("Hamid does the school run on Wednesdays.", "Jolene's taken over the Wednesday school run from Hamid."),
    ("The allotment rota is kept by Bernard.", "Priscilla took the allotment rota over from Bernard at the AGM."),
    # An end, and a successor who "took it on", no word of change in that statement.
    (
        "Health and safety officer for the site: Gareth Blake.",
        "Gareth resigned as safety officer after the audit. Yusuf Adeyemi took it on straight away.",
    ),
    # Swedish words of change ("från och med nu", "istället"), a closed class as in the
    # other languages.
    (
        "Vårt husband spelar alltid Dancing Queen först.",
        "Ny öppningslåt från och med nu: Valerie. Dancing Queen blir sista låten istället.",
    ),
]

LOOK_ALIKES = [
    # Got from someone, not taken over from them.
    ("Hamid does the school run on Wednesdays.", "Jolene got a lift from Hamid to the school gates."),
    # The taker's clause owned by someone else ("Jolene's brother").
    ("Hamid does the school run on Wednesdays.", "Jolene's brother borrowed the car from Hamid on Wednesday."),
    # A change for one span only, in words of change.
    ("Swimming club meets on Tuesdays at 6.", "Half-term week only: swimming moves to Thursday instead."),
    ("I start work at 8:30.", "Starting at 10 just for this week while the office is refitted, then back to 8:30."),
    ("Der Chor probt dienstags um 19 Uhr.", "Nur diese Woche proben wir am Mittwoch statt am Dienstag."),
]


@needs_meaning
@pytest.mark.parametrize("old, new", UPDATES)
def test_a_change_in_another_writers_words_is_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize("old, new", LOOK_ALIKES)
def test_a_look_alike_in_another_writers_words_is_no_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


@pytest.mark.parametrize(
    "text, bound",
    [
        ("Bank holiday week only, the bins go out on Saturday.", True),
        ("just for tonight I'm in the spare room", True),
        ("Seulement cette semaine, le marché est le jeudi.", True),
        ("I only eat fish on Fridays now.", False),
        ("Part-time only, three days a week from May.", False),
        ("Just the two of us at the table this year.", False),
    ],
)
def test_a_span_with_only_bounds_a_change(text, bound):
    assert bool(cues.ONE_SPAN_ONLY.search(text)) is bound


@needs_meaning
def test_of_two_notes_said_in_the_year_asked_the_one_that_held_longer_goes_first(user, memory_factory, settings, sync_tasks):
    """A said before 2025, B in February 2025, C in November 2025: "in 2025" asks for B,
    which held ten months of it, not C, which held the last weeks."""
    settings.MEMORY_EMBEDDINGS = "local"
    first = memory_factory("Window cleaner: Stan, £18 every four weeks.", occurred_at="2024-04-10")
    middle = memory_factory("Stan put the window cleaning up to £22 every four weeks.", occurred_at="2025-02-03")
    last = memory_factory("Window cleaning's £25 every four weeks now, Stan says fuel.", occurred_at="2025-11-20")
    memory_factory("Bought a new hose reel for the back garden.", occurred_at="2025-06-01")
    _unmarked(user, first, middle, last)
    ranked = recall(owner=user, question="What was I paying for window cleaning for most of 2025?", k=5).memory_ids
    assert ranked.index(middle.pk) < ranked.index(last.pk), ranked


@pytest.mark.parametrize(
    "question, asks",
    [
        ("What's the choir called these days?", "What's the choir called?"),
        ("Wer leitet zurzeit den Chor?", "Wer leitet den Chor?"),
        ("¿Quién dirige actualmente el coro?", "¿Quién dirige el coro?"),
        ("Who ran the choir in 2023?", "Who ran the choir in 2023?"),
    ],
)
def test_the_words_that_ask_about_now_are_no_topic(question, asks):
    assert textutil.without_now_words(question) == asks


@pytest.mark.parametrize("question", ["What's our band name?", "What's the shop's name?", "What is my cat's name?"])
def test_a_name_asked_for_by_a_noun_before_name_is_read_as_a_name(question):
    assert asked_for.kind_asked(question).kind == asked_for.NAME


@needs_meaning
def test_a_note_that_changed_a_name_is_quoted_by_the_sentence_naming_the_new_one(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    memory_factory("Our quiz team plays as The Usual Suspects at the Red Cow.", occurred_at="2024-03-05")
    renamed = memory_factory(
        "Found out a team at the Anchor already calls itself The Usual Suspects, and they win every week. Ugh."
        " From now on we're Quizteama Aguilera. Priya's making the sheet.",
        occurred_at="2025-01-20",
    )
    reply = answer_question(owner=user, question="What's our quiz team name these days?", k=5).answer
    assert "Quizteama Aguilera" in reply and f"[Memory {renamed.pk}]" in reply, reply


@needs_meaning
def test_a_change_for_one_span_only_is_quoted_after_the_standing_fact(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    standing = memory_factory("Gym classes: spin on Wednesday evenings at 7.", occurred_at="2025-02-01")
    memory_factory("Bank holiday week only, spin is on Thursday at 7 instead.", occurred_at="2025-05-20")
    reply = answer_question(owner=user, question="What evening is spin class normally?", k=5).answer
    assert reply.split("\n")[2].endswith(f"[Memory {standing.pk}]"), reply
