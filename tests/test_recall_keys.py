"""The key words of a memory's entities and topics (what the entity signal matches a
question's stems to) are stored on the memory when it is written (Memory.recall_keys):
read back exactly as recall would work them out, kept right by an edit and a bulk write,
and never used once they no longer agree with the memory's words or with today's rules."""

from importlib import import_module

import pytest
from django.apps import apps
from django.db import connection

from memories.models import Memory
from memories.recall import recall, words
from memories.recall.candidates import fetch
from memories.recall.words import StoredKeys, json_words, keys, stored_keys_of
from memories.services.bulk import bulk_remember
from memories.services.lifecycle import update_memory

pytestmark = pytest.mark.django_db


def as_read(memory):
    """(entities, topics, recall_keys) as recall's plain SQL reads them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT entities, topics, recall_keys FROM memories_memory WHERE id = %s", [memory.pk])
        return cursor.fetchone()


def worked_out(entities, topics):
    return words._keys_of.__wrapped__(f"{json_words(entities)} {json_words(topics)}")


def no_working_out(monkeypatch):
    """From here on keys may only come from stored values: working them out fails the test."""

    def fail(joined):
        raise AssertionError(f"keys worked out again for {joined!r}")

    monkeypatch.setattr(words, "_keys_of", fail)


def test_a_saved_memory_stores_its_keys_and_recall_reads_them(user, memory_factory, monkeypatch):
    m = memory_factory("Ann met Zoë in Genève to plan the garden party and the piano lessons.")
    m.entities, m.topics = ["Ann", "Zoë", "Genève"], ["garden party", "piano lessons", "planning"]
    m.save()
    entities, topics, stored = as_read(m)
    assert stored and stored == stored_keys_of(entities, topics)
    expected = worked_out(entities, topics)
    assert {"garden", "piano", "lesson", "plann"} <= expected or {"garden", "piano"} <= expected
    monkeypatch.setattr(words, "_keys_of", lambda joined: pytest.fail("worked out again"))
    got = keys(entities, topics, stored)
    assert isinstance(got, StoredKeys) and got == expected and set(got) == expected and len(got) == len(expected)
    for stems in ({"garden", "nothing"}, {"piano", "ann"}, set(), {"gard"}, {"garden piano"}, {""}):
        assert stems & got == stems & expected and got & stems == expected & stems
        assert all((s in got) == (s in expected) for s in stems)
    assert fetch(user, [m.pk])[m.pk].keys == expected


def test_an_edit_of_entities_or_topics_stores_them_again(user, memory_factory, monkeypatch):
    m = memory_factory("We talked about the garden and the new fence.")
    update_memory(owner=user, memory_id=m.pk, changes={"topics": ["roses", "fence"], "entities": ["Priya"]})
    no_working_out(monkeypatch)
    entities, topics, stored = as_read(m)
    assert keys(entities, topics, stored) == {"ros", "fence", "priya"}
    assert fetch(user, [m.pk])[m.pk].keys == {"ros", "fence", "priya"}


def test_a_value_gone_stale_by_a_bare_update_is_not_used(user, memory_factory):
    m = memory_factory("Dinner with Mum last night at the harbour.")
    stale = as_read(m)[2]
    # A path that bypasses save (a queryset update, raw SQL) leaves the stored value behind.
    Memory.all_objects.filter(pk=m.pk).update(entities=["Bob"], topics=["camping", "tent"])
    entities, topics, stored = as_read(m)
    assert stored == stale
    assert keys(entities, topics, stored) == {"bob", "camp", "tent"} == worked_out(entities, topics)
    assert fetch(user, [m.pk])[m.pk].keys == {"bob", "camp", "tent"}


def test_another_memorys_value_is_never_read_as_this_ones(user, other_user, memory_factory):
    mine = memory_factory("Notes on the harbour walk.")
    theirs = memory_factory("Notes on the harbour walk.", owner=other_user)
    Memory.all_objects.filter(pk=theirs.pk).update(topics=["sailing", "boats"])
    theirs.refresh_from_db()
    theirs.save()
    # Another owner's value (other words) copied onto my row is not mine: not used.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET recall_keys = %s WHERE id = %s", [as_read(theirs)[2], mine.pk])
    entities, topics, stored = as_read(mine)
    assert keys(entities, topics, stored) == worked_out(entities, topics)
    assert "sail" not in fetch(user, [mine.pk])[mine.pk].keys
    assert fetch(other_user, [theirs.pk])[theirs.pk].keys >= {"sail", "boat"}
    assert fetch(user, [theirs.pk]) == {}


def test_keys_made_by_other_rules_are_not_used(user, memory_factory, monkeypatch):
    m = memory_factory("Ann booked the dentist.")
    entities, topics, stored = as_read(m)
    assert isinstance(keys(entities, topics, stored), StoredKeys)
    monkeypatch.setattr(words, "_rules_text", lambda: "12345")  # the stemmer or the stopwords changed since
    got = keys(entities, topics, stored)
    assert not isinstance(got, StoredKeys) and got == worked_out(entities, topics)
    # And stored values that cannot be read are not trusted either.
    monkeypatch.undo()
    for bad in ("", "0 0 0", f"{len(entities) + 1} 0 {words.key_rules()} ann", "junk", "a b", f"x y {words.key_rules()} z"):
        assert keys(entities, topics, bad or None) == worked_out(entities, topics)


def test_the_rules_figure_is_the_same_in_every_process():
    # Set constants in the code are printed sorted, not in their hash order (which a
    # process's hash seed decides), so a value stored by one process is read by the next.
    def probe(word):
        return word in ("alpha", "beta", "gamma", "delta")

    assert "frozenset" in words._const_print(frozenset({"b", "a"}))
    assert words._const_print(frozenset({"b", "a"})) == words._const_print(frozenset({"a", "b"}))
    assert "alpha" in words._code_print(probe.__code__)
    assert words._const_print(frozenset({"delta", "alpha", "gamma"})) == "frozenset([\"'alpha'\", \"'delta'\", \"'gamma'\"])"


def test_a_key_with_white_space_in_it_is_not_stored():
    # U+FDFA is a letter whose compatibility form is four words.
    assert stored_keys_of('["\ufdfa"]', "[]") is None
    assert stored_keys_of("[]", "[]") == f"{len('[] []')} {__import__('zlib').crc32(b'[] []')} {words.key_rules()}"
    assert keys("[]", "[]", stored_keys_of("[]", "[]")) == frozenset()


def test_bulk_writes_and_the_migration_store_them_too(user, memory_factory, monkeypatch):
    made = bulk_remember(
        owner=user,
        items=[
            {"text": "Ann: we moved to Porto in March 2022.", "source": "chat:D1:1"},
            {"text": "Bob: and I started the new job two weeks ago.", "source": "chat:D1:2"},
        ],
    )
    made = list(Memory.all_objects.filter(pk__in=[m.pk for m in made])) + [memory_factory("Piano lessons on Fridays.")]
    before = {m.pk: as_read(m)[2] for m in made}
    assert all(before.values())
    no_working_out(monkeypatch)
    for m in made:
        entities, topics, stored = as_read(m)
        assert isinstance(keys(entities, topics, stored), StoredKeys)
    monkeypatch.undo()  # the migration works them out
    Memory.all_objects.update(recall_keys=None)

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    import_module("memories.migrations.0020_memory_recall_keys").fill(apps, editor)
    assert {m.pk: as_read(m)[2] for m in made} == before


def test_recall_is_the_same_with_the_stored_keys_and_without(user, memory_factory):
    for i, (text, topics) in enumerate(
        [
            ("Ann: I went to the support group yesterday.", ["support group"]),
            ("Ann: the charity race was for mental health.", ["charity race", "health"]),
            ("Bob: we are going camping at the lake.", ["camping", "lake"]),
            ("Ann: my painting class started.", ["painting"]),
            ("Bob: the garden needs a new fence.", ["garden", "fence"]),
        ]
    ):
        m = memory_factory(text, source=f"chat:D1:{i}")
        m.topics = topics
        m.save()
    for question in ("What did Ann say about the charity race?", "camping lake", "Who needs a fence?"):
        with_stored = recall(owner=user, question=question, strategy="hybrid", k=5)
        saved = dict(Memory.all_objects.values_list("pk", "recall_keys"))
        Memory.all_objects.update(recall_keys=None)
        without = recall(owner=user, question=question, strategy="hybrid", k=5)
        for pk, value in saved.items():
            Memory.all_objects.filter(pk=pk).update(recall_keys=value)
        assert with_stored.memory_ids == without.memory_ids
        assert [(r.score, r.reasons) for r in with_stored.memories] == [(r.score, r.reasons) for r in without.memories]


def test_letters_beyond_ascii_are_keys_as_written_on_either_database(user, memory_factory, monkeypatch):
    # SQLite keeps JSON with its letters escaped ("Zo\u00eb"); split as it stands, Zoë's
    # keys were "zo" and "u00eb", and a question naming her matched no entity.
    m = memory_factory("Zoë a réservé le café à Genève pour Søren.")
    m.entities, m.topics = ["Zoë", "Søren", "Genève"], ["café", "réservation"]
    m.save()
    entities, topics, stored = as_read(m)
    assert [w for w in words._SPLIT.split(json_words(entities)) if w] == ["Zoë", "Søren", "Genève"]
    no_working_out(monkeypatch)
    got = keys(entities, topics, stored)
    assert isinstance(got, StoredKeys)
    assert {"zoe", "søren", "geneve", "cafe"} <= set(got)
    assert not any(k.startswith("u00") for k in got) and "zo" not in got
    assert fetch(user, [m.pk])[m.pk].keys >= {"zoe", "geneve"}
    monkeypatch.undo()
    found = recall(owner=user, question="Where did Zoë book?", strategy="hybrid", k=3)
    assert found.memory_ids[:1] == [m.pk]
    assert any("zo" in r.lower() for r in found.memories[0].reasons)
