"""Spaces: user B tries every API endpoint, command, the consolidator, the inbox watcher and
the admin on user A's memories, and gets nothing — not even a hint that they exist."""

import io
import json

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from memories.models import Consolidation, Memory, MemoryLink, ProcessedFile
from memories.services import consolidate_all, consolidate_owner
from memories.services.inbox import scan_inbox
from memories.services.tokens import create_token

# Shared names and topics, so an engine that saw both users' notes at once would link them.
A_NOTES = [
    "Alice: Acme pricing launch moved to October; Priya owns the deck.",
    "Alice: Priya from Acme asked for the Berlin offsite agenda.",
    "Alice: the Acme contract renewal is worth 2 million.",
]
B_NOTES = [
    "Bob: Acme pricing review with Priya next week.",
    "Bob: Berlin offsite hotel booked for the Acme team.",
]


@pytest.fixture(autouse=True)
def fresh_rate_limits():
    cache.clear()


@pytest.fixture
def spaces(user, other_user, memory_factory):
    """Alice's memories consolidated (so they have links and an insight), Bob's not yet."""
    a = [memory_factory(text, owner=user) for text in A_NOTES]
    failed = memory_factory("Alice: this one failed.", owner=user, extract=False)
    Memory.objects.filter(pk=failed.pk).update(status="failed", error="quota")
    outcome = consolidate_owner(owner=user)
    b = [memory_factory(text, owner=other_user) for text in B_NOTES]
    assert MemoryLink.objects.filter(from_memory__owner=user).exists(), "alice needs links to probe"
    return {"a": a, "a_failed": failed, "a_consolidation": outcome.consolidations[0], "b": b}


@pytest.fixture
def bob_api(other_user):
    return Client(enforce_csrf_checks=True, headers={"Authorization": f"Bearer {create_token(owner=other_user, name='b')[1]}"})


def _alice_state(user):
    return sorted(Memory.objects.filter(owner=user).values_list("pk", "summary", "importance", "status", "consolidated_at"))


def test_bob_cannot_touch_alices_memories_through_any_api_endpoint(user, spaces, bob_api):
    a_id, failed_id = spaces["a"][0].pk, spaces["a_failed"].pk
    missing_id = Memory.all_objects.order_by("-pk").first().pk + 1000
    before = _alice_state(user)
    patch = json.dumps({"summary": "hijacked", "importance": 1})
    attempts = {
        "get": lambda i: bob_api.get(f"/api/memories/{i}"),
        "patch": lambda i: bob_api.patch(f"/api/memories/{i}", patch, content_type="application/json"),
        "links": lambda i: bob_api.get(f"/api/memories/{i}/links"),
        "consolidations": lambda i: bob_api.get(f"/api/memories/{i}/consolidations"),
        "retry": lambda i: bob_api.post(f"/api/memories/{i}/retry"),
        "delete": lambda i: bob_api.delete(f"/api/memories/{i}"),
        "original delete": lambda i: bob_api.post("/api/delete", json.dumps({"memory_id": i}), content_type="application/json"),
    }
    for name, attempt in attempts.items():
        for target in (a_id, failed_id):
            theirs, nothing = attempt(target), attempt(missing_id)
            # Same status and same body as an id that does not exist: existence does not leak.
            assert theirs.status_code == nothing.status_code == 404, name
            said, unknown = theirs.json()["detail"], nothing.json()["detail"]
            assert said.replace(str(target), "N") == unknown.replace(str(missing_id), "N"), name
    assert _alice_state(user) == before


def test_bob_sees_nothing_of_alice_in_lists_status_query_and_recall(user, other_user, spaces, bob_api):
    a_ids = {m.pk for m in spaces["a"]} | {spaces["a_failed"].pk}
    b_ids = {m.pk for m in spaces["b"]}
    listed = bob_api.get("/api/memories?limit=500").json()
    assert {m["id"] for m in listed["memories"]} == b_ids and listed["total"] == 2
    for m in listed["memories"]:
        assert not {c["linked_to"] for c in m["connections"]} & a_ids
    assert bob_api.get("/api/memories?q=Alice").json()["total"] == 0
    assert bob_api.get("/api/consolidations").json()["total"] == 0
    status = bob_api.get("/api/status").json()
    assert (status["total_memories"], status["consolidations"], status["failed"]) == (2, 0, 0)
    answer = bob_api.get("/api/query", {"q": "What about the Acme contract renewal and Alice?"}).json()
    assert {m["id"] for m in answer["context"]} <= b_ids
    assert not set(answer["cited"]) & a_ids and "2 million" not in answer["answer"] and "Alice" not in answer["answer"]
    recalled = bob_api.get("/api/recall", {"q": "Acme contract renewal", "k": 50}).json()
    assert {m["id"] for m in recalled["memories"]} <= b_ids and not recalled["consolidations"]


