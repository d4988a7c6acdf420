"""The original design's endpoints, with its field names, under /api/ and scoped to the caller."""

from __future__ import annotations

import json
from typing import Literal

from django.conf import settings
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParserError
from ninja import Query, Router, Schema, Status
from ninja.errors import HttpError, ValidationError
from pydantic import Field
from pydantic import ValidationError as PydanticValidationError

from ..services import (
    ConsolidationBusy,
    answer_question,
    clear_owner,
    consolidate_owner,
    delete_memory,
    ingest_file,
    ingest_text,
    queue_extraction,
)
from ..services.browse import search_memories
from ..embeddings import status as embeddings_status
from ..services.status import engine_status, space_counts
from . import schemas as s
from .common import actor, enforce_rate, insights, page, recalled, with_connections

router = Router(tags=["original"])


@router.get("/status", response=s.StatusOut, summary="Counts of the caller's memory, and which engine is working")
def status(request):
    counts = space_counts(owner=request.auth)
    engine = engine_status()
    return {
        "total_memories": counts["memories"],
        "unconsolidated": counts["unconsolidated"],
        "consolidations": counts["consolidations"],
        "pending": counts["pending"],
        "failed": counts["failed"],
        "provider": engine.label or f"unavailable: {engine.error}",
        "provider_is_language_model": engine.is_language_model,
        "embeddings": embeddings_status().label,
    }


class MemoryFilters(Schema):
    q: s.Text = Field("", max_length=500, description="Words to look for in the text, summary or source.")
    topic: s.Text = Field("", max_length=200)
    entity: s.Text = Field("", max_length=200)
    status: s.StatusName | None = None
    fact: Literal["current", "superseded", "expired"] | None = Field(None, description="current, superseded (by a newer fact) or expired.")
    sort: s.SortName = "new"
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10**9)


@router.get("/memories", response=s.MemoryList, summary="List and search the caller's memories, a page at a time")
def memories(request, filters: Query[MemoryFilters]):
    found = search_memories(
        owner=request.auth, q=filters.q.strip(), topic=filters.topic.strip(), entity=filters.entity.strip(),
        status=filters.status or "", sort=filters.sort, fact=filters.fact or "",
    )
    result = page(with_connections(found), limit=filters.limit, offset=filters.offset)
    result["memories"] = result.pop("items")
    return result


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


@router.post(
    "/ingest",
    response={201: s.IngestOut, 200: s.IngestOut, 400: s.Message, 413: s.Message, 415: s.Message, 422: s.Message},
    openapi_extra=INGEST_BODY,
    summary="Remember text (JSON) or a file (multipart); extraction runs in the background",
)
def ingest(request: HttpRequest):
    enforce_rate(request, "ingest")
    content_type = request.content_type or ""
    if content_type in ("", "application/json") or content_type.endswith("+json") or (
        content_type != "multipart/form-data" and _looks_like_json(request)
    ):
        # A JSON body is read as JSON whatever the content type says: the original design's
        # own example, curl -X POST .../ingest -d '{"text": "..."}', sends it as a form.
        result = _ingest_json(request)
    elif content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
        result = _ingest_form(request)
    else:
        raise HttpError(415, f'Send application/json ({{"text", "source"}}) or multipart/form-data, not {content_type}.')
    if result.created:
        queue_extraction(result.memory)
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
        owner=request.auth, text=item.text, source=item.source or "api", occurred_at=item.occurred_at, actor=actor(request),
        expires_at=item.expires_at,
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
            {"text": "-", "source": fields["source"][:500], "occurred_at": fields["occurred_at"] or None,
             "expires_at": fields["expires_at"] or None}
        )
        source, occurred_at, expires_at = checked.source, checked.occurred_at, checked.expires_at
    except PydanticValidationError as exc:
        raise ValidationError(exc.errors(include_url=False, include_context=False)) from None
    if upload is None:
        if fields["text"]:  # a plain HTML form posting text
            return ingest_text(
                owner=request.auth, text=fields["text"], source=source or "api", occurred_at=occurred_at, actor=actor(request),
                expires_at=expires_at,
            )
        raise HttpError(422, "Attach the file as the form field 'file' (curl -F file=@notes.pdf).")
    limit = settings.MEMORY_MAX_UPLOAD_MB * 1024 * 1024
    if upload.size is not None and upload.size > limit:
        raise HttpError(413, f"The file is larger than the {settings.MEMORY_MAX_UPLOAD_MB} MB limit.")
    return ingest_file(
        owner=request.auth, fileobj=upload, name=upload.name or "file", source=source, occurred_at=occurred_at,
        actor=actor(request), expires_at=expires_at,
    )


class QueryParams(Schema):
    q: s.Text = Field(min_length=1, max_length=2000, description="The question.")
    strategy: s.StrategyName | None = None
    k: int | None = Field(None, ge=1, le=500, description="How many memories recall may hand the model.")


@router.get(
    "/query",
    response={200: s.QueryOut, 400: s.Message, 429: s.Message, 502: s.Message},
    summary="Answer a question from memory, citing [Memory N]",
)
def query(request, params: Query[QueryParams]):
    enforce_rate(request, "query")
    try:
        result = answer_question(owner=request.auth, question=params.q, strategy=params.strategy, k=params.k)
    except ValueError as exc:  # an empty question after whitespace is squeezed out
        raise HttpError(400, str(exc)) from None
    return {
        "question": result.question,
        "answer": result.answer,
        "cited": result.cited,
        "context": recalled(result.recall),
        "consolidations": insights(result.recall),
        "strategy": result.recall.strategy,
        "provider": result.provider,
        "elapsed_ms": result.elapsed_ms,
    }


@router.post(
    "/consolidate",
    response={200: s.ConsolidateOut, 409: s.Message, 429: s.Message, 502: s.Message},
    summary="Consolidate the caller's new memories now",
)
def consolidate(request):
    enforce_rate(request, "consolidate")
    try:
        outcome = consolidate_owner(owner=request.auth, actor=actor(request))
    except ConsolidationBusy as exc:
        raise HttpError(409, str(exc)) from None
    run = outcome.run
    if run.error and not outcome.consolidations:
        raise HttpError(502, f"The provider failed: {run.error}")
    made = len(outcome.consolidations)
    response = (
        f"Made {made} consolidation{'s' * (made != 1)} over {run.memories_consolidated} memories."
        if made
        else "Nothing to consolidate: fewer than two new memories are ready."
    )
    return {
        "status": "done",
        "response": response,
        "consolidations": [c.pk for c in outcome.consolidations],
        "memories_consolidated": run.memories_consolidated,
    }


@router.post("/delete", response={200: s.DeleteOut, 404: s.Message}, summary="Delete one of the caller's memories")
def delete(request, payload: s.DeleteIn):
    if not delete_memory(owner=request.auth, memory_id=payload.memory_id, actor=actor(request)):
        raise HttpError(404, f"No memory {payload.memory_id}.")
    return {"status": "deleted", "memory_id": payload.memory_id}


@router.post("/clear", response=s.ClearOut, summary="Delete everything the caller holds")
def clear(request, inbox_files: bool = True):
    """Starting over, as the original's clear: the inbox files that were read are removed
    too (`inbox_files=false` keeps them), and nothing cleared is refused when sent again."""
    counts = clear_owner(owner=request.auth, inbox_files=inbox_files, actor=actor(request))
    return {
        "status": "cleared",
        "memories_deleted": counts["memories"],
        "consolidations_deleted": counts["consolidations"],
        "files_deleted": counts["inbox_files"],
    }

