"""Pictures of a space: the graph, the timeline and the stats."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..forms import StatsForm, TimelineForm
from ..models import Memory
from ..services import visual
from ._common import _error, _without


@login_required
@require_GET
def graph(request):
    """The page; the browser fetches the nodes from /api/graph (the same data the API gives)."""
    return render(
        request,
        "memories/graph.html",
        {
            "facets": visual.graph_facets(owner=request.user),
            "limit": visual.GRAPH_DEFAULT_LIMIT,
            "max_limit": visual.GRAPH_MAX_LIMIT,
        },
    )


@login_required
@require_GET
def timeline(request):
    form = TimelineForm(request.GET)
    if not form.is_valid():
        return _error(request, "That timeline range is not valid: " + "; ".join(v[0] for v in form.errors.values()))
    f = form.cleaned_data
    zoom = f["zoom"] or "month"
    data = visual.timeline_data(owner=request.user, zoom=zoom, date_from=f["date_from"], date_to=f["date_to"])
    return render(
        request,
        "memories/timeline.html",
        {"form": form, "zoom": zoom, "timeline": data, "zooms": list(visual.ZOOMS), "range_query": _without(request, "zoom")},
    )


@login_required
@require_GET
def stats(request):
    form = StatsForm(request.GET or None, initial={"days": 30})
    if request.GET and not form.is_valid():
        return _error(request, "Choose 7, 30, 90 or 365 days.")
    days = (form.cleaned_data["days"] if form.is_bound else None) or 30
    data = visual.stats_data(owner=request.user, days=days)
    return render(
        request,
        "memories/stats.html",
        {
            "form": form,
            "stats": data,
            "days": days,
            "status_rows": [{"status": Memory.Status(k).label, "count": v} for k, v in data["by_status"].items()],
            "usage_totals": {k: sum(d[k] for d in data["provider_per_day"]) for k in ("calls", "failures", "breaker_trips")},
            "usage_series": USAGE_SERIES,
            "backlog_series": BACKLOG_SERIES,
        },
    )


USAGE_SERIES = [("calls", "s0", "calls"), ("failures", "bad", "failures"), ("breaker_trips", "warn", "breaker trips")]


BACKLOG_SERIES = [("backlog", "s2", "waiting")]
