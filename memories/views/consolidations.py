"""Consolidations: the insights, the facts that changed, and running a consolidation now."""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import trigger_client_event

from .. import services
from ..services import browse, status as space_status
from ._common import CHANGED, _error, _over_limit


# When the owner last asked for a run: until a worker starts it, the page shows it queued.
REQUEST_KEY = "consolidation_requested_at"


def _requested_at(request) -> datetime | None:
    requested = request.session.get(REQUEST_KEY)
    return datetime.fromisoformat(requested) if requested else None


def _run_seen(request, run: space_status.RunState) -> space_status.RunState:
    if run.request_done:
        request.session.pop(REQUEST_KEY, None)
    return run


@login_required
@require_GET
def consolidations(request):
    insights = browse.insights_page(owner=request.user, page=request.GET.get("page"), requested_at=_requested_at(request))
    context = {"page": insights.page, "updates": insights.updates, "run": _run_seen(request, insights.run)}
    if request.htmx and request.htmx.target == "insights":
        return render(request, "memories/consolidations.html#insights", context)
    return render(request, "memories/consolidations.html", context)


@login_required
@require_POST
def consolidate_now(request):
    if limited := _over_limit(request, "consolidate"):
        return limited
    request.session[REQUEST_KEY] = timezone.now().isoformat()
    if not services.queue_consolidation(owner=request.user):
        return _error(request, "A consolidation is already running; its result will appear here.", status=409)
    if not request.htmx:
        messages.success(request, "Consolidation queued.")
        return redirect("memories:consolidations")
    return consolidation_status(request)


@login_required
@require_http_methods(["GET", "POST"])
def consolidation_status(request):
    run = _run_seen(request, space_status.consolidation_run(owner=request.user, requested_at=_requested_at(request)))
    response = render(request, "memories/consolidations.html#run_status", {"run": run})
    if run.just_finished:
        trigger_client_event(response, "consolidated")
        trigger_client_event(response, CHANGED)
    return response
