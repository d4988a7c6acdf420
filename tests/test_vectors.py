"""Vectors as the service keeps them: hidden memories hold none (so they cannot move how
visible ones rank), vectors follow in the background and are computed outside any
transaction, a just-added memory ranks for its own words as it will with its vector,
and the numpy search's cache is bounded in bytes. The embeddings come from the fake
OpenAI-compatible server over HTTP (tests/fake_model_servers.py)."""

import random
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from memories import embeddings
from memories.embeddings import index as vector_index
from memories.embeddings import store as vector_store
from memories.models import Memory, MemoryVector
from memories.recall import meaning, recall
from memories.services import bulk_remember, delete_memory, extract_memory, ingest_text, restore_memory
from memories.services import embed as embed_service
from memories.services.embed import embed_missing

PEOPLE = ["Sarah Chen", "Tom Okafor", "Priya Nair", "Lena Vogel", "Marco Rossi", "Aiko Tanaka", "Ben Carter", "Nadia Haddad"]
TOPICS = "budget launch hiring contract roadmap garden marathon dentist piano recipe invoice visa apartment".split()
PROJECTS = ["Falcon", "Heron", "Atlas", "Juniper", "Orion", "Quartz", "Maple", "Nimbus"]
FILLER = "today we talked about how the week went and what comes next nothing was decided yet".split()


def note(rng: random.Random, i: int) -> str:
    """A note in the words every other note uses too: each question word is in a tenth of them."""
    a, b = rng.sample(TOPICS, 2)
    words = " ".join(rng.choices(FILLER, k=rng.randint(6, 20)))
    return f"{rng.choice(PEOPLE)} on Project {rng.choice(PROJECTS)}: {a} and {b}, {words}. Note {i}."


@pytest.fixture(autouse=True)
def openai_vectors(fake_openai, settings, sync_tasks):
    settings.MEMORY_LLM_PROVIDER = "offline"
    settings.OPENAI_MODEL = ""
    settings.MEMORY_EMBEDDINGS = "openai_compat"
    settings.OPENAI_EMBEDDING_MODEL = "embed-a"
    settings.MEMORY_LLM_MAX_RETRIES = 0
    vector_index.clear_cache()
    yield fake_openai
    vector_index.clear_cache()


def arm_ranking(owner, question: str) -> list[tuple[str, float]]:
    """The meaning arm's list for the question, as (text, score)."""
    vector_index.clear_cache()
    found = meaning.MeaningArm.begin(owner, question).nearest(100)
    texts = dict(Memory.all_objects.filter(pk__in=[pk for pk, _ in found]).values_list("pk", "raw_text"))
    return [(texts[pk], round(score, 5)) for pk, score in found]


def test_hidden_memories_do_not_move_how_visible_ones_rank(user, other_user):
    """A long-lived space (many memories deleted, superseded or near-duplicates) ranks its
    visible memories as a fresh space holding only those does."""
    rng = random.Random(4)
    visible = [note(rng, i) for i in range(30)]
    hidden = [f"{note(rng, 100 + i)} Marathon training marathon again." for i in range(60)]
    kept = bulk_remember(owner=user, items=[{"text": t, "source": "notes"} for t in [*visible, *hidden]])
    assert embed_missing(owner=user).embedded == 90
    gone = kept[30:]
    for memory in gone[:20]:
        delete_memory(owner=user, memory_id=memory.pk)
    Memory.objects.filter(pk__in=[m.pk for m in gone[20:40]]).update(superseded_by=kept[0])
    Memory.objects.filter(pk__in=[m.pk for m in gone[40:]]).update(duplicate_of=kept[1])
    assert MemoryVector.objects.filter(owner=user).count() == 30  # hidden memories keep none

    bulk_remember(owner=other_user, items=[{"text": t, "source": "notes"} for t in visible])
    assert embed_missing(owner=other_user).embedded == 30
    for question in ["How is the marathon going?", "What did Priya say about the budget?", "garden"]:
        assert arm_ranking(user, question) == arm_ranking(other_user, question)


def test_a_vector_computed_for_a_memory_hidden_meanwhile_is_not_stored(user):
    (memory,) = bulk_remember(owner=user, items=[{"text": "The budget review moved to Thursday.", "source": "notes"}])
    delete_memory(owner=user, memory_id=memory.pk)
    vector_store.save([(memory.pk, user.pk, np.ones(4, dtype=np.float32) / 2, "h")], model="embed-a", dim=4)
    assert not MemoryVector.objects.filter(memory=memory).exists()


