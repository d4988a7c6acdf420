"""Dates a question names ("last May", "two weeks ago", "8 May 2023"), parsed offline, and
the date arm: the owner's memories that happened in them."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db import connection
from django.utils import timezone

from .readable import READABLE_BY_DATE_SQL
from ..textutil import NUMBER_WORDS
from .sql import MEMORY_TABLE

MONTH_NUMBERS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTH_NUMBERS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTH_NUMBERS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"

DATE_PATTERNS = [
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("day_month_year", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\.?,?\s+{_YEAR}\b", re.I)),
    ("month_day_year", re.compile(rf"\b{_MONTH}\.?\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("month_year", re.compile(rf"\b{_MONTH}\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("day_month", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b", re.I)),
    ("month_day", re.compile(rf"\b{_MONTH}\.?\s+{_DAY}\b(?!\s*(?:,\s*)?\d)", re.I)),
    ("last_month_name", re.compile(rf"\b(last|this|in|during|since)\s+{_MONTH}\b", re.I)),
    ("year", re.compile(rf"\b(?:in|during|since|of|from|year)\s+{_YEAR}\b|\b{_YEAR}\b", re.I)),
    ("relative_day", re.compile(r"\b(yesterday|today|tonight|this morning)\b", re.I)),
    (
        "relative_period",
        re.compile(r"\b(last|this|past|previous)\s+(week|weekend|month|year|summer|winter|spring|fall|autumn)\b", re.I),
    ),
    ("ago", re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|month|year)s?\s+ago\b", re.I)),
    ("last_weekday", re.compile(r"\b(last|this|on)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)),
]
SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11), "winter": (12, 2)}


@dataclass(frozen=True)
class DateSpan:
    """A stretch of time a question names; `month` alone (no year) matches that month in any year."""

    label: str
    start: date | None = None
    end: date | None = None  # inclusive
    month: int | None = None

    def contains(self, day: date, slack_days: int = 0) -> bool:
        if self.month is not None and self.start is None:
            return day.month == self.month
        return self.start - timedelta(days=slack_days) <= day <= self.end + timedelta(days=slack_days)


def _month_span(year: int, month: int, label: str) -> DateSpan:
    return DateSpan(label, date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def date_spans(question: str, *, today: date) -> list[DateSpan]:
    """The dates and periods a question mentions, parsed offline. Relative ones
    ("yesterday", "last May", "two weeks ago") count from `today`."""
    spans: list[DateSpan] = []
    taken: list[tuple[int, int]] = []

    def free(m) -> bool:
        return not any(m.start() < end and start < m.end() for start, end in taken)

    for kind, pattern in DATE_PATTERNS:
        for m in pattern.finditer(question):
            if not free(m):
                continue
            span = _span_for(kind, m, today)
            if span is not None:
                spans.append(span)
                taken.append((m.start(), m.end()))
    return spans


def _span_for(kind: str, m, today: date) -> DateSpan | None:
    g = m.groups()
    if kind == "iso":
        day = _safe_date(int(g[0]), int(g[1]), int(g[2]))
        return DateSpan(day.strftime("%-d %B %Y"), day, day) if day else None
    if kind in ("day_month_year", "month_day_year"):
        d, mon, y = (g[0], g[1], g[2]) if kind == "day_month_year" else (g[1], g[0], g[2])
        day = _safe_date(int(y), MONTH_NUMBERS[mon.lower()], int(d))
        return DateSpan(day.strftime("%-d %B %Y"), day, day) if day else None
    if kind == "month_year":
        month, year = MONTH_NUMBERS[g[0].lower()], int(g[1])
        return _month_span(year, month, f"{calendar.month_name[month]} {year}")
    if kind in ("day_month", "month_day"):
        d, mon = (g[0], g[1]) if kind == "day_month" else (g[1], g[0])
        month = MONTH_NUMBERS[mon.lower()]
        # "May 5" without a year: the most recent one, this year or last.
        year = today.year if (month, int(d)) <= (today.month, today.day) else today.year - 1
        day = _safe_date(year, month, int(d))
        return DateSpan(day.strftime("%-d %B %Y"), day, day) if day else None
    if kind == "last_month_name":
        word, month = g[0].lower(), MONTH_NUMBERS[g[1].lower()]
        if word in ("last", "this"):
            year = today.year if month < today.month or (word == "this" and month <= today.month) else today.year - 1
            return _month_span(year, month, f"{calendar.month_name[month]} {year}")
        return DateSpan(calendar.month_name[month], month=month)
    if kind == "year":
        year = int(g[0] or g[1])
        return DateSpan(str(year), date(year, 1, 1), date(year, 12, 31))
    if kind == "relative_day":
        word = g[0].lower()
        day = today - timedelta(days=1) if word == "yesterday" else today
        return DateSpan(word, day, day)
    if kind == "relative_period":
        which, unit = g[0].lower(), g[1].lower()
        back = which != "this"
        if unit in ("week", "weekend"):
            monday = today - timedelta(days=today.weekday()) - timedelta(weeks=1 if back else 0)
            start = monday + timedelta(days=5) if unit == "weekend" else monday
            return DateSpan(f"{which} {unit}", start, monday + timedelta(days=6))
        if unit == "month":
            first = today.replace(day=1)
            if back:
                first = (first - timedelta(days=1)).replace(day=1)
            return _month_span(first.year, first.month, f"{which} month")
        if unit == "year":
            year = today.year - 1 if back else today.year
            return DateSpan(f"{which} year ({year})", date(year, 1, 1), date(year, 12, 31))
        first, last = SEASONS[unit]
        # The season's year is the year it starts in (winter runs December to February).
        year = today.year - 1 if first > last and today.month <= last else today.year
        start = date(year, first, 1)
        if back and start <= today:
            year -= 1 if date(year + (1 if first > last else 0), last, 28) >= today else 0
        if back and start > today:
            year -= 1
        end_year = year + (1 if first > last else 0)
        return DateSpan(f"{which} {unit}", date(year, first, 1), date(end_year, last, calendar.monthrange(end_year, last)[1]))
    if kind == "ago":
        n = int(g[0]) if g[0].isdigit() else NUMBER_WORDS[g[0].lower()]
        unit = g[1].lower()
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
        center = today - timedelta(days=days)
        # "Two years ago" is vague: allow about a sixth of the distance either way.
        spread = max(1, days // 6) if unit != "day" else 0
        return DateSpan(
            f"{n} {unit}{'s' if n != 1 else ''} ago", center - timedelta(days=spread), center + timedelta(days=spread)
        )
    if kind == "last_weekday":
        weekday = WEEKDAYS[g[1].lower()]
        back = (today.weekday() - weekday) % 7 or 7
        day = today - timedelta(days=back)
        return DateSpan(f"{g[0].lower()} {g[1].capitalize()}", day, day)
    return None


def date_phrases(question: str) -> list[str]:
    return [m.group(0) for _, pattern in DATE_PATTERNS for m in pattern.finditer(question or "")]


# A month named without a year ("in May") means that month in any of the last few years.
MONTH_YEARS_BACK = 10


def date_pool(owner, spans: list[DateSpan], limit: int, today: date) -> list[int]:
    """The date arm: the owner's memories that happened in the spans, most important first."""
    ranges = []
    for span in spans:
        if span.start is None:
            # Whole ranges, not a month() of every row: the occurred_at index can serve them.
            years = range(today.year - MONTH_YEARS_BACK, today.year + 1)
            ranges.extend((s.start, s.end) for s in (_month_span(year, span.month, "") for year in years))
        else:
            ranges.append((span.start, span.end))
    where, params = [], []
    for first, last in ranges:
        where.append("(occurred_at >= %s AND occurred_at < %s)")
        for day in (first, last + timedelta(days=1)):
            params.append(
                connection.ops.adapt_datetimefield_value(timezone.make_aware(datetime.combine(day, datetime.min.time())))
            )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {MEMORY_TABLE} WHERE ({' OR '.join(where)}) AND {READABLE_BY_DATE_SQL} "
            "ORDER BY importance DESC, occurred_at DESC LIMIT %s",
            [*params, owner.pk, limit],
        )
        return [row[0] for row in cursor.fetchall()]


# The date signal: the memory happened in a period the question names, or close to it.
W_DATE = 0.35
W_DATE_NEAR = 0.15
DATE_SLACK_DAYS = 7


def date_signal(spans: list[DateSpan], day: date) -> tuple[float, str]:
    """What a memory that happened on `day` gains from the question's dates, and the reason."""
    inside = next((s for s in spans if s.contains(day)), None)
    near = inside or next((s for s in spans if s.contains(day, DATE_SLACK_DAYS)), None)
    if inside:
        return W_DATE, f"occurred in {inside.label}" if inside.start != inside.end else f"occurred on {inside.label}"
    if near:
        return W_DATE_NEAR, f"occurred near {near.label}"
    return 0.0, ""
