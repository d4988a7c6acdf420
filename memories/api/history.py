"""Bringing one's history in: a ChatGPT or Claude export, or a zipped Markdown/Obsidian vault,
uploaded as one file (what `manage.py ingest --from` does for a file on disk)."""

from __future__ import annotations

from django.conf import settings
from django.http.multipartparser import MultiPartParserError
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from ..services.history_import import KINDS, HistoryImportResult, import_history
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
    summary: str
    conversations: int
    conversations_new: int
    messages: int
    notes: int
    note_parts: int
    already: int
    links: int
    replaced: int
    skipped: dict[str, int]


def result_body(result: HistoryImportResult) -> dict:
    return {
        "kind": result.kind,
        "summary": result.summary,
        "conversations": result.conversations,
        "conversations_new": result.conversations_new,
        "messages": result.messages,
        "notes": result.notes,
        "note_parts": result.note_parts,
        "already": result.already,
        "links": result.links,
        "replaced": result.replaced,
        "skipped": dict(result.skipped.most_common()),
    }


@router.post(
    "/ingest/history",
    url_name="ingest_history",
    response={201: HistoryImportOut, 200: HistoryImportOut, 400: s.Message, 413: s.Message, 422: s.Message},
    openapi_extra=HISTORY_BODY,
    summary="Import a ChatGPT or Claude export or a zipped vault: one memory a message or note; extraction runs in the background",
)
def ingest_history(request):
    """Each message or note becomes a memory with its own date and source; importing the
    same export again adds nothing (200), a newer one only what is new (201). A damaged
    export imports nothing: the 400 says where it broke."""
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
    result = import_history(
        owner=request.auth, kind=kind, fileobj=upload, name=upload.name or "export", actor=actor(request), queue=True
    )
    return Status(201 if result.added else 200, result_body(result))