def test_bob_cannot_act_on_alices_memories_in_the_states_each_action_needs(user, spaces, bob_api, settings):
    """Each action aimed at a memory of Alice's that it would work on for her: still a 404
    with the words an unknown id gets, and nothing of hers changes or is recorded."""
    from memories.models import Event
    from memories.services import delete_memory, extract_memory, ingest_text

    deleted, superseded, newer = spaces["a"]
    delete_memory(owner=user, memory_id=deleted.pk)
    Memory.objects.filter(pk=superseded.pk).update(outdated_by=newer)
    settings.MEMORY_REVIEW_MODE = True
    waiting = extract_memory(ingest_text(owner=user, text="Alice: waiting for her review.").memory.pk)
    assert waiting.status == Memory.Status.REVIEW
    missing_id = Memory.all_objects.order_by("-pk").first().pk + 1000
    attempts = {
        "history": (deleted, lambda i: bob_api.get(f"/api/memories/{i}/history")),
        "restore": (deleted, lambda i: bob_api.post(f"/api/memories/{i}/restore")),
        "not-an-update": (superseded, lambda i: bob_api.post(f"/api/memories/{i}/not-an-update")),
        "approve": (waiting, lambda i: bob_api.post(f"/api/memories/{i}/approve")),
        "reject": (waiting, lambda i: bob_api.post(f"/api/memories/{i}/reject")),
        "get": (waiting, lambda i: bob_api.get(f"/api/memories/{i}")),
        "delete": (waiting, lambda i: bob_api.delete(f"/api/memories/{i}")),
        "original delete": (
            waiting,
            lambda i: bob_api.post("/api/delete", json.dumps({"memory_id": i}), content_type="application/json"),
        ),
    }
    events, state = (
        Event.objects.count(),
        sorted(Memory.all_objects.filter(owner=user).values_list("pk", "status", "deleted_at", "outdated_by", "summary")),
    )
    for name, (target, attempt) in attempts.items():
        theirs, nothing = attempt(target.pk), attempt(missing_id)
        assert theirs.status_code == nothing.status_code == 404, name
        said, unknown = theirs.json()["detail"], nothing.json()["detail"]
        assert said.replace(str(target.pk), "N") == unknown.replace(str(missing_id), "N"), name
    assert Event.objects.count() == events
    assert (
        sorted(Memory.all_objects.filter(owner=user).values_list("pk", "status", "deleted_at", "outdated_by", "summary")) == state
    )
    # The targets were in the state each action needs: for Alice, they work.
    alice = Client(headers={"Authorization": f"Bearer {create_token(owner=user, name='a')[1]}"})
    for url in (
        f"/api/memories/{deleted.pk}/restore",
        f"/api/memories/{superseded.pk}/not-an-update",
        f"/api/memories/{waiting.pk}/approve",
    ):
        assert alice.post(url).status_code == 200, url


def test_bobs_writes_never_reach_alices_space(user, other_user, spaces, bob_api):
    before = _alice_state(user)
    # The same text Alice stored is a new memory of Bob's, not a "duplicate" naming her id.
    same = bob_api.post("/api/ingest", json.dumps({"text": A_NOTES[0], "source": "b"}), content_type="application/json")
    assert same.status_code == 201 and same.json()["status"] == "ingested"
    assert Memory.objects.get(pk=same.json()["memory_id"]).owner == other_user
    made = bob_api.post("/api/consolidate").json()
    for consolidation in Consolidation.objects.filter(pk__in=made["consolidations"]):
        assert {m.owner_id for m in consolidation.sources.all()} == {other_user.pk}
    cleared = bob_api.post("/api/clear").json()
    assert cleared["memories_deleted"] == 3
    assert _alice_state(user) == before
    assert Consolidation.objects.filter(owner=user).count() == 1


