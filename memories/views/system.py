"""Health checks for the load balancer, and the site's 404 page."""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..services import browse, health


@require_GET
def healthz(request):
    """Liveness: the process answers. No sign-in, no database."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request):
    """Readiness: database, task broker and task cluster, each with what was found. 503
    when one is not ready, so a load balancer holds traffic back. No sign-in: it says only
    which part is down, nothing of anyone's memories."""
    checks = health.readiness()
    ready = all(c.ok for c in checks)
    body = {"status": "ready" if ready else "not ready", "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in checks}}
    return JsonResponse(body, status=200 if ready else 503)


def not_found(request, exception=None):
    """The site's own 404 page. A memory page that is gone says whether it was purged (its
    history remains) rather than leaving the owner to wonder."""
    purged = None
    match = getattr(request, "resolver_match", None)
    memory_id = match.kwargs.get("memory_id") if match else None
    if memory_id and request.user.is_authenticated:
        purged = browse.purge_record(owner=request.user, memory_id=memory_id)
    context = {"memory_id": memory_id, "purged": purged}
    return render(request, "404.html", context, status=404)
