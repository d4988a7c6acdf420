"""Helpers every resource module shares: who is calling, their rate limits, and paging."""

from __future__ import annotations

from django.db.models import QuerySet
from ninja import Schema
from ninja.errors import HttpError
from pydantic import Field

from .. import ratelimit
from ..models import Consolidation
from ..services import Actor
from ..services.browse import source_prefetch
from ..services.tokens import scope_refusal


class RateLimited(HttpError):
    def __init__(self, scope: str, retry_after: int):
        super().__init__(429, f"Too many {scope} requests; try again in {retry_after} s.")
        self.retry_after = retry_after


def enforce_rate(request, scope: str) -> None:
    verdict = ratelimit.hit(scope, str(request.auth.pk))
    if not verdict.allowed:
        raise RateLimited(scope, verdict.retry_after)


def needs_scope(request, scope: str) -> None:
    """403 unless the caller's token has the scope (a signed-in session may do everything)."""
    if refusal := scope_refusal(getattr(request, "api_token", None), scope):
        raise HttpError(403, refusal)


def actor(request) -> Actor:
    """Who the history says made a change: the token, or the signed-in user."""
    token = getattr(request, "api_token", None)
    return Actor.for_token(token) if token is not None else Actor.for_user(request.auth)


def own_consolidations(request) -> QuerySet[Consolidation]:
    # Only the owner's memories count as sources, whatever rows the table holds.
    return Consolidation.objects.owned_by(request.auth).prefetch_related(source_prefetch(owner=request.auth))


class Paging(Schema):
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10**9)


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