def test_a_restored_memory_gets_its_vector_back(user, memory_factory):
    memory = memory_factory("The budget review moved to Thursday.")
    assert MemoryVector.objects.filter(memory=memory).exists()
    delete_memory(owner=user, memory_id=memory.pk)
    assert not MemoryVector.objects.filter(memory=memory).exists()
    restore_memory(owner=user, memory_id=memory.pk)
    assert MemoryVector.objects.filter(memory=memory, model="embed-a").exists()


def test_a_just_added_memory_ranks_for_its_own_words_as_it_will_once_extracted(user):
    """At 1,000 memories a memory added a moment ago (pending, no vector yet) ranked about
    10th for its own words and 1st once extracted and embedded: judged by words alone, its
    relevance was scaled down with the memories both arms found, and it had no key words
    for the entity signal yet."""
    rng = random.Random(3)
    start = timezone.now() - timedelta(days=60)
    bulk_remember(
        owner=user,
        items=[{"text": note(rng, i), "source": "notes", "occurred_at": start + timedelta(hours=i)} for i in range(1000)],
    )
    assert embed_missing(owner=user).embedded == 1000
    for _ in range(5):
        person, a, b = rng.choice(PEOPLE), *rng.sample(TOPICS, 2)
        added = ingest_text(owner=user, text=f"{person} said the {a} and the {b} for Project Heron need another look.").memory
        question = f"What did {person} say about the {a} and the {b}?"
        assert added.status == "pending" and not MemoryVector.objects.filter(memory=added).exists()
        pending = recall(owner=user, question=question, k=10).memory_ids
        extract_memory(added.pk)
        assert MemoryVector.objects.filter(memory=added).exists()
        extracted = recall(owner=user, question=question, k=10).memory_ids
        assert extracted.index(added.pk) == 0
        assert pending.index(added.pk) == 0


def test_vectors_follow_in_the_background_and_status_counts_those_waiting(user, settings, monkeypatch):
    from django.test import Client
    from django_q.conf import Conf

    from memories.services.tokens import create_token

    monkeypatch.setattr(Conf, "SYNC", False)  # a worker would run the task; none does here
    memory = extract_memory(ingest_text(owner=user, text="The budget review moved to Thursday.").memory.pk)
    assert memory.status == "ready" and not MemoryVector.objects.filter(memory=memory).exists()
    assert memory.pk in recall(owner=user, question="budget review", k=5).memory_ids  # by its words at once
    api = Client(headers={"Authorization": f"Bearer {create_token(owner=user, name='t')[1]}"})
    assert api.get("/api/status").json()["waiting_for_vector"] == 1
    # The task a worker picks up.
    from memories import tasks

    assert "embedded 1 memories" in tasks.embed_waiting(user.pk)
    assert api.get("/api/status").json()["waiting_for_vector"] == 0


def test_vectors_are_computed_outside_any_transaction_and_written_in_short_ones(user, monkeypatch, transactional_db):
    """The sweep and `embed --all` call the model with no transaction open (no write lock
    held across it) and write at most WRITE_BATCH vectors a transaction."""
    from django.core.management import call_command

    bulk_remember(owner=user, items=[{"text": f"note {i} on the {TOPICS[i % 10]}", "source": "notes"} for i in range(150)])
    embedder = embeddings.get_embedder()
    calls, writes = [], []
    real_embed, real_save = type(embedder)._embed, vector_store.save

    def observed_embed(self, texts, *, query):
        calls.append(connection.in_atomic_block)
        return real_embed(self, texts, query=query)

    def observed_save(rows, **kwargs):
        writes.append((connection.in_atomic_block, len(rows)))
        return real_save(rows, **kwargs)

    monkeypatch.setattr(type(embedder), "_embed", observed_embed)
    monkeypatch.setattr(vector_store, "save", observed_save)
    assert embed_service.sweep().embedded == 150
    call_command("embed", "--all")
    assert MemoryVector.objects.filter(owner=user).count() == 150
    assert calls and not any(calls)
    assert len(writes) >= 2 * 150 // embed_service.WRITE_BATCH
    assert all(not inside and n <= embed_service.WRITE_BATCH for inside, n in writes)


