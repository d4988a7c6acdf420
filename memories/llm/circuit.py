"""A circuit breaker around the model: when it keeps failing, stop calling it for a while.

While the circuit is open, extraction leaves new input pending (the sweeper picks it up
once the model is back) instead of failing every ingest and hammering a provider that is
down. State lives in the shared cache so the status page sees what the workers see.
"""

from __future__ import annotations

import time

from django.core.cache import cache

FAILURES_TO_OPEN = 3
COOLDOWN_SECONDS = 120


def _key(provider: str) -> str:
    return f"memories:circuit:{provider}"


def state(provider: str) -> dict:
    return cache.get(_key(provider)) or {"failures": 0, "open_until": 0.0, "last_error": ""}


def is_open(provider: str) -> bool:
    return state(provider)["open_until"] > time.time()


def record_failure(provider: str, error: str) -> bool:
    """Count a failure; True when this one opened the circuit (a breaker trip)."""
    current = state(provider)
    failures = current["failures"] + 1
    was_open = current["open_until"] > time.time()
    open_until = time.time() + COOLDOWN_SECONDS if failures >= FAILURES_TO_OPEN else current["open_until"]
    cache.set(_key(provider), {"failures": failures, "open_until": open_until, "last_error": error[:300]}, None)
    return failures >= FAILURES_TO_OPEN and not was_open


def record_success(provider: str) -> None:
    if state(provider)["failures"]:
        cache.delete(_key(provider))
