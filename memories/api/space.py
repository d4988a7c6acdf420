"""The caller's space as a whole: its counts (the original's GET /status), all of it as one
export, and starting over (the original's POST /clear)."""

from __future__ import annotations

import re

from django.http import StreamingHttpResponse
from django.utils import timezone
from ninja import Router

from ..embeddings import status as embeddings_status
from ..services import clear_owner
from ..services.export import export_space
from ..services.status import engine_status, space_counts
from .common import actor, needs_scope

router = Router(tags=["space"])


def status(request) -> dict:
    counts = space_counts(owner=request.auth)
    engine = engine_status()
    return {
        "total_memories": counts["memories"],
        "unconsolidated": counts["unconsolidated"],
        "consolidations": counts["consolidations"],
        "pending": counts["pending"],
        "failed": counts["failed"],
        "waiting_for_vector": counts["waiting_for_vector"],
        "provider": engine.label or f"unavailable: {engine.error}",
        "provider_is_language_model": engine.is_language_model,
        "embeddings": embeddings_status().label,
    }


def clear(request, *, inbox_files: bool) -> dict:
    needs_scope(request, "admin")
    counts = clear_owner(owner=request.auth, inbox_files=inbox_files, actor=actor(request))
    return {
        "status": "cleared",
        "memories_deleted": counts["memories"],
        "consolidations_deleted": counts["consolidations"],
        "files_deleted": counts["inbox_files"],
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
