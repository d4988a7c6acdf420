"""Helpers the page modules share: refusals, rate limits, owned lookups, the card."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django_htmx.http import reswap, retarget

from .. import ratelimit
from ..models import Memory
from ..services import access_memory, browse


# Tells the sidebar (and anything else listening) that counts may have changed.
CHANGED = "memories-changed"


def _error(request, message: str, status: int = 400):
    """A refused request: the message in the flash area for HTMX, an error page otherwise."""
    if request.htmx:
        response = render(request, "memories/fragments.html#flash", {"flash": [("error", message)]}, status=status)
        return reswap(retarget(response, "#flash"), "innerHTML")
    return render(request, "memories/error.html", {"message": message}, status=status)


def _over_limit(request, scope: str):
    """The same per-user limits as the API (memories/ratelimit.py), or None when allowed."""
    verdict = ratelimit.hit(scope, str(request.user.pk))
    if verdict.allowed:
        return None
    response = _error(request, f"Too many {scope} requests; try again in {verdict.retry_after} s.", status=429)
    response["Retry-After"] = str(verdict.retry_after)
    return response


NOT_YOURS = "No memory of yours with that id."


def _owned_memory(request, memory_id: int) -> Memory:
    # Another owner's memory is indistinguishable from a missing one.
    try:
        return access_memory(request.user, memory_id)
    except Memory.DoesNotExist:
        raise Http404(NOT_YOURS) from None


def _owned_any(request, memory_id: int) -> Memory:
    """One of the owner's memories in any state (its page says what happened to it)."""
    try:
        return browse.any_state(owner=request.user, memory_id=memory_id)
    except Memory.DoesNotExist:
        raise Http404(NOT_YOURS) from None


def _card(request, memory: Memory, **extra):
    # Redrawn on the memory's own page (a poll, an undo, a retry), the card leaves out the
    # "Memory N" link and the Open button: the page's heading says it, and they led to itself.
    here = request.htmx.current_url_abs_path if request.htmx else None
    own_page = bool(here) and here.split("?")[0] == reverse("memories:detail", args=[memory.pk])
    return render(request, "memories/cards.html#card", {"memory": memory, "own_page": own_page, **extra})


def _without(request, *keys: str) -> str:
    params = request.GET.copy()
    for key in keys:
        params.pop(key, None)
    return params.urlencode()
