"""Consolidations: the caller's insights, and a run made now (the original's POST /consolidate)."""

from __future__ import annotations

from ninja import Query, Router
from ninja.errors import HttpError

from ..services import ConsolidationBusy, consolidate_owner
from . import schemas as s
from .common import Paging, actor, enforce_rate, own_consolidations, page

router = Router(tags=["consolidations"])


@router.get("/consolidations", response=s.ConsolidationList, summary="The caller's consolidations, newest first")
def consolidations(request, paging: Query[Paging]):
    result = page(own_consolidations(request).order_by("-created_at", "-id"), limit=paging.limit, offset=paging.offset)
    result["consolidations"] = result.pop("items")
    return result


def consolidate_now(request) -> dict:
    """Consolidate the caller's new memories in this request, rate limited; a run already
    going for them is a 409, a provider that failed before making anything a 502."""
    enforce_rate(request, "consolidate")
    try:
        outcome = consolidate_owner(owner=request.auth, actor=actor(request))
    except ConsolidationBusy as exc:
        raise HttpError(409, str(exc)) from None
    run = outcome.run
    if run.error and not outcome.consolidations:
        raise HttpError(502, f"The provider failed: {run.error}")
    made = len(outcome.consolidations)
    response = (
        f"Made {made} consolidation{'s' * (made != 1)} over {run.memories_consolidated} memories."
        if made
        else "Nothing to consolidate: fewer than two new memories are ready."
    )
    return {
        "status": "done",
        "response": response,
        "consolidations": [c.pk for c in outcome.consolidations],
        "memories_consolidated": run.memories_consolidated,
    }
