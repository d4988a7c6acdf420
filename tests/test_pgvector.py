"""The meaning arm searched inside PostgreSQL with pgvector (embeddings/pgvector.py), on a
server this session starts itself: `pytest -m pgvector` (tests/conftest.py). The vectors
come from the fake OpenAI-compatible server over HTTP; the numpy search is the reference."""

import random

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection

from memories import embeddings
from memories.embeddings import index as vector_index
from memories.embeddings import pgvector
from memories.models import MemoryVector
from memories.recall import meaning, recall
from memories.services import bulk_remember, delete_memory, purge_memory
from memories.services.embed import embed_missing
from tests.conftest import pgvector_skip_reason

pytestmark = pytest.mark.pgvector

TOPICS = "budget launch hiring contract roadmap garden marathon dentist piano recipe invoice visa apartment".split()
PEOPLE = ["Sarah", "Tom", "Priya", "Lena", "Marco", "Aiko"]


@pytest.fixture(autouse=True)
def on_pgvector(fake_openai, settings, sync_tasks, db):
    reason = pgvector_skip_reason()
    if reason:
        pytest.skip(reason)
    settings.MEMORY_LLM_PROVIDER = "offline"
    settings.OPENAI_MODEL = ""
    settings.MEMORY_EMBEDDINGS = "openai_compat"
    settings.OPENAI_EMBEDDING_MODEL = "embed-a"
    settings.MEMORY_LLM_MAX_RETRIES = 0
    settings.MEMORY_VECTOR_SEARCH = "auto"
    pgvector.forget_state()
    vector_index.clear_cache()
    assert connection.vendor == "postgresql" and pgvector.enabled(), "migrate made the halfvec column and the extension"
    yield fake_openai
    pgvector.forget_state()


def notes(n: int, seed: int = 2) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "text": f"{rng.choice(PEOPLE)} talked about the {' and the '.join(rng.sample(TOPICS, 2))} (note {i}).",
            "source": "notes",
        }
        for i in range(n)
    ]


def search(owner, question: str, limit: int = 10) -> list[tuple[int, float]]:
    embedder = embeddings.get_embedder()
    return meaning.MeaningArm.begin(owner, question).nearest(limit) if embedder else []


@pytest.fixture(params=["exact", "hnsw"])
def path(request, monkeypatch):
    """Each test on both ways of searching: exact (a small owner) and the HNSW index."""
    monkeypatch.setattr(pgvector, "EXACT_UP_TO", 10_000 if request.param == "exact" else 0)
    return request.param


def test_the_extension_the_column_and_the_index_are_there():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert pgvector._version(cursor.fetchone()[0]) >= pgvector.MIN_VERSION
    assert pgvector.install(say=pytest.fail)  # idempotent: a second migrate changes nothing


def test_vectors_are_stored_as_halfvec_and_indexed(user):
    bulk_remember(owner=user, items=notes(5))
    assert embed_missing(owner=user).embedded == 5
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memoryvector WHERE embedding IS NOT NULL AND owner_id = %s", [user.pk])
        assert cursor.fetchone()[0] == 5
        dim = MemoryVector.objects.filter(owner=user).first().dim
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [f"memoryvector_hnsw_{dim}"])
        assert "hnsw" in cursor.fetchone()[0]


def test_the_same_ranking_as_numpy(user, settings, path):
    bulk_remember(owner=user, items=notes(120))
    assert embed_missing(owner=user).embedded == 120
    for question in ["What did Priya say about the budget?", "marathon training", "the garden and the piano", "visa"]:
        in_database = search(user, question)
        settings.MEMORY_VECTOR_SEARCH = "numpy"
        in_numpy = search(user, question)
        settings.MEMORY_VECTOR_SEARCH = "auto"
        assert len(in_database) == len(in_numpy) == 10
        # halfvec keeps three significant digits: the scores agree to that, and so does the
        # order wherever two scores differ by more.
        np.testing.assert_allclose([s for _, s in in_database], [s for _, s in in_numpy], atol=5e-3)
        numpy_score = dict(in_numpy)
        for (a, sa), (b, sb) in zip(in_database, in_database[1:], strict=False):
            if a in numpy_score and b in numpy_score and abs(numpy_score[a] - numpy_score[b]) > 1e-2:
                assert numpy_score[a] > numpy_score[b]


