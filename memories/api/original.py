"""The original design's endpoints, with its paths, field names and status codes, as thin
aliases: each calls the resource module that does the work. Its GET /memories is the
memories resource's list itself (memories.py), whose fields are the original's plus paging."""

from __future__ import annotations

from ninja import Query, Router

from . import memories, recall, space
from . import schemas as s
from .consolidations import consolidate_now

router = Router(tags=["original"])


@router.get("/status", response=s.StatusOut, summary="Counts of the caller's memory, and which engine is working")
def status(request):
    return space.status(request)


@router.post(
    "/ingest",
    response={201: s.IngestOut, 200: s.IngestOut, 400: s.Message, 413: s.Message, 415: s.Message, 422: s.Message},
    openapi_extra=memories.INGEST_BODY,
    summary="Remember text (JSON) or a file (multipart); extraction runs in the background",
)
def ingest(request):
    return memories.remember(request)


@router.get(
    "/query",
    response={200: s.QueryOut, 400: s.Message, 429: s.Message, 502: s.Message},
    summary="Answer a question from memory, citing [Memory N]",
)
def query(request, params: Query[recall.QueryParams]):
    return recall.answer(request, params)


@router.post(
    "/consolidate",
    response={200: s.ConsolidateOut, 409: s.Message, 429: s.Message, 502: s.Message},
    summary="Consolidate the caller's new memories now",
)
def consolidate(request):
    return consolidate_now(request)


@router.post("/delete", response={200: s.DeleteOut, 404: s.Message}, summary="Delete one of the caller's memories")
def delete(request, payload: s.DeleteIn):
    memories.delete(request, payload.memory_id)
    return {"status": "deleted", "memory_id": payload.memory_id}


@router.post("/clear", response=s.ClearOut, summary="Delete everything the caller holds")
def clear(request, inbox_files: bool = True):
    """Starting over, as the original's clear: the inbox files that were read are removed
    too (`inbox_files=false` keeps them), and nothing cleared is refused when sent again."""
    return space.clear(request, inbox_files=inbox_files)
