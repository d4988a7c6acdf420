"""Memories: the list (the original's GET /memories), one memory and everything done to it,
and remembering new ones, which the original's POST /ingest does (original.py)."""

from __future__ import annotations

import json
from typing import Literal

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParserError
from ninja import Path, Query, Router, Schema, Status
from ninja.errors import HttpError, ValidationError
from pydantic import Field
from pydantic import ValidationError as PydanticValidationError

from ..models import Memory
from ..services import (
    access_memory,
    browse,
    RestoreError,
    RetryError,
    approve_memory,
    delete_memory,
    filter_memories,
    ingest_file,
    ingest_text,
    memory_history,
    reject_memory,
    restore_memory,
    retry_memory,
    undo_update,
    update_memory,
)
from . import schemas as s
from .common import actor, enforce_rate, needs_scope, page

router = Router(tags=["memories"])

MemoryId = Path(..., ge=1, le=s.MAX_ID, description="A memory id of the caller's.")


def with_connections(memories: QuerySet[Memory], *, owner) -> QuerySet[Memory]:
    """Prefetch both directions of links, which MemoryOut shows as `connections`: two
    queries a page, however many links its memories have; only links within the space."""
    return memories.prefetch_related(*browse.link_prefetches(owner=owner))


def own_memory(request, memory_id: int) -> Memory:
    """The caller's memory with its connections, or a 404 whether it does not exist or is
    someone else's (access_memory's Memory.DoesNotExist; api/__init__.py maps it)."""
    return access_memory(request.auth, memory_id, memories=with_connections(Memory.objects, owner=request.auth))


# --- the list ------------------------------------------------------------------------------


class MemoryFilters(Schema):
    q: s.Text = Field("", max_length=500, description="Words to look for in the text, summary or source.")
    topic: s.Text = Field("", max_length=200)
    entity: s.Text = Field("", max_length=200)
    status: s.StatusName | None = None
    fact: Literal["current", "superseded", "expired"] | None = Field(
        None, description="current, superseded (by a newer fact) or expired."
    )
    sort: s.SortName = "new"
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10**9)


@router.get(
    "/memories",
    response=s.MemoryList,
    tags=["original", "memories"],
    summary="List and search the caller's memories, a page at a time",
)
def memories(request, filters: Query[MemoryFilters]):
    found = filter_memories(
        owner=request.auth,
        q=filters.q.strip(),
        topic=filters.topic.strip(),
        entity=filters.entity.strip(),
        status=filters.status or "",
        sort=filters.sort,
        fact=filters.fact or "",
    )
    # No per-row link count: nothing in the response reads one, and annotating it grouped the
    # page and its count over both link joins, ten times the cost of a page at 20,000 memories
    # (scripts/bench_api_list.py).
    result = page(with_connections(found, owner=request.auth), limit=filters.limit, offset=filters.offset)
    result["memories"] = result.pop("items")
    return result


# --- remembering ---------------------------------------------------------------------------

INGEST_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": s.IngestIn.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "A file to remember."},
                        "source": {"type": "string", "maxLength": 500},
                        "occurred_at": {"type": "string", "description": "ISO 8601 date or datetime."},
                        "expires_at": {"type": "string", "description": "Forget after: ISO 8601 date or datetime."},
                    },
                    "required": ["file"],
                }
            },
        },
    }
}


def remember(request: HttpRequest) -> Status:
    """Store text (a JSON body) or a file (multipart) as a new memory; extraction is queued."""
    enforce_rate(request, "ingest")
    content_type = request.content_type or ""
    if (
        content_type in ("", "application/json")
        or content_type.endswith("+json")
        or (content_type != "multipart/form-data" and _looks_like_json(request))
    ):
        # A JSON body is read as JSON whatever the content type says: the original design's
        # own example, curl -X POST .../ingest -d '{"text": "..."}', sends it as a form.
        result = _ingest_json(request)
    elif content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
        result = _ingest_form(request)
    else:
        raise HttpError(415, f'Send application/json ({{"text", "source"}}) or multipart/form-data, not {content_type}.')
    body = {
        "status": "ingested" if result.created else "duplicate",
        "response": result.message,
        "memory_id": result.memory.pk,
        "memory_status": result.memory.status,
    }
    return Status(201 if result.created else 200, body)


