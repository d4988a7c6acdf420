"""Read-your-writes: what was just added is found at once, before any worker extracted it,
through the API, the pages and recall itself (the MCP tools: tests/test_mcp.py)."""

import json

import pytest
from django.test import Client

from memories.models import Memory
from memories.recall import PENDING_REASON, recall
from memories.services import delete_memory, extract_memory, ingest_text
from memories.services.tokens import create_token

FALCON = "Sarah Chen leads Project Falcon; the launch is set for March 15."


@pytest.fixture
def api(user):
    return Client(headers={"Authorization": f"Bearer {create_token(owner=user, name='agent')[1]}"})


def test_ingest_then_recall_and_query_at_once_through_the_api(api, user):
    response = api.post("/api/ingest", json.dumps({"text": FALCON, "source": "chat"}), content_type="application/json")
    assert response.status_code == 201 and response.json()["memory_status"] == "pending"
    memory_id = response.json()["memory_id"]

    found = api.get("/api/recall", {"q": "Who leads Project Falcon?"}).json()["memories"]
    assert found[0]["id"] == memory_id and PENDING_REASON in found[0]["reasons"]

    answered = api.get("/api/query", {"q": "Who leads Project Falcon?"}).json()
    assert answered["cited"] == [memory_id] and f"[Memory {memory_id}]" in answered["answer"]
    assert Memory.objects.get(pk=memory_id).status == Memory.Status.PENDING  # nothing extracted it meanwhile


def test_ingest_then_ask_on_the_pages(signed_in, user):
    assert signed_in.post("/ingest/text/", {"text": FALCON, "source": "note"}).status_code in (200, 302)
    memory = Memory.objects.get(owner=user)
    page = signed_in.get("/query/", {"q": "When is the Project Falcon launch?"}).content.decode()
    assert f"[Memory {memory.pk}]" in page or f"/memories/{memory.pk}/" in page
    assert "pending" in page


def test_a_pending_memory_is_marked_until_extracted_then_read_as_usual(user):
    memory = ingest_text(owner=user, text=FALCON).memory
    for strategy in ("hybrid", "recent"):
        result = recall(owner=user, question="Project Falcon launch", strategy=strategy)
        assert result.memory_ids == [memory.pk]
        assert PENDING_REASON in result.memories[0].reasons
    extract_memory(memory.pk)
    result = recall(owner=user, question="Project Falcon launch")
    assert result.memory_ids == [memory.pk] and PENDING_REASON not in result.memories[0].reasons


def test_pending_memories_stay_in_their_space_and_leave_with_a_delete(user, other_user):
    mine = ingest_text(owner=user, text=FALCON).memory
    ingest_text(owner=other_user, text="Bob's Project Falcon notes, pending too.")
    assert recall(owner=user, question="Project Falcon").memory_ids == [mine.pk]
    delete_memory(owner=user, memory_id=mine.pk)
    assert recall(owner=user, question="Project Falcon").memory_ids == []


def test_failed_and_review_mode_input_is_not_read(user, settings):
    failed = ingest_text(owner=user, text="Falcon notes the extractor could not read.").memory
    Memory.objects.filter(pk=failed.pk).update(status=Memory.Status.FAILED)
    assert recall(owner=user, question="Falcon notes").memory_ids == []
    # Review mode: new input waits for a person before recall may read it.
    settings.MEMORY_REVIEW_MODE = True
    ingest_text(owner=user, text=FALCON)
    assert recall(owner=user, question="Project Falcon launch").memory_ids == []
    assert recall(owner=user, question="Project Falcon launch", strategy="recent").memory_ids == []