def test_the_vector_cache_is_bounded_in_bytes(user, other_user, user_factory, settings):
    """Owners' matrices leave the cache least recently searched first once it holds more
    than MEMORY_VECTOR_CACHE_MB; one larger than the whole cache is searched uncached."""
    owners = [user, other_user, user_factory()]
    dim, n = 1024, 400  # 0.8 MB an owner at half precision (few rows: building them is the cost)
    rng = np.random.default_rng(1)
    for owner in owners:
        memories = bulk_remember(owner=owner, items=[{"text": f"n {i}", "source": "notes"} for i in range(n)])
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        vector_store.save([(m.pk, owner.pk, vectors[i], "h") for i, m in enumerate(memories)], model="t/m", dim=dim)
    settings.MEMORY_VECTOR_CACHE_MB = 2
    query = rng.standard_normal(dim).astype(np.float32)
    results = [vector_index.search(owner_id=o.pk, model="t/m", dim=dim, query=query, limit=5) for o in owners]
    assert vector_index.cached_bytes() <= 2 * 1024 * 1024
    assert {key[0] for key in vector_index._cache} == {owners[1].pk, owners[2].pk}  # the first left
    # What was searched uncached or evicted answers the same when searched again.
    assert vector_index.search(owner_id=owners[0].pk, model="t/m", dim=dim, query=query, limit=5) == results[0]
    settings.MEMORY_VECTOR_CACHE_MB = 0
    vector_index.clear_cache()
    assert vector_index.search(owner_id=owners[1].pk, model="t/m", dim=dim, query=query, limit=5) == results[1]
    assert vector_index.cached_bytes() == 0


def test_an_owner_read_in_chunks_is_the_owner_read_whole(user, monkeypatch):
    """The cache reads an owner's vectors a chunk at a time straight into its half-precision
    matrix: across chunk edges, with another model's vectors in the owner's count (a
    matrix sized to what is there) and with more rows than were counted (stored since)."""
    dim, rng = 16, np.random.default_rng(3)
    memories = bulk_remember(owner=user, items=[{"text": f"n {i}", "source": "notes"} for i in range(23)])
    vectors = rng.standard_normal((23, dim)).astype(np.float32)
    vector_store.save([(m.pk, user.pk, vectors[i], "h") for i, m in enumerate(memories[:20])], model="t/m", dim=dim)
    vector_store.save([(m.pk, user.pk, vectors[i], "h") for i, m in enumerate(memories[20:], 20)], model="t/other", dim=dim)
    monkeypatch.setattr(vector_index, "LOAD_CHUNK_ROWS", 0)
    whole_ids, whole, _ = vector_index._load(user.pk, "t/m", dim)
    monkeypatch.setattr(vector_index, "LOAD_CHUNK_ROWS", 3)
    for capacity in (23, 7, 0):  # the owner's count; fewer than there are; none known
        ids, chunked, buffer = vector_index._load(user.pk, "t/m", dim, capacity=capacity)
        assert ids.tolist() == whole_ids.tolist() and len(ids) == 20
        assert np.array_equal(chunked, whole) and chunked.dtype == np.float16
        assert np.shares_memory(chunked, buffer) and len(buffer) >= 20
    query = rng.standard_normal(dim).astype(np.float32)
    found = []
    for chunk in (3, 0):
        monkeypatch.setattr(vector_index, "LOAD_CHUNK_ROWS", chunk)
        vector_index.clear_cache()
        found.append(vector_index.search(owner_id=user.pk, model="t/m", dim=dim, query=query, limit=20))
    assert found[0] == found[1] and len(found[0]) == 20


def test_which_memories_have_vectors_is_answered_for_the_owner_only(user, other_user):
    """Read from the table by the memories' keys (the cache cleared), another owner's
    memories, or vectors of another model, are never counted as the asker's."""
    mine = bulk_remember(owner=user, items=[{"text": f"mine {i}", "source": "notes"} for i in range(3)])
    theirs = bulk_remember(owner=other_user, items=[{"text": f"theirs {i}", "source": "notes"} for i in range(3)])
    rng = np.random.default_rng(5)
    for owner, memories in ((user, mine), (other_user, theirs)):
        vector_store.save(
            [(m.pk, owner.pk, rng.standard_normal(8).astype(np.float32), "h") for m in memories], model="t/m", dim=8
        )
    vector_index.clear_cache()
    ids = [m.pk for m in mine + theirs]
    assert vector_index.with_vectors(ids=ids, owner_id=user.pk, model="t/m") == {m.pk for m in mine}
    assert vector_index.with_vectors(ids=ids, owner_id=user.pk, model="t/other") == set()
    search = vector_index.searcher(owner_id=user.pk, model="t/m", dim=8)
    found = search(rng.standard_normal(8).astype(np.float32), 10, None)
    assert {pk for pk, _ in found} == {m.pk for m in mine}
    # Now from the owner's cached matrix: the same answer.
    assert vector_index.with_vectors(ids=ids, owner_id=user.pk, model="t/m") == {m.pk for m in mine}


