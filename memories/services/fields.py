"""What a memory's fields may hold, checked in one place: a correction (the API's PATCH,
the edit page, the admin's service calls) and an import read the same rules, so a value
the app would never write cannot reach the database through either (a list of numbers as
entities, an infinite importance, a date a page cannot draw)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from .errors import EditError

# The same range as ingest (OCCURRED_MIN_YEAR/MAX_YEAR) and the API schema: near year 1 or
# 9999 a time-zone shift or one added day overflows Python's datetime on a page.
MIN_YEAR, MAX_YEAR = 1000, 9000
MAX_LABELS, MAX_LABEL_CHARS, MAX_SUMMARY_CHARS = 50, 200, 5000


def text(value, *, field: str, max_chars: int | None = None, required: bool = False) -> str:
    """A string that every database stores: no lone surrogates, no NULs (PostgreSQL refuses them)."""
    if not isinstance(value, str):
        raise EditError(f"{field} must be text.", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise EditError(f"{field} must be valid Unicode text (it contains a lone surrogate).", field=field) from None
    value = value.replace("\x00", "")
    if required and not value.strip():
        raise EditError(f"{field} cannot be empty.", field=field)
    return value[:max_chars] if max_chars is not None else value


def labels(value, *, field: str) -> list[str]:
    """Entities or topics: a list of short strings, whitespace folded, each once."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EditError(f"{field} must be a list of strings.", field=field)
    folded = (" ".join(text(v, field=field).split())[:MAX_LABEL_CHARS] for v in value)
    return list(dict.fromkeys(v for v in folded if v))[:MAX_LABELS]


def importance(value, *, field: str = "importance", optional: bool = False) -> float | None:
    """A finite number from 0 to 1 (a boolean is not a number here)."""
    if value is None and optional:
        return None
    if isinstance(value, bool):
        raise EditError(f"{field} must be a number between 0 and 1.", field=field)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise EditError(f"{field} must be a number between 0 and 1.", field=field) from None
    if not math.isfinite(number) or not 0 <= number <= 1:
        raise EditError(f"{field} must be between 0 and 1.", field=field)
    return number


def when(value, *, field: str, required: bool = False) -> datetime | None:
    """An ISO 8601 datetime (naive: the server's zone) within MIN_YEAR..MAX_YEAR, in UTC."""
    if value in (None, ""):
        if required:
            raise EditError(f"{field} is required.", field=field)
        return None
    parsed = value if isinstance(value, datetime) else parse_datetime(str(value)) if isinstance(value, str) else None
    if parsed is None:
        raise EditError(f"{field} {str(value)[:40]!r} is not a datetime.", field=field)
    parsed = in_utc(parsed)
    if parsed is None or not MIN_YEAR <= parsed.year <= MAX_YEAR:
        raise EditError(f"{field} must be a date from {MIN_YEAR} to {MAX_YEAR}.", field=field)
    return parsed


def in_utc(parsed: datetime) -> datetime | None:
    """The datetime in UTC (a naive one read in the server's zone), or None when moving it
    overflows (years at the edge of what Python holds): callers then refuse it in words."""
    try:
        return (timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed).astimezone(UTC)
    except (OverflowError, ValueError):
        return None


def json_object(value, *, field: str) -> dict:
    """An object whose strings every database stores (JSON numbers are finite: the reader refuses NaN)."""
    if not isinstance(value, dict):
        raise EditError(f"{field} must be an object.", field=field)
    _check_strings(value, field)
    return value


def _check_strings(value, field: str, depth: int = 0) -> None:
    if depth > 20:
        raise EditError(f"{field} is nested too deeply.", field=field)
    if isinstance(value, str):
        if "\x00" in value:
            raise EditError(f"{field} holds a NUL character.", field=field)
        text(value, field=field)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key, field, depth + 1)
            _check_strings(item, field, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, field, depth + 1)


def count(value, *, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise EditError(f"{field} must be a whole number from 0.", field=field)
    return value
