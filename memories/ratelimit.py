"""Fixed-window rate limits kept in Django's cache, which every web worker shares: Redis
when REDIS_URL is set, files in the data dir otherwise.

A rate is "N/unit" with unit s, m, h or d ("60/m"); an empty rate or "0" turns the limit off.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    retry_after: int  # seconds until the window resets; 0 when allowed


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """(requests, seconds), or None when the limit is off."""
    if not rate or str(rate).strip() in {"0", "off", "none"}:
        return None
    try:
        count, unit = str(rate).strip().split("/", 1)
        return int(count), PERIODS[unit.strip().lower()]
    except (ValueError, KeyError):
        raise ValueError(f"Bad rate {rate!r}: use N/s, N/m, N/h or N/d, e.g. 60/m.") from None


def rate_for(scope: str) -> str | None:
    """The scope's rate: the setting MEMORY_RATE_LIMIT_<SCOPE> (settings.py holds the defaults)."""
    return getattr(settings, f"MEMORY_RATE_LIMIT_{scope.upper()}")


def hit(scope: str, ident: str, *, rate: str | None = None, now: float | None = None) -> Verdict:
    """Count one request of `ident` (a user id) against the scope's limit."""
    parsed = parse_rate(rate if rate is not None else rate_for(scope))
    if parsed is None:
        return Verdict(allowed=True, limit=0, remaining=0, retry_after=0)
    limit, period = parsed
    now = time.time() if now is None else now
    window = int(now // period)
    key = f"ratelimit:{scope}:{ident}:{period}:{window}"
    # add() then incr(): atomic in Redis, so two requests at once never read the same
    # count. The file cache may let two simultaneous requests share one count: an error
    # of one request in a window, which a rate limit can live with.
    cache.add(key, 0, timeout=period + 1)
    try:
        count = cache.incr(key)
    except ValueError:  # the key expired between add() and incr()
        cache.set(key, 1, timeout=period + 1)
        count = 1
    reset_in = max(1, math.ceil((window + 1) * period - now))
    if count > limit:
        return Verdict(allowed=False, limit=limit, remaining=0, retry_after=reset_in)
    return Verdict(allowed=True, limit=limit, remaining=limit - count, retry_after=0)


def exhausted(scope: str, ident: str, *, rate: str | None = None, now: float | None = None) -> Verdict:
    """Whether `ident` has used up the scope's limit in this window, without counting a
    request (sign-in counts failures with hit() and asks this before checking a password)."""
    parsed = parse_rate(rate if rate is not None else rate_for(scope))
    if parsed is None:
        return Verdict(allowed=True, limit=0, remaining=0, retry_after=0)
    limit, period = parsed
    now = time.time() if now is None else now
    window = int(now // period)
    count = cache.get(f"ratelimit:{scope}:{ident}:{period}:{window}", 0)
    if count >= limit:
        return Verdict(allowed=False, limit=limit, remaining=0, retry_after=max(1, math.ceil((window + 1) * period - now)))
    return Verdict(allowed=True, limit=limit, remaining=limit - count, retry_after=0)
