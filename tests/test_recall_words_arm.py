"""The words arm's speed-ups give what the plain way gives: BM25's stem finder
(bm25._starts_finder) and the owner's word lookups remembered between questions
(sqlite_search's cache)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memories.models import Memory
from memories.recall import bm25, lexical_index, search


def _regex_finds(needles, text):
    ordered = sorted(needles, key=len, reverse=True)
    return re.compile(r"(?<![^\W_])(" + "|".join(map(re.escape, ordered)) + r")").findall(text)


def test_the_stem_finder_finds_what_the_regex_finds():
    rng = random.Random(26)
    alphabet = list("abcdeé ñ_-'1 2.:") + ["ß", "ö", "σ", "ж", "\u2044", "\n"]
    stems = ["ab", "abc", "abcd", "b", "c1", "ca", "é", "ñab", "2", "bcd", "ж", "öσ"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        needles = set(rng.sample(stems, rng.randint(1, 5)))
        assert Counter(bm25._starts_finder(needles)(text)) == Counter(_regex_finds(needles, text)), (needles, text)
    # A needle that is not all letters and digits (a fold can give one): the regex's own answer.
    assert Counter(bm25._starts_finder({"1\u20442", "1"})("1\u20442 cup, 1 egg")) == Counter(["1\u20442", "1"])


def test_a_longer_stem_takes_its_place_from_a_shorter_one():
    find = bm25._starts_finder({"launch", "launche", "la"})
    assert sorted(find("launched the launch; la la-land; relaunch _launch")) == sorted(
        ["launche", "launch", "la", "la", "la", "launch"]  # "la-land" twice; a word starts after "_"
    )


# --- the owner's word lookups, remembered between questions (sqlite_search._Remembered) ---

sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="the words arm's lookups are FTS5's")


def _search(owner, *words):
    """The words arm's answer and how many lookups of the index it made for it."""
    with CaptureQueriesContext(connection) as done:
        hits = search.lexical_search(owner=owner, query=list(words), limit=50)
    return {h.memory_id for h in hits}, sum("MATCH" in q["sql"] for q in done.captured_queries)


@sqlite_only
@pytest.mark.django_db
def test_lookups_are_remembered_until_a_write_changes_the_owners_memories(user, memory_factory):
    first = memory_factory("The quokka enclosure needs a new gate.")
    other = memory_factory("Feeding time at the zoo is at noon.")
    assert _search(user, "quokka")[0] == {first.pk}
    assert _search(user, "quokka") == ({first.pk}, 0)  # remembered

    added = memory_factory("A second quokka arrived from Perth.")
    assert _search(user, "quokka")[0] == {first.pk, added.pk}
    assert _search(user, "quokka")[1] == 0

    # Every way a memory changes reaches it: a queryset update of its text, a soft delete,
    # a status that makes it unreadable, a hard delete, a save.
    Memory.objects.filter(pk=other.pk).update(summary="The quokka is fed at noon.")
    assert _search(user, "quokka")[0] == {first.pk, added.pk, other.pk}
    Memory.objects.filter(pk=other.pk).update(deleted_at=timezone.now())
    assert _search(user, "quokka")[0] == {first.pk, added.pk}
    Memory.objects.filter(pk=added.pk).update(status=Memory.Status.FAILED)
    assert _search(user, "quokka")[0] == {first.pk}
    first.raw_text, first.summary, first.topics, first.entities = "The gate is fixed.", "", ["gate"], []
    first.save()
    assert _search(user, "quokka")[0] == set()
    assert _search(user, "gate")[0] == {first.pk}
    Memory.all_objects.filter(pk=first.pk).delete()
    assert _search(user, "gate")[0] == set()


@sqlite_only
@pytest.mark.django_db
def test_what_is_remembered_of_one_owner_never_reaches_another(user, other_user, memory_factory):
    mine = memory_factory("The quokka enclosure needs a new gate.")
    theirs = memory_factory("My quokka photos from Rottnest.", owner=other_user)
    assert _search(user, "quokka")[0] == {mine.pk}
    # Another owner asking the same word is answered from their own memories...
    assert _search(other_user, "quokka")[0] == {theirs.pk}
    assert _search(other_user, "quokka") == ({theirs.pk}, 0)
    # ... and their writes neither show in mine nor make mine be looked up again.
    more = memory_factory("Another quokka, another photo.", owner=other_user)
    assert _search(user, "quokka") == ({mine.pk}, 0)
    assert _search(other_user, "quokka")[0] == {theirs.pk, more.pk}
    # A memory moved to another owner leaves the first owner's answers and joins the other's.
    Memory.objects.filter(pk=more.pk).update(owner=user)
    assert _search(user, "quokka")[0] == {mine.pk, more.pk}
    assert _search(other_user, "quokka")[0] == {theirs.pk}


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_write_leaves_nothing_remembered_behind(user, memory_factory):
    mine = memory_factory("The quokka enclosure needs a new gate.")
    assert _search(user, "quokka")[0] == {mine.pk}
    try:
        with transaction.atomic():
            added = memory_factory("A second quokka arrived from Perth.")
            assert _search(user, "quokka")[0] == {mine.pk, added.pk}  # remembered under the write's stamp
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass
    assert _search(user, "quokka")[0] == {mine.pk}
    # A later write is not mistaken for the rolled-back one.
    again = memory_factory("A third quokka, this one stays.")
    assert _search(user, "quokka")[0] == {mine.pk, again.pk}


@sqlite_only
@pytest.mark.django_db
def test_nothing_is_remembered_without_the_stamping_triggers(user, memory_factory):
    mine = memory_factory("The quokka enclosure needs a new gate.")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {lexical_index.STAMPS_TABLE}")
    assert _search(user, "quokka")[0] == {mine.pk}
    assert _search(user, "quokka")[1] > 0  # looked up again
    # The index made again by code from before the stamps: triggers that draw none.
    lexical_index.install(connection)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER {lexical_index.FTS_TABLE}_au")
        cursor.execute(
            f"CREATE TRIGGER {lexical_index.FTS_TABLE}_au AFTER UPDATE OF raw_text ON memories_memory BEGIN SELECT 1; END"
        )
    assert _search(user, "quokka")[0] == {mine.pk}
    assert _search(user, "quokka")[1] > 0


@sqlite_only
@pytest.mark.django_db
def test_a_rebuilt_index_is_not_answered_from_before_it(user, memory_factory):
    mine = memory_factory("The quokka enclosure needs a new gate.")
    _search(user, "quokka")
    assert _search(user, "quokka") == ({mine.pk}, 0)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {lexical_index.FTS_TABLE}({lexical_index.FTS_TABLE}) VALUES ('delete-all')")
    call_command("rebuild_index", stdout=open("/dev/null", "w"))
    assert _search(user, "quokka") == ({mine.pk}, 2)  # looked up again: counted, then read
