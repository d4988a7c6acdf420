"""REST resources: one memory, its links and consolidations, all consolidations, recall."""

from __future__ import annotations

import re

from django.db.models import Q
from django.http import StreamingHttpResponse
from django.utils import timezone
from ninja import Path, Query, Router, Schema, Status
from ninja.errors import HttpError
from pydantic import Field

from ..models import Memory, MemoryLink
from ..services.query import recall_context as run_recall
from ..services import (
    RestoreError,
    RetryError,
    approve_memory,
    delete_memory,
    memory_history,
    queue_extraction,
    reject_memory,
    restore_memory,
    retry_memory,
    undo_update,
    update_memory,
)
from ..services.portability import export_space
from . import schemas as s
from .common import actor, enforce_rate, insights, own_consolidations, own_memory, page, recalled

router = Router(tags=["resources"])

MemoryId = Path(..., ge=1, le=s.MAX_ID, description="A memory id of the caller's.")


@router.get("/memories/{memory_id}", response={200: s.MemoryDetail, 404: s.Message}, summary="One memory, with its text")
def memory_detail(request, memory_id: int = MemoryId):
    return own_memory(request, memory_id)


@router.patch(
    "/memories/{memory_id}",
    response={200: s.MemoryDetail, 404: s.Message},
    summary="Correct a memory's summary, entities, topics, importance or date",
)
def memory_update(request, payload: s.MemoryPatch, memory_id: int = MemoryId):
    # null means "leave as is" (none of these fields can be emptied to nothing), except for
    # expires_at, where null clears the expiry.
    changes = {
        field: value for field, value in payload.model_dump(exclude_unset=True).items() if value is not None or field == "expires_at"
    }
    try:
        update_memory(owner=request.auth, memory_id=memory_id, changes=changes, actor=actor(request))
    except Memory.DoesNotExist:
        raise HttpError(404, f"No memory {memory_id}.") from None
    return own_memory(request, memory_id)


@router.post(
    "/memories/{memory_id}/not-an-update",
    response={200: s.MemoryDetail, 404: s.Message, 409: s.Message},
    summary="Undo a wrong update: the superseded memory is current again",
)
def memory_not_update(request, memory_id: int = MemoryId):
    own_memory(request, memory_id)  # 404 for a memory that is not the caller's
    if undo_update(owner=request.auth, memory_id=memory_id, actor=actor(request)) is None:
        raise HttpError(409, f"Memory {memory_id} is not superseded by a newer fact.")
    return own_memory(request, memory_id)


@router.delete("/memories/{memory_id}", response={204: None, 404: s.Message}, summary="Delete a memory")
def memory_delete(request, memory_id: int = MemoryId):
    if not delete_memory(owner=request.auth, memory_id=memory_id, actor=actor(request)):
        raise HttpError(404, f"No memory {memory_id}.")
    return Status(204, None)


@router.post(
    "/memories/{memory_id}/retry",
    response={200: s.MemoryDetail, 404: s.Message, 409: s.Message},
    summary="Extract a failed memory again",
)
def memory_retry(request, memory_id: int = MemoryId):
    own_memory(request, memory_id)  # 404 before 409: someone else's memory must look absent
    try:
        memory = retry_memory(owner=request.auth, memory_id=memory_id, actor=actor(request))
    except RetryError as exc:
        raise HttpError(409, str(exc)) from None
    queue_extraction(memory)
    return own_memory(request, memory_id)


@router.get(
    "/memories/{memory_id}/history",
    response={200: list[s.EventOut], 404: s.Message},
    summary="Every recorded change to the memory, newest first (also after a delete or purge)",
)
def memory_history_list(request, memory_id: int = MemoryId):
    events = list(memory_history(owner=request.auth, memory_id=memory_id)[:500])
    if not events:
        raise HttpError(404, f"No memory {memory_id}.")
    return events


@router.post(
    "/memories/{memory_id}/restore",
    response={200: s.MemoryDetail, 404: s.Message, 409: s.Message},
    summary="Bring back a deleted memory",
)
def memory_restore(request, memory_id: int = MemoryId):
    try:
        restored = restore_memory(owner=request.auth, memory_id=memory_id, actor=actor(request))
    except RestoreError as exc:
        raise HttpError(409, str(exc)) from None
    if restored is None:
        raise HttpError(404, f"No deleted memory {memory_id}.")
    return own_memory(request, memory_id)


