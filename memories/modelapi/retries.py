"""Retries of a model API call: exponential backoff with full jitter, never shorter than
the server's Retry-After, then one ProviderError that says how many attempts were made.
The chat providers (llm/) and the embedding backends (embeddings/) share it."""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.utils import timezone

from .errors import ProviderError

log = logging.getLogger(__name__)

#: Seconds before the first retry; doubled each time, with jitter. Tests set it to 0.
BASE_DELAY = 1.0
#: No single wait is longer than this, whatever a server's Retry-After says.
MAX_DELAY = 60.0
#: Indirection so tests can record the waits instead of sleeping through them.
sleep = time.sleep

T = TypeVar("T")


class Retryable(Exception):
    """Raised inside a provider call for a failure worth another attempt."""

    def __init__(self, message: str, *, retry_after: str | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header: delta seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, (when - timezone.now()).total_seconds())


def backoff_delay(attempt: int, retry_after: str | None = None) -> float:
    """Exponential backoff with full jitter, never shorter than the server asked for."""
    delay = random.uniform(0, BASE_DELAY * (2**attempt))
    asked = retry_after_seconds(retry_after)
    if asked is not None:
        delay = max(delay, asked)
    return min(delay, MAX_DELAY)


def call_with_retries(call: Callable[[], T], *, max_retries: int, label: str) -> T:
    """Run call(); on Retryable wait and try again, up to max_retries more times, then
    give up with a ProviderError that says how many attempts were made."""
    attempt = 0
    while True:
        try:
            return call()
        except Retryable as exc:
            if attempt >= max_retries:
                tries = attempt + 1
                raise ProviderError(
                    f"{label} failed after {tries} attempt{'s' if tries != 1 else ''}: {exc}", retryable=True
                ) from None
            delay = backoff_delay(attempt, exc.retry_after)
            log.info("%s: %s; retrying in %.1fs", label, exc, delay)
            sleep(delay)
            attempt += 1