def test_without_pgvector_migrate_says_why_and_numpy_serves(db):
    """On SQLite, or a PostgreSQL without the extension (CI's second run), the vectors are
    searched in numpy; on PostgreSQL the step that would install pgvector says plainly
    why it cannot and what to do."""
    from memories.embeddings import pgvector

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if cursor.fetchone():
                pytest.skip("this PostgreSQL has pgvector (tests/test_pgvector.py covers it)")
        said = []
        assert not pgvector.install(say=said.append)
        assert "pgvector is not installed on this PostgreSQL server" in said[0] and "numpy" in said[0]
    else:
        assert not pgvector.install(say=pytest.fail)
    pgvector.forget_state()
    assert not pgvector.enabled()


def test_bulk_ingest_does_not_wait_for_vectors_unless_asked(user, tmp_path, monkeypatch):
    import io
    import json

    from django.core.management import call_command
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", False)  # the queued task waits for a worker
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps({"text": f"note {i} about the {TOPICS[i]}"}) + "\n" for i in range(5)))
    err = io.StringIO()
    call_command("ingest", "--jsonl", str(path), "--user", user.username, stdout=io.StringIO(), stderr=err)
    assert "5 memories wait for a vector" in err.getvalue()
    assert not MemoryVector.objects.filter(owner=user).exists()
    assert recall(owner=user, question="the budget", k=5).memory_ids  # found by their words meanwhile
    path.write_text("".join(json.dumps({"text": f"more {i} about the {TOPICS[i]}"}) + "\n" for i in range(3)))
    call_command("ingest", "--jsonl", str(path), "--user", user.username, "--embed-now", stdout=io.StringIO())
    assert MemoryVector.objects.filter(owner=user).count() == 8


def test_a_bulk_ingest_leaves_its_update_checks_to_the_worker_that_makes_the_vectors(user, tmp_path, monkeypatch, settings):
    """With embeddings on, `ingest --jsonl` acknowledges without the update checks (which
    search by the vectors that follow in the background); the queued task makes the vectors
    and then checks each memory. With embeddings off the check is made in the ingest."""
    import io
    import json

    from django.core.management import call_command
    from django_q.conf import Conf
    from django_q.models import OrmQ

    from memories import tasks

    monkeypatch.setattr(Conf, "SYNC", False)  # the queued task waits for a worker
    path = tmp_path / "moves.jsonl"

    def ingest(owner, *texts):
        path.write_text(
            "".join(json.dumps({"text": t, "occurred_at": f"2024-0{i + 1}-01T09:00:00Z"}) + "\n" for i, t in enumerate(texts))
        )
        call_command("ingest", "--jsonl", str(path), "--user", owner.username, stdout=io.StringIO(), stderr=io.StringIO())
        return list(Memory.objects.filter(owner=owner).order_by("pk"))

    old, new = ingest(user, "I live in Paris, near the canal.", "I moved to Berlin last month.")
    assert old.outdated_by_id is None and not MemoryVector.objects.filter(owner=user).exists()
    assert [task.func() for task in OrmQ.objects.all()] == ["memories.tasks.check_updates"]
    assert "1 older ones superseded" in tasks.check_updates(user.pk, [old.pk, new.pk])
    old.refresh_from_db()
    assert old.outdated_by_id == new.pk
    assert MemoryVector.objects.filter(owner=user).count() == 2

    settings.MEMORY_EMBEDDINGS = "off"
    other = user.__class__.objects.create_user("offline-mover")
    old, new = ingest(other, "I live in Paris, near the canal.", "I moved to Berlin last month.")
    assert old.outdated_by_id == new.pk