@router.post(
    "/memories/{memory_id}/approve",
    response={200: s.MemoryDetail, 404: s.Message},
    summary="Review mode: let a memory waiting for review into the record",
)
def memory_approve(request, memory_id: int = MemoryId):
    if approve_memory(owner=request.auth, memory_id=memory_id, actor=actor(request)) is None:
        raise HttpError(404, f"No memory {memory_id} waiting for review.")
    return own_memory(request, memory_id)


@router.post(
    "/memories/{memory_id}/reject",
    response={204: None, 404: s.Message},
    summary="Review mode: reject a memory; its content is tombstoned like a delete",
)
def memory_reject(request, memory_id: int = MemoryId):
    if reject_memory(owner=request.auth, memory_id=memory_id, actor=actor(request)) is None:
        raise HttpError(404, f"No memory {memory_id} waiting for review.")
    return Status(204, None)


@router.get(
    "/memories/{memory_id}/links",
    response={200: list[s.LinkOut], 404: s.Message},
    summary="The memory's connections, both directions",
)
def memory_links(request, memory_id: int = MemoryId):
    memory = own_memory(request, memory_id)
    links = MemoryLink.objects.filter(
        Q(from_memory=memory, to_memory__owner=request.auth) | Q(to_memory=memory, from_memory__owner=request.auth)
    ).order_by("pk")
    return [
        {
            "id": link.pk,
            "from_memory": link.from_memory_id,
            "to_memory": link.to_memory_id,
            "linked_to": link.to_memory_id if link.from_memory_id == memory.pk else link.from_memory_id,
            "direction": "out" if link.from_memory_id == memory.pk else "in",
            "relationship": link.relationship,
            "consolidation": link.consolidation_id,
            "created_at": link.created_at,
        }
        for link in links
    ]


@router.get(
    "/memories/{memory_id}/consolidations",
    response={200: list[s.ConsolidationOut], 404: s.Message},
    summary="Insights this memory is a source of",
)
def memory_consolidations(request, memory_id: int = MemoryId):
    memory = own_memory(request, memory_id)
    return list(own_consolidations(request).filter(sources=memory).order_by("-created_at", "-id"))


class Paging(Schema):
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10**9)


@router.get("/consolidations", response=s.ConsolidationList, summary="The caller's consolidations, newest first")
def consolidations(request, paging: Query[Paging]):
    result = page(own_consolidations(request).order_by("-created_at", "-id"), limit=paging.limit, offset=paging.offset)
    result["consolidations"] = result.pop("items")
    return result


class RecallParams(Schema):
    q: s.Text = Field(min_length=1, max_length=2000, description="The question.")
    k: int | None = Field(None, ge=1, le=500)
    strategy: s.StrategyName | None = None


@router.get(
    "/recall",
    response={200: s.RecallOut, 400: s.Message, 429: s.Message},
    summary="The memories the model would read for a question, ranked, with scores",
)
def recall(request, params: Query[RecallParams]):
    enforce_rate(request, "recall")
    question = " ".join(params.q.split())
    if not question:
        raise HttpError(400, "Ask a question.")
    try:
        result = run_recall(owner=request.auth, question=question, strategy=params.strategy, k=params.k)
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None
    return {
        "question": question,
        "strategy": result.strategy,
        "context_tokens": result.context_tokens,
        "memories": recalled(result),
        "consolidations": insights(result),
    }



@router.get(
    "/export",
    url_name="export",
    summary="The caller's whole memory space as one JSON Lines stream (format: README, Export and import)",
    openapi_extra={"responses": {200: {"description": "JSON Lines", "content": {"application/x-ndjson": {}}}}},
)
def export(request):
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.auth.get_username()).strip("-") or "user"
    response = StreamingHttpResponse(export_space(owner=request.auth), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="memory-{name}-{timezone.localdate():%Y-%m-%d}.jsonl"'
    return response
