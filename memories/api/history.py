"""Bringing one's history in: a ChatGPT or Claude export, or a zipped Markdown/Obsidian vault,
uploaded as one file (what `manage.py ingest --from` does for a file on disk)."""

from __future__ import annotations

from django.conf import settings
from django.http.multipartparser import MultiPartParserError
from ninja import Path as PathParam
from ninja import Router, Schema, Status
from pydantic import Field
from ninja.errors import HttpError

from ..services.history_import import KINDS
from ..services.history_jobs import import_status, start_import
from . import schemas as s
from .common import actor, enforce_rate

router = Router(tags=["memories"])

HISTORY_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "A ChatGPT or Claude data export (.zip or conversations.json) or a zipped vault.",
                        },
                        "kind": {"type": "string", "enum": ["", *KINDS], "description": "Empty: read from the file."},
                    },
                    "required": ["file"],
                }
            }
        },
    }
}


class HistoryImportOut(Schema):
    kind: str
    summary: str = Field(description="What came in and what was skipped, in a sentence or two.")
    headline: str = Field(description="What came in.")
    conversations: int
    conversations_new: int
    messages: int
    notes: int
    note_parts: int
    already: int
    links: int
    replaced: int
    skipped: dict[str, int]


class HistoryJobOut(Schema):
    id: str
    name: str
    kind: str
    state: str = Field(description="queued, importing, done or failed")
    done: int = Field(description="Conversations (or notes) stored so far.")
    total: int | None = Field(None, description="Conversations in the export, once it has been checked.")
    result: HistoryImportOut | None = None
    error: str = ""


@router.post(
    "/ingest/history",
    url_name="ingest_history",
    response={202: HistoryJobOut, 400: s.Message, 413: s.Message, 422: s.Message},
    openapi_extra=HISTORY_BODY,
    summary="Import a ChatGPT or Claude export or a zipped vault in the background: one memory a message or note",
)
def ingest_history(request):
    """A worker imports it; GET the job for its progress and result. Each message or note
    becomes a memory with its own date and source; importing the same export again adds
    nothing, a newer one only what is new. A damaged export imports nothing: the failed
    job's error says where it broke."""
    enforce_rate(request, "ingest")
    try:
        upload = request.FILES.get("file")
        kind = request.POST.get("kind", "")
    except MultiPartParserError as exc:
        raise HttpError(400, f"The multipart body could not be read: {exc}") from None
    if upload is None:
        raise HttpError(422, "Attach the export as the form field 'file' (curl -F file=@export.zip).")
    if kind not in ("", *KINDS):
        raise HttpError(422, f"kind must be one of {', '.join(KINDS)}, or empty to read it from the file.")
    limit = settings.MEMORY_MAX_UPLOAD_MB * 1024 * 1024
    if upload.size is not None and upload.size > limit:
        raise HttpError(
            413, f"The file is larger than the {settings.MEMORY_MAX_UPLOAD_MB} MB limit; use manage.py ingest --from."
        )
    job = start_import(owner=request.auth, fileobj=upload, name=upload.name or "export", kind=kind, actor=actor(request))
    return Status(202, job)


@router.get(
    "/ingest/history/{job_id}",
    url_name="ingest_history_status",
    response={200: HistoryJobOut, 404: s.Message},
    summary="A history import's progress, then what came in and what was skipped and why",
)
def ingest_history_status(request, job_id: str = PathParam(..., max_length=64)):
    job = import_status(owner=request.auth, job_id=job_id)
    if job is None:
        raise HttpError(404, f"No import {job_id}.")
    return job
