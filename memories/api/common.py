"""Helpers the API routers share: the caller's space, rate limits, memory and recall shapes."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from ninja.errors import HttpError

from .. import ratelimit
from ..models import Consolidation, Memory, MemoryLink
from ..recall import RecallResult
from ..services import Actor


class RateLimited(HttpError):
    def __init__(self, scope: str, retry_after: int):
        super().__init__(429, f"Too many {scope} requests; try again in {retry_after} s.")
        self.retry_after = retry_after


def enforce_rate(request, scope: str) -> None:
    verdict = ratelimit.hit(scope, str(request.auth.pk))
    if not verdict.allowed:
        raise RateLimited(scope, verdict.retry_after)


def actor(request) -> Actor:
    """Who the history says made a change: the token, or the signed-in user."""
    token = getattr(request, "api_token", None)
    return Actor.for_token(token) if token is not None else Actor.for_user(request.auth)


def with_connections(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    """Prefetch both directions of links, which MemoryOut shows as `connections`."""
    return memories.prefetch_related(
        Prefetch("links_out", queryset=MemoryLink.objects.order_by("pk")),
        Prefetch("links_in", queryset=MemoryLink.objects.order_by("pk")),
    )


def own_memory(request, memory_id: int) -> Memory:
    """The caller's memory, or 404 whether it does not exist or is someone else's."""
    return get_object_or_404(with_connections(Memory.objects.filter(owner=request.auth)), pk=memory_id)


def own_consolidations(request) -> QuerySet[Consolidation]:
    return Consolidation.objects.filter(owner=request.auth).prefetch_related("sources")


def page(queryset, *, limit: int, offset: int) -> dict:
    total = queryset.count()
    items = list(queryset[offset : offset + limit])
    return {
        "count": len(items),
        "total": total,
        "limit": limit,
        "offset": offset,
        "next_offset": offset + limit if offset + limit < total else None,
    } | {"items": items}


def recalled(result: RecallResult) -> list[dict]:
    return [
        {
            "rank": rank,
            "id": r.memory.pk,
            "source": r.memory.source,
            "summary": r.memory.summary,
            "score": round(float(r.score), 4),
            "reasons": list(r.reasons),
        }
        for rank, r in enumerate(result.memories, 1)
    ]


def insights(result: RecallResult) -> list[dict]:
    return [{"id": c.pk, "summary": c.summary, "insight": c.insight} for c in result.consolidations]