def _looks_like_json(request) -> bool:
    # Reading the body here is safe for any type but multipart (whose files must stream);
    # a body over the size limit raises RequestDataTooBig, answered with a 413.
    return request.body[:1000].lstrip().startswith(b"{")


def _ingest_json(request):
    try:
        data = json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: absurdly nested JSON
        raise HttpError(400, 'The body is not valid JSON; send {"text": "...", "source": "..."}.') from None
    if not isinstance(data, dict):
        raise HttpError(422, 'The body must be a JSON object: {"text": "...", "source": "..."}.')
    try:
        item = s.IngestIn.model_validate(data)
    except PydanticValidationError as exc:
        raise ValidationError(exc.errors(include_url=False, include_context=False)) from None
    return ingest_text(
        owner=request.auth,
        text=item.text,
        source=item.source or "api",
        occurred_at=item.occurred_at,
        actor=actor(request),
        expires_at=item.expires_at,
        queue=True,
    )


def _ingest_form(request):
    try:
        upload = request.FILES.get("file")
        fields = {key: request.POST.get(key, "") for key in ("source", "occurred_at", "text", "expires_at")}
    except MultiPartParserError as exc:
        raise HttpError(400, f"The multipart body could not be read: {exc}") from None
    try:
        # The same rules as the JSON body; "text" is a stand-in, the file is the content here.
        checked = s.IngestIn.model_validate(
            {
                "text": "-",
                "source": fields["source"][:500],
                "occurred_at": fields["occurred_at"] or None,
                "expires_at": fields["expires_at"] or None,
            }
        )
        source, occurred_at, expires_at = checked.source, checked.occurred_at, checked.expires_at
    except PydanticValidationError as exc:
        raise ValidationError(exc.errors(include_url=False, include_context=False)) from None
    if upload is None:
        if fields["text"]:  # a plain HTML form posting text
            return ingest_text(
                owner=request.auth,
                text=fields["text"],
                source=source or "api",
                occurred_at=occurred_at,
                actor=actor(request),
                expires_at=expires_at,
                queue=True,
            )
        raise HttpError(422, "Attach the file as the form field 'file' (curl -F file=@notes.pdf).")
    limit = settings.MEMORY_MAX_UPLOAD_MB * 1024 * 1024
    if upload.size is not None and upload.size > limit:
        raise HttpError(413, f"The file is larger than the {settings.MEMORY_MAX_UPLOAD_MB} MB limit.")
    return ingest_file(
        owner=request.auth,
        fileobj=upload,
        name=upload.name or "file",
        source=source,
        occurred_at=occurred_at,
        actor=actor(request),
        expires_at=expires_at,
        queue=True,
    )


# --- one memory ----------------------------------------------------------------------------


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
        field: value
        for field, value in payload.model_dump(exclude_unset=True).items()
        if value is not None or field == "expires_at"
    }
    update_memory(owner=request.auth, memory_id=memory_id, changes=changes, actor=actor(request))
    return own_memory(request, memory_id)


def delete(request, memory_id: int) -> None:
    """The API's one delete: DELETE /memories/{id} and the original's POST /delete both call it."""
    needs_scope(request, "admin")
    if delete_memory(owner=request.auth, memory_id=memory_id, actor=actor(request)) is None:
        raise HttpError(404, f"No memory {memory_id}.")


@router.delete("/memories/{memory_id}", response={204: None, 404: s.Message}, summary="Delete a memory")
def memory_delete(request, memory_id: int = MemoryId):
    delete(request, memory_id)
    return Status(204, None)


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


@router.post(
    "/memories/{memory_id}/retry",
    response={200: s.MemoryDetail, 404: s.Message, 409: s.Message},
    summary="Extract a failed memory again",
)
def memory_retry(request, memory_id: int = MemoryId):
    own_memory(request, memory_id)  # 404 before 409: someone else's memory must look absent
    try:
        retry_memory(owner=request.auth, memory_id=memory_id, actor=actor(request))
    except RetryError as exc:
        raise HttpError(409, str(exc)) from None
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
    links = browse.memory_links(owner=request.auth, memory=memory)
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
    return list(browse.memory_consolidations(owner=request.auth, memory=memory))
