"""The owner rule (services.access_memory, Memory.objects.owned_by): Bob reads, corrects,
deletes, restores and purges one of Alice's memories through the API, the pages and MCP.
Each path answers as for a memory that does not exist, and afterwards Alice's memory, its
history, its tombstones and its vector are exactly as they were: a refusal that ran the
change anyway would fail here, not only one that answered wrongly."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from memories.models import Event, Memory, MemoryVector, RejectedContent
from memories.services import access_memory, delete_memory
from memories.services.tokens import create_token

from .test_mcp import http_client, text_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_rate_limits():
    cache.clear()


@pytest.fixture
def alices(user, memory_factory):
    """A live memory and a deleted one of Alice's."""
    live = memory_factory("Alice: the Acme contract renewal is worth 2 million.", owner=user)
    gone = memory_factory("Alice: the Berlin offsite moved to May.", owner=user)
    delete_memory(owner=user, memory_id=gone.pk)
    return live, Memory.all_objects.get(pk=gone.pk)


def state_of(user) -> dict:
    """Everything of Alice's an intruder's change could touch."""
    return {
        "memories": sorted(Memory.all_objects.filter(owner=user).values_list()),
        "events": sorted(Event.objects.filter(owner=user).values_list("pk", "action", "subject_id", "note")),
        "tombstones": sorted(RejectedContent.objects.filter(owner=user).values_list("content_hash", "reason")),
        "vectors": sorted(MemoryVector.objects.filter(owner=user).values_list("memory_id", "model")),
    }


def test_access_memory_finds_only_the_owners_and_says_so_alike(user, other_user, alices):
    live, gone = alices
    assert access_memory(user, live.pk) == live
    assert access_memory(user, gone.pk, any_state=True) == gone
    for owner, memory_id, how in ((other_user, live.pk, {}), (other_user, gone.pk, {"any_state": True}), (user, gone.pk, {})):
        with pytest.raises(Memory.DoesNotExist, match=rf"^No memory {memory_id}\.$"):
            access_memory(owner, memory_id, **how)
    assert Memory.objects.owned_by(other_user).count() == 0 and Memory.objects.owned_by(user).count() == 1


def test_bob_reaches_none_of_alices_memories_through_the_api(user, other_user, alices):
    live, gone = alices
    before = state_of(user)
    bob = Client(headers={"Authorization": f"Bearer {create_token(owner=other_user, name='b', scope='admin')[1]}"})
    patch = json.dumps({"summary": "hijacked", "importance": 1})
    for method, path, body in (
        ("get", f"/api/memories/{live.pk}", None),
        ("patch", f"/api/memories/{live.pk}", patch),
        ("delete", f"/api/memories/{live.pk}", None),
        ("post", f"/api/memories/{gone.pk}/restore", None),
        ("post", f"/api/memories/{live.pk}/retry", None),
        ("get", f"/api/memories/{live.pk}/links", None),
    ):
        response = getattr(bob, method)(path, body, content_type="application/json")
        assert response.status_code == 404, (method, path, response.content)
        assert response.json()["detail"].startswith("No ")
    assert state_of(user) == before


def test_bob_reaches_none_of_alices_memories_through_the_pages(user, other_user, alices, bob_client):
    live, gone = alices
    before = state_of(user)
    edit = {"edit-summary": "hijacked", "edit-entities": "", "edit-topics": "", "edit-importance": "1"}
    for method, name, memory, data in (
        ("get", "memories:detail", live, None),
        ("get", "memories:card", live, None),
        ("post", "memories:edit", live, edit),
        ("post", "memories:delete", live, {}),
        ("post", "memories:restore", gone, {}),
        ("post", "memories:purge", gone, {"confirm": "purge"}),
    ):
        response = getattr(bob_client, method)(reverse(name, args=[memory.pk]), data)
        assert response.status_code == 404, (method, name)
    # The bulk delete ignores ids that are not Bob's.
    bob_client.post(reverse("memories:bulk_delete"), {"ids": [live.pk]})
    assert state_of(user) == before


def test_bob_reaches_none_of_alices_memories_through_mcp(live_server, user, other_user, alices):
    live, _ = alices
    before = state_of(user)
    token = create_token(owner=other_user, name="bob's agent", scope="admin")[1]

    async def scenario():
        async with http_client(live_server.url, token) as client:
            results = [
                await client.call_tool("get_memory", {"memory_id": live.pk}),
                await client.call_tool("update_memory", {"memory_id": live.pk, "summary": "hijacked"}),
                await client.call_tool("delete_memory", {"memory_id": live.pk}),
            ]
            try:
                await client.read_resource(f"memory://memories/{live.pk}")
                resource = "read"
            except Exception as exc:  # the SDK raises the server's refusal
                resource = str(exc)
            return [(r.is_error, text_of(r)) for r in results], resource

    results, resource = asyncio.run(scenario())
    assert all(is_error and f"No memory {live.pk}" in text for is_error, text in results), results
    assert f"No memory {live.pk}" in resource
    assert state_of(user) == before