def test_another_owners_vectors_are_never_searched(user, other_user, path):
    mine = bulk_remember(owner=user, items=notes(20, seed=1))
    theirs = bulk_remember(owner=other_user, items=notes(200, seed=5))
    embed_missing()
    found = search(user, "What did Priya say about the budget?", limit=50)
    assert {pk for pk, _ in found} == {m.pk for m in mine}
    assert not {pk for pk, _ in search(other_user, "budget", limit=300)} & {m.pk for m in mine}
    assert len(search(other_user, "budget", limit=300)) == len(theirs)


def test_deleted_and_purged_memories_are_never_returned(user, path):
    memories = bulk_remember(owner=user, items=notes(30))
    embed_missing(owner=user)
    question = memories[0].raw_text
    first, second = [pk for pk, _ in search(user, question, limit=2)]
    delete_memory(owner=user, memory_id=first)
    purge_memory(owner=user, memory_id=second)
    found = {pk for pk, _ in search(user, question, limit=50)}
    assert found and not {first, second} & found
    assert not {first, second} & set(recall(owner=user, question=question, k=50).memory_ids)


def test_a_model_switch_never_mixes_vectors(user, settings, path):
    bulk_remember(owner=user, items=notes(15))
    embed_missing(owner=user)
    assert search(user, "budget")
    settings.OPENAI_EMBEDDING_MODEL = "embed-b"
    assert search(user, "budget") == []  # the new model has no vectors of its own yet
    call_command("embed", "--missing")
    assert set(MemoryVector.objects.values_list("model", flat=True)) == {"embed-b"}
    assert len(search(user, "budget", limit=50)) == 15


def test_recall_reads_the_meaning_arm_from_the_database(user, memory_factory):
    target = memory_factory("Priya talked about the marathon and the budget.")
    for item in notes(10):
        memory_factory(item["text"])
    result = recall(owner=user, question="Priya talked about the marathon and the budget.", k=5)
    assert result.memory_ids[0] == target.pk
    assert "close in meaning to the question" in result.memories[0].reasons
    assert vector_index._cache == {}  # no process holds a copy of the owner's vectors


def test_the_index_serves_the_query_it_was_made_for(user):
    """The search's ORDER BY is the HNSW index's expression, so PostgreSQL can walk it (a
    table this small is read and sorted unless told otherwise); the exact query cannot."""
    bulk_remember(owner=user, items=notes(30))
    embed_missing(owner=user)
    dim = MemoryVector.objects.filter(owner=user).first().dim
    shifted = pgvector._literal(np.ones(dim, dtype=np.float32) / dim**0.5)
    plans = {}
    for exact in (False, True):
        sql, params = pgvector.search_sql(exact=exact, dim=dim, shifted=shifted, owner_id=user.pk, model="embed-a", limit=10)
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
            for statement in pgvector.session_settings(limit=10, exact=exact):
                cursor.execute(statement)
            cursor.execute("EXPLAIN " + sql, params)
            plans[exact] = " ".join(row[0] for row in cursor.fetchall())
            cursor.execute("SET LOCAL enable_seqscan = on")
            cursor.execute("SET LOCAL enable_sort = on")
    assert f"memoryvector_hnsw_{dim}" in plans[False]
    assert f"memoryvector_hnsw_{dim}" not in plans[True]


def test_hidden_memories_keep_no_latent_terms_on_postgresql(user):
    """Migration 0016's triggers on PostgreSQL: the terms follow the vectors' rule."""
    from memories.embeddings import store as vector_store
    from memories.embeddings import terms as latent
    from memories.models import Memory, MemoryTerms

    memories = bulk_remember(owner=user, items=notes(3))
    terms = (np.array([1, 2], dtype=np.int32), np.array([1.0, 0.5], dtype=np.float32))
    rows = [(m.pk, user.pk, np.ones(4, dtype=np.float32) / 2, "h") for m in memories]
    vector_store.save(rows, model="embed-x", dim=4, terms=[terms] * 3)
    assert MemoryTerms.objects.filter(model=latent.MODEL).count() == 3
    delete_memory(owner=user, memory_id=memories[0].pk)
    Memory.objects.filter(pk=memories[1].pk).update(duplicate_of=memories[2])
    assert list(MemoryTerms.objects.values_list("memory_id", flat=True)) == [memories[2].pk]
    vector_store.save(rows[:1], model="embed-x", dim=4, terms=[terms])  # computed while it was hidden
    assert not MemoryTerms.objects.filter(memory_id=memories[0].pk).exists()
