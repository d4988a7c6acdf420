"""Bring your history from the ingest page: a ChatGPT or Claude export or a zipped vault,
uploaded and imported by a worker, with a card that follows it (conversations done of all)
and then says what came in and what was skipped and why."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from ..services.history import Actor
from ..services.history_import import KINDS, HistoryImportError
from ..services.history_jobs import import_status, start_import
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
        job = start_import(owner=request.user, fileobj=upload, name=upload.name, kind=kind, actor=Actor.for_user(request.user))
    except HistoryImportError as exc:
        return _error(request, str(exc))
    if not request.htmx:
        return redirect("memories:ingest_history_status", job_id=job["id"])
    return _job_card(request, job)


@login_required
@require_GET
def ingest_history_status(request, job_id: str):
    job = import_status(owner=request.user, job_id=job_id)
    if job is None:
        raise Http404("No import of yours with that id.")
    if request.htmx:
        return _job_card(request, job)
    return render(request, "memories/history_import.html", {"job": job})


def _job_card(request, job: dict):
    response = render(request, "memories/history_import.html#job", {"job": job})
    return trigger_client_event(response, CHANGED) if job["state"] == "done" else response
