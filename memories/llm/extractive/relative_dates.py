"""Relative dates a sentence gives ("yesterday", "last week", "three days ago"), resolved
against the day it was said."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from ... import textutil

WEEKDAY_NAMES = [day.lower() for day in textutil.WEEKDAYS]
_NUM_WORDS = {**textutil.NUMBER_WORDS, "few": 3, "couple of": 2}
RELATIVE_RE = re.compile(
    r"\b(?:(yesterday|today|tonight|this\s+morning|this\s+evening|last\s+night)"
    r"|(last|this|next|past)\s+(week|weekend|month|year|summer|winter|spring|fall|autumn|" + "|".join(WEEKDAY_NAMES) + r")"
    r"|(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple\s+of)\s+(day|week|month|year)s?\s+ago)\b",
    re.I,
)


def _day(d: date) -> str:
    return f"{d.day} {d.strftime('%B')} {d.year}"


def when_said(sentence: str, said_at: datetime) -> str:
    """When the sentence says it happened, as a date, counted from when it was said
    ("yesterday", said on 8 May 2023 -> "7 May 2023"); the day it was said otherwise."""
    day = said_at.date()
    m = RELATIVE_RE.search(sentence)
    if not m:
        return _day(day)
    single, which, unit, count, count_unit = m.groups()
    if single:
        single = " ".join(single.lower().split())
        return _day(day - timedelta(days=1)) if single in ("yesterday", "last night") else _day(day)
    if which:
        which, unit = which.lower(), unit.lower()
        step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
        if unit == "year":
            return str(day.year + step)
        if unit == "month":
            month_index = day.year * 12 + day.month - 1 + step
            return f"{date(month_index // 12, month_index % 12 + 1, 1).strftime('%B')} {month_index // 12}"
        if unit in ("week", "weekend"):
            return {-1: f"the {unit} before {_day(day)}", 0: f"the {unit} of {_day(day)}", 1: f"the {unit} after {_day(day)}"}[
                step
            ]
        if unit in WEEKDAY_NAMES:
            return {
                -1: f"the {unit.capitalize()} before {_day(day)}",
                0: f"{unit.capitalize()}, the week of {_day(day)}",
                1: f"the {unit.capitalize()} after {_day(day)}",
            }[step]
        return f"{unit} {day.year + step}"  # a season
    amount = _NUM_WORDS.get(" ".join(count.lower().split()), None) if not count.isdigit() else int(count)
    amount = amount or 1
    unit = count_unit.lower()
    if unit == "day":
        return _day(day - timedelta(days=amount))
    if unit == "week":
        return f"{amount} week{'s' if amount != 1 else ''} before {_day(day)}"
    if unit == "month":
        month_index = day.year * 12 + day.month - 1 - amount
        return f"{date(month_index // 12, month_index % 12 + 1, 1).strftime('%B')} {month_index // 12}"
    return str(day.year - amount)
