"""Fixed-window rate limits, and the growing delays of sign-in, kept in Django's cache,
which every web worker shares: Redis when REDIS_URL is set, files in the data dir otherwise.

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


# -- growing delays ----------------------------------------------------------------------------
#
# For guesses (sign-in): a fixed window that refuses everything once full lets anyone who can
# make the failures lock the rightful user out for the rest of the window. A delay instead:
# N failures (the scope's rate, "10/h") cost nothing; from the Nth on, each makes the next
# attempt wait twice as long as the one before (FIRST_DELAY, 2x, 4x, ... up to a cap). The count
# is forgotten one period after the last failure. A guesser is slowed to one try per cap;
# whoever else shares the scope waits at most the cap, never the whole period.

FIRST_DELAY = 15


def _clock() -> float:
    return time.time()


def backoff_wait(scope: str, ident: str, *, rate: str | None = None) -> int:
    """Seconds until `ident` may try again in the scope; 0 when it may now."""
    if parse_rate(rate if rate is not None else rate_for(scope)) is None:
        return 0
    until = cache.get(f"backoff:{scope}:{ident}:until", 0)
    return max(0, math.ceil(until - _clock()))


def backoff_failure(scope: str, ident: str, *, cap: int, rate: str | None = None) -> int:
    """Count one failure; the seconds the next attempt must wait (0 while failures are free)."""
    parsed = parse_rate(rate if rate is not None else rate_for(scope))
    if parsed is None:
        return 0
    free, period = parsed
    key = f"backoff:{scope}:{ident}"
    # add() then incr(): atomic in Redis; the file cache may lose one count of two at once.
    cache.add(f"{key}:n", 0, timeout=period)
    try:
        failures = cache.incr(f"{key}:n")
    except ValueError:
        cache.set(f"{key}:n", 1, timeout=period)
        failures = 1
    cache.touch(f"{key}:n", timeout=period)
    if failures < free:
        return 0
    wait = min(cap, FIRST_DELAY * 2 ** min(failures - free, 20))
    cache.set(f"{key}:until", _clock() + wait, timeout=wait + 1)
    return wait


def backoff_reset(scope: str, ident: str) -> None:
    cache.delete_many([f"backoff:{scope}:{ident}:n", f"backoff:{scope}:{ident}:until"])
