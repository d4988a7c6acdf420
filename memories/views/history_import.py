"""Bring your history from the ingest page: a ChatGPT or Claude export or a zipped vault,
uploaded, imported, and a card saying what came in and what was skipped."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from ..services.history import Actor
from ..services.history_import import KINDS, HistoryImportError, import_history
from ._common import CHANGED, _error, _over_limit


@login_required
@require_POST
def ingest_history(request):
    if limited := _over_limit(request, "ingest"):
        return limited
    upload = request.FILES.get("export")
    if upload is None:
        return _error(request, "Choose an export to import: a .zip or conversations.json, or a zipped notes folder.")
    kind = request.POST.get("kind", "")
    if kind not in ("", *KINDS):
        return _error(request, "Choose ChatGPT, Claude or Markdown, or let the file say.")
    if upload.size > settings.MEMORY_MAX_UPLOAD_MB * 1024 * 1024:
        return _error(
            request,
            f"The export is larger than the {settings.MEMORY_MAX_UPLOAD_MB} MB upload limit; import it with manage.py ingest --from.",
        )
    try:
        result = import_history(
            owner=request.user, kind=kind, fileobj=upload, name=upload.name, actor=Actor.for_user(request.user), queue=True
        )
    except HistoryImportError as exc:
        return _error(request, str(exc))
    if request.htmx:
        return trigger_client_event(render(request, "memories/history_import.html#result", {"result": result}), CHANGED)
    return render(request, "memories/history_import.html", {"result": result})