def test_session_user_is_scoped_like_a_token(user, other_user, spaces):
    browser = Client()
    browser.force_login(other_user)
    assert browser.get(f"/api/memories/{spaces['a'][0].pk}").status_code == 404
    assert {m["id"] for m in browser.get("/api/memories").json()["memories"]} == {m.pk for m in spaces["b"]}


def test_bobs_commands_never_see_alices_memories(user, other_user, spaces):
    a_ids = {m.pk for m in spaces["a"]} | {spaces["a_failed"].pk}
    out = io.StringIO()
    call_command("query", "What is the Acme contract renewal worth?", "--json", "--user", "bob", stdout=out, stderr=io.StringIO())
    answer = json.loads(out.getvalue())
    assert set(answer["context"]) <= {m.pk for m in spaces["b"]} and not set(answer["cited"]) & a_ids
    assert "2 million" not in answer["answer"]
    out = io.StringIO()
    call_command("recall", "Acme contract renewal", "--json", "--k", "50", "--user", "bob", stdout=out, stderr=io.StringIO())
    recalled = json.loads(out.getvalue())
    assert recalled["memories"] and not {m["id"] for m in recalled["memories"]} & a_ids
    assert not recalled["consolidations"]
    out = io.StringIO()
    call_command("ingest", "--text", A_NOTES[1], "--user", "bob", stdout=out, stderr=io.StringIO())
    new_id = int(out.getvalue().split()[0])
    assert new_id not in a_ids and Memory.objects.get(pk=new_id).owner == other_user


def test_consolidating_bob_never_links_alices_memories(user, other_user, memory_factory):
    a = [memory_factory(text, owner=user) for text in A_NOTES]
    b = [memory_factory(text, owner=other_user) for text in B_NOTES]
    outcome = consolidate_owner(owner=other_user)
    assert outcome.consolidations
    for link in MemoryLink.objects.all():
        assert link.from_memory.owner_id == link.to_memory.owner_id == other_user.pk
    assert all(m.consolidated_at is None for m in Memory.objects.filter(pk__in=[m.pk for m in a]))
    assert {m.pk for m in outcome.consolidations[0].sources.all()} == {m.pk for m in b}
    consolidate_all()  # the scheduled job, over both owners
    for link in MemoryLink.objects.select_related("from_memory", "to_memory"):
        assert link.from_memory.owner_id == link.to_memory.owner_id
    for consolidation in Consolidation.objects.all():
        assert {m.owner_id for m in consolidation.sources.all()} == {consolidation.owner_id}


def test_inbox_subfolders_belong_to_their_user(user, other_user, tmp_path, settings):
    settings.MEMORY_INBOX_USER = "alice"
    inbox = tmp_path / "inbox"
    (inbox / "bob").mkdir(parents=True)
    (inbox / "ghost").mkdir()
    (inbox / "bob" / "plan.txt").write_text("Bob's plan: ship the Acme integration.")
    (inbox / "top.txt").write_text("A note dropped at the top of the inbox.")
    (inbox / "ghost" / "x.txt").write_text("A folder named after nobody.")
    report = scan_inbox(inbox_dir=inbox, settle_seconds=0)
    assert len(report.ingested) == 2 and report.failed == 1
    assert Memory.objects.get(raw_text__contains="Bob's plan").owner == other_user
    assert Memory.objects.get(raw_text__contains="top of the inbox").owner == user
    assert not Memory.objects.filter(raw_text__contains="named after nobody").exists()
    assert ProcessedFile.objects.get(path__endswith="plan.txt").owner == other_user
    assert ProcessedFile.objects.get(path__endswith="x.txt").status == "failed"


def test_ordinary_users_cannot_open_the_admin(user, other_user, spaces, user_factory):
    target = f"/admin/memories/memory/{spaces['a'][0].pk}/change/"
    browser = Client()
    browser.force_login(other_user)  # signed in, not staff
    for url in ("/admin/", "/admin/memories/memory/", target):
        response = browser.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], url
    staff = Client()
    staff.force_login(user_factory("clerk", is_staff=True))  # staff without permissions on memories
    assert staff.get(target).status_code == 403
    admin = Client()
    admin.force_login(user_factory("root", is_staff=True, is_superuser=True))
    assert admin.get(target).status_code == 200  # staff with the rights see everything
