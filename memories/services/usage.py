"""Counting calls to the model for the stats page: calls, failures and breaker trips a day."""

from __future__ import annotations

import logging

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from ..models import ProviderUsage

log = logging.getLogger(__name__)


def record_call(*, owner_id: int | None, provider: str, failed: bool = False, calls: int = 1) -> None:
    """Model calls made for this owner (one unless said). Never raises: a count is not
    worth a lost memory."""
    _bump(owner_id=owner_id, provider=provider, calls=calls, failures=int(failed))


def record_breaker_trip(*, provider: str) -> None:
    """The circuit breaker opened: the engine stops being called for everyone for a while."""
    _bump(owner_id=None, provider=provider, breaker_trips=1)


def _bump(*, owner_id: int | None, provider: str, **counts: int) -> None:
    day = timezone.localdate()
    changes = {name: F(name) + n for name, n in counts.items() if n}
    try:
        # A savepoint, so a failed count cannot poison a transaction the caller is in.
        with transaction.atomic():
            rows = ProviderUsage.objects.owned_by(owner_id).filter(day=day, provider=provider)
            if rows.update(**changes):
                return
            try:
                with transaction.atomic():
                    ProviderUsage.objects.create(owner_id=owner_id, day=day, provider=provider, **counts)
            except IntegrityError:  # another worker made today's row first
                rows.update(**changes)
    except DatabaseError:
        log.warning("could not count a %s call", provider, exc_info=True)
