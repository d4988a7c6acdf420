"""Dates a question names ("last May", "two weeks ago", "8 May 2023"), parsed offline; the
dates a memory's own words name, counted from the day it was said ("yesterday" in a note
of 8 May is 7 May); and the date arm: the owner's memories whose time falls in the
question's, matched as intervals that overlap, never as strings."""

from __future__ import annotations

import calendar
import json
import re
import zlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache

from django.db import connection
from django.utils import timezone

from .readable import READABLE_BY_DATE_SQL
from ..textutil import NUMBER_WORDS, WEEKDAY_PATTERN, WEEKDAY_SHORT
from .sql import MEMORY_TABLE

MONTH_NUMBERS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTH_NUMBERS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTH_NUMBERS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
# How people shorten a weekday in a chat ("last Fri", "since Tues": textutil.WEEKDAY_SHORT).
# "Mon", "Wed", "Sat" and "Sun" are words of their own in lower case ("on sun loungers", "I
# sat"), so those four are read capitalised only.
_WEEKDAY_SHORT = r"(?:Mon|Wed|Sat|Sun|(?i:tues?|thu(?:rs?)?|fri))"
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_YEAR = r"((?:19|20)\d\d)"
# Seasons by name, in English and the other languages notes are written in (a closed
# class): each to its English name.
SEASON_NAMES = {
    **{w: "spring" for w in ("spring", "frühling", "frühjahr", "primavera", "printemps", "lente", "voorjaar")},
    **{w: "summer" for w in ("summer", "sommer", "verano", "verão", "été", "estate", "zomer")},
    **{w: "autumn" for w in ("fall", "autumn", "herbst", "otoño", "outono", "automne", "autunno", "herfst", "najaar")},
    **{w: "winter" for w in ("winter", "invierno", "inverno", "hiver")},
}
_SEASON = "|".join(sorted(SEASON_NAMES, key=len, reverse=True))
# The start, middle or end of a year in those languages (their third, as "early" / "mid" /
# "late" in English).
_PART_OTHER_THIRD = {
    **{w: 0 for w in ("anfang", "principios", "comienzos", "inicio", "início", "começo", "début", "inizio", "begin")},
    **{w: 1 for w in ("mitte", "mediados", "meados", "mi", "metà", "midden")},
    **{w: 2 for w in ("ende", "finales", "final", "fin", "fim", "fine", "eind")},
}
# "final" only with its preposition ("final de 2024"): "the final 2024 report" is English.
_PART_OTHER = "|".join(sorted(set(_PART_OTHER_THIRD) - {"final"}, key=len, reverse=True)) + r"|final\s+d[eo]"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_HOLIDAY = (
    r"christmas\s+eve|christmas(?:\s+day)?|xmas|boxing\s+day|new\s+year'?s'?\s+eve|new\s+year'?s'?\s+day|"
    r"valentine'?s(?:\s+day)?|halloween|easter(?:\s+(?:sunday|monday))?|thanksgiving|fourth\s+of\s+july|independence\s+day"
)

DATE_PATTERNS = [
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    # 3/4/2023, 03.04.23, and "on 3/4" (a bare 3/4 is as often a fraction): month first
    # unless the first number cannot be a month.
    ("numeric", re.compile(r"(?<![\d/.])(\d{1,2})([/.])(\d{1,2})\2(\d{4}|\d{2})(?![\d/]|\.\d)")),
    ("numeric", re.compile(r"\b(?:on|by|since|until|till|before|after)\s+(\d{1,2})(/)(\d{1,2})()(?![\d/]|\.\d)", re.I)),
    ("day_month_year", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\.?,?\s+{_YEAR}\b", re.I)),
    ("month_day_year", re.compile(rf"\b{_MONTH}\.?\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    # "Christmas Eve", "Easter 2022", "Valentine's": a day of the calendar by its name.
    ("holiday", re.compile(rf"\b({_HOLIDAY})(?:\s*,?\s*{_YEAR})?\b", re.I)),
    # Part of a year or of a month: "the summer of 2022", "early 2023", "late May 2023",
    # "the end of March" (read as the whole year or month, they credited every line of it).
    ("season_year", re.compile(rf"\b({_SEASON})\s+(?:(?:of|de|del|do|da|di|van)\s+)?{_YEAR}\b", re.I)),
    (
        "part_month",
        re.compile(
            rf"\b(early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of)[\s-]+{_MONTH}\b\.?(?:,?\s+{_YEAR}\b)?", re.I
        ),
    ),
    ("part_year", re.compile(rf"\b(early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of)[\s-]+{_YEAR}\b", re.I)),
    # The same in the other languages notes are written in: "Anfang 2024", "a finales de
    # 2023", "début 2024", "no começo de 2024", "inizio 2024", "eind 2023".
    ("part_year", re.compile(rf"\b({_PART_OTHER})(?:\s+(?:de|del|do|da|di|van))?[\s-]+{_YEAR}\b", re.I)),
    ("month_year", re.compile(rf"\b{_MONTH}\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("day_month", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b", re.I)),
    ("month_day", re.compile(rf"\b{_MONTH}\.?\s+{_DAY}\b(?!\s*(?:,\s*)?\d)", re.I)),
    ("last_month_name", re.compile(rf"\b(last|this|in|during|since)\s+{_MONTH}\b", re.I)),
    ("year", re.compile(rf"\b(?:in|during|since|of|from|year)\s+{_YEAR}\b|\b{_YEAR}\b", re.I)),
    # How else people date what they tell (each as vague as it sounds): "the day before
    # yesterday", "the other day", "a couple of weeks ago", "a fortnight ago", "over the
    # weekend", "this coming Thursday", "on the 22nd".
    ("day_before_yesterday", re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.I)),
    ("other_day", re.compile(r"\bthe\s+other\s+(?:day|night|evening|morning)\b", re.I)),
    ("vague_ago", re.compile(r"\b(?:a\s+)?(couple|few|several)\s+(?:of\s+)?(day|week|month|year)s\s+(ago|back)\b", re.I)),
    ("vague_ahead", re.compile(r"\bin\s+(?:a\s+)?(couple|few|several)\s+(?:of\s+)?(day|week|month|year)s\b", re.I)),
    ("the_weekend", re.compile(r"\b(?:over|on|at|during)\s+the\s+weekend\b", re.I)),
    ("coming_weekday", re.compile(rf"\b(?:this\s+)?coming\s+({WEEKDAY_PATTERN})\b", re.I)),
    (
        "ordinal_day",
        re.compile(
            rf"\b(?:on|by|since|until|till|before|after|from)\s+the\s+(\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{_MONTH})", re.I
        ),
    ),
    (
        "relative_day",
        re.compile(r"\b(yesterday|today|tonight|this morning|this afternoon|this evening|last night|tomorrow)\b", re.I),
    ),
    (
        "relative_period",
        re.compile(r"\b(last|this|past|previous|next)\s+(week|weekend|month|year|summer|winter|spring|fall|autumn)\b", re.I),
    ),
    (
        "ago",
        re.compile(
            r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|fortnight|month|year)s?\s+ago\b", re.I
        ),
    ),
    ("last_weekday", re.compile(rf"\b(last|this|on|next|since)\s+({WEEKDAY_PATTERN})\b", re.I)),
    ("last_weekday", re.compile(rf"\b((?i:last|this|on|next|since))\s+({_WEEKDAY_SHORT})\b\.?")),
    # "the week before 9 June 2023", "the Friday after 3/4/2025": counted from the date named.
    (
        "anchored",
        re.compile(
            rf"\b(?:the\s+)?(day|night|week|weekend|month|{WEEKDAY_PATTERN})"
            r"\s+(before|after|prior\s+to)\b",
            re.I,
        ),
    ),
    (
        "ahead",
        re.compile(
            r"\bin\s+(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|fortnight|month|year)s?\b", re.I
        ),
    ),
]
# Every pattern above holds a digit, a month's name or one of these words.
_MAYBE_A_DATE = re.compile(
    rf"\d|\b{_MONTH}\b|\b(?:yesterday|today|tonight|tomorrow|night|morning|(?:week|weekend|month|year|day)s?|"
    rf"{WEEKDAY_PATTERN}|summer|winter|spring|fall|autumn|fortnights?|christmas|xmas|easter|halloween|valentine'?s|thanksgiving|"
    r"tues?|thu(?:rs?)?|fri|mon|wed|sat|sun)\b",
    re.I,
)
# What each alternative of _MAYBE_A_DATE but the digit holds, in lower case: a text in
# ASCII (where ignoring case is str.lower) that holds none of them can match only by a
# digit. A memory read for its dates (hundreds a question, mostly new to the caches) is
# tested with these substring searches in a few microseconds, where the regex took 44 on
# average (at 100k memories, 400 of them: 57-66 -> ... ms of CPU for a question's fetch).
_DATE_KEYS = (
    "jan feb mar apr may jun jul aug sep oct nov dec day night tomorrow morning week month year summer winter spring fall autumn "
    "christmas xmas easter halloween valentine thanksgiving tue thu fri mon wed sat sun"
).split()
_DIGIT = re.compile(r"[0-9]")


def _may_name_a_date(text: str) -> bool:
    """Whether _MAYBE_A_DATE would match: the same answer, faster for most texts."""
    if text.isascii():
        lowered = text.lower()
        if not any(key in lowered for key in _DATE_KEYS):
            return _DIGIT.search(text) is not None
    return _MAYBE_A_DATE.search(text) is not None


# "early", "mid" or "late" in a year or a month: its first, middle or last third.
_PART_THIRD = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
# The parts of years and months above are read (False: the year or month named with them is).
READ_PARTS = True
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
        if not slack_days:  # asked of hundreds of rows a question: no timedelta made for nothing
            return self.start <= day <= self.end
        return self.start - timedelta(days=slack_days) <= day <= self.end + timedelta(days=slack_days)


def _month_span(year: int, month: int, label: str) -> DateSpan:
    return DateSpan(label, date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def date_spans(question: str, *, today: date, nearest: bool = False) -> list[DateSpan]:
    """The dates and periods a question mentions, parsed offline. Relative ones
    ("yesterday", "last May", "two weeks ago") count from `today`. A day named without a
    year ("on 14 December") is the last one before `today`, or with `nearest` the one
    nearest it (a memory tells of plans as well as of what happened)."""
    spans: list[DateSpan] = []
    if not _may_name_a_date(question):
        return spans  # most memories name no date: one search instead of every pattern's
    taken: list[tuple[int, int]] = []

    def free(m) -> bool:
        return not any(m.start() < end and start < m.end() for start, end in taken)

    anchor = None
    for kind, pattern in DATE_PATTERNS:
        if kind in RELATIVE_KINDS and anchor is None:
            # "What did Ann do last weekend before April 10, 2023?": a relative phrase
            # counts from the day the question names, when it names one.
            anchor = next((s.start for s in spans if s.start is not None and s.start == s.end), today)
        if not READ_PARTS and kind in _PART_KINDS:
            continue
        for m in pattern.finditer(question):
            if not free(m):
                continue
            span = _anchored(m, anchor) if kind == "anchored" else _span_for(kind, m, anchor or today, nearest)
            if span is not None:
                spans.append(span)
                taken.append((m.start(), m.end()))
    return spans


_PART_KINDS = frozenset({"season_year", "part_year", "part_month"})
RELATIVE_KINDS = frozenset(
    {
        "day_before_yesterday",
        "other_day",
        "vague_ago",
        "vague_ahead",
        "the_weekend",
        "coming_weekday",
        "ordinal_day",
        "relative_day",
        "relative_period",
        "ago",
        "last_weekday",
        "anchored",
        "ahead",
    }
)


def _anchored(m, anchor: date) -> DateSpan | None:
    unit, direction = m.group(1).lower(), m.group(2).lower()
    sign = 1 if direction == "after" else -1
    label = f"the {unit} {direction} {anchor:%-d %B %Y}"
    if unit in ("day", "night"):
        day = anchor + timedelta(days=sign)
        return DateSpan(label, day, day)
    if unit == "week":
        first, last = (
            (anchor - timedelta(days=7), anchor - timedelta(days=1))
            if sign < 0
            else (anchor + timedelta(days=1), anchor + timedelta(days=7))
        )
        return DateSpan(label, first, last)
    if unit == "weekend":
        saturday = (
            anchor + timedelta(days=(5 - anchor.weekday()) % 7 or 7)
            if sign > 0
            else anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
        )
        if sign < 0 and saturday + timedelta(days=1) >= anchor:
            saturday -= timedelta(days=7)
        return DateSpan(label, saturday, saturday + timedelta(days=1))
    if unit == "month":
        first = (
            (anchor.replace(day=1) - timedelta(days=1)).replace(day=1)
            if sign < 0
            else (anchor.replace(day=1) + timedelta(days=32)).replace(day=1)
        )
        return _month_span(first.year, first.month, label)
    weekday = WEEKDAYS[unit]
    step = (weekday - anchor.weekday()) % 7 or 7 if sign > 0 else -((anchor.weekday() - weekday) % 7 or 7)
    day = anchor + timedelta(days=step)
    return DateSpan(label, day, day)


def _span_for(kind: str, m, today: date, nearest: bool = False) -> DateSpan | None:
    g = m.groups()
    if kind == "iso":
        day = _safe_date(int(g[0]), int(g[1]), int(g[2]))
        return DateSpan(day.strftime("%-d %B %Y"), day, day) if day else None
    if kind == "numeric":
        first, second, year_text = int(g[0]), int(g[2]), g[3]
        month, day_no = (first, second) if first <= 12 else (second, first)
        if year_text:
            year = int(year_text) + (2000 if len(year_text) == 2 else 0)
        else:
            year = today.year if (month, day_no) <= (today.month, today.day) else today.year - 1
        if not 1 <= month <= 12 or not (year_text or first <= 12 or second <= 12):
            return None
        day = _safe_date(year, month, day_no)
        return DateSpan(day.strftime("%-d %B %Y"), day, day) if day else None
    if kind in ("day_month_year", "month_day_year"):
        d, mon, y = (g[0], g[1], g[2]) if kind == "day_month_year" else (g[1], g[0], g[2])
        day = _safe_date(int(y), MONTH_NUMBERS[mon.lower()], int(d))
        return DateSpan(day.strftime("%-d %B %Y"), day, day) if day else None
    if kind == "season_year":
        season = SEASON_NAMES[g[0].lower()]
        first, last = SEASONS[season]
        year = int(g[1])
        end_year = year + (1 if first > last else 0)
        return DateSpan(f"{season} {year}", date(year, first, 1), date(end_year, last, calendar.monthrange(end_year, last)[1]))
    if kind == "part_year":
        word = g[0].lower()
        other = word.split()[0] if word.split()[0] in _PART_OTHER_THIRD else ""
        third = _PART_OTHER_THIRD[other] if other else _PART_THIRD[word.split()[-2 if word.endswith("of") else 0]]
        year = int(g[1])
        first = 1 + 4 * third
        label = ("early", "mid", "late")[third] if other else word
        return DateSpan(f"{label} {year}", date(year, first, 1), date(year, first + 3, calendar.monthrange(year, first + 3)[1]))
    if kind == "part_month":
        third = _PART_THIRD[g[0].split()[-2 if g[0].lower().endswith("of") else 0].lower()]
        month = MONTH_NUMBERS[g[1].lower()]
        if not g[2] and g[1] == "may":
            return None  # "get there early may be best": the verb, not the month
        if not g[2]:
            return DateSpan(f"{g[0].lower()} {calendar.month_name[month]}", month=month)
        year = int(g[2])
        length = calendar.monthrange(year, month)[1]
        first, last = (1, 10) if third == 0 else (11, 20) if third == 1 else (21, length)
        return DateSpan(f"{g[0].lower()} {calendar.month_name[month]} {year}", date(year, month, first), date(year, month, last))
    if kind == "month_year":
        month, year = MONTH_NUMBERS[g[0].lower()], int(g[1])
        return _month_span(year, month, f"{calendar.month_name[month]} {year}")
    if kind in ("day_month", "month_day"):
        d, mon = (g[0], g[1]) if kind == "day_month" else (g[1], g[0])
        month = MONTH_NUMBERS[mon.lower()]
        # "May 5" without a year: the most recent one, this year or last (or the nearest).
        year = today.year if (month, int(d)) <= (today.month, today.day) else today.year - 1
        day = _safe_date(year, month, int(d))
        if nearest and day is not None:
            ahead = _safe_date(year + 1, month, int(d))
            if ahead is not None and (ahead - today).days < (today - day).days:
                day = ahead
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
    if kind == "holiday":
        return _holiday(g[0], int(g[1]) if g[1] else None, today)
    if kind == "day_before_yesterday":
        day = today - timedelta(days=2)
        return DateSpan("the day before yesterday", day, day)
    if kind == "other_day":
        return DateSpan("the other day", today - timedelta(days=7), today - timedelta(days=1))
    if kind == "vague_ago":
        low, high = VAGUE_COUNTS[g[0].lower()]
        unit = UNIT_DAYS[g[1].lower()]
        return DateSpan(
            f"a {g[0].lower()} of {g[1].lower()}s ago", today - timedelta(days=high * unit), today - timedelta(days=low * unit)
        )
    if kind == "vague_ahead":
        low, high = VAGUE_COUNTS[g[0].lower()]
        unit = UNIT_DAYS[g[1].lower()]
        return DateSpan(
            f"in a {g[0].lower()} of {g[1].lower()}s", today + timedelta(days=low * unit), today + timedelta(days=high * unit)
        )
    if kind == "the_weekend":
        # The weekend just gone (or the one under way).
        saturday = today - timedelta(days=(today.weekday() - 5) % 7)
        return DateSpan("the weekend", saturday, saturday + timedelta(days=1))
    if kind == "coming_weekday":
        weekday = WEEKDAYS[g[0].lower()]
        day = today + timedelta(days=(weekday - today.weekday()) % 7 or 7)
        return DateSpan(f"this coming {g[0].capitalize()}", day, day)
    if kind == "ordinal_day":
        # "on the 22nd": the 22nd nearest the day it is said of, this month, the last or the next.
        number = int(g[0])
        first = today.replace(day=1)
        months = [(first - timedelta(days=1)).replace(day=1), first, (first + timedelta(days=32)).replace(day=1)]
        days = [d for d in (_safe_date(m.year, m.month, number) for m in months) if d is not None]
        if not days:
            return None
        day = min(days, key=lambda d: (abs((d - today).days), d > today))
        return DateSpan(day.strftime("%-d %B %Y"), day, day)
    if kind == "relative_day":
        word = g[0].lower()
        day = today + timedelta(days={"yesterday": -1, "last night": -1, "tomorrow": 1}.get(word, 0))
        return DateSpan(word, day, day)
    if kind == "relative_period":
        which, unit = g[0].lower(), g[1].lower()
        if which == "next":
            return _next_period(unit, today)
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
        days = UNIT_DAYS[unit] * n
        center = today - timedelta(days=days)
        # "Two years ago" is vague: allow about a sixth of the distance either way.
        spread = max(1, days // 6) if unit != "day" else 0
        return DateSpan(
            f"{n} {unit}{'s' if n != 1 else ''} ago", center - timedelta(days=spread), center + timedelta(days=spread)
        )
    if kind == "last_weekday":
        name = WEEKDAY_SHORT.get(g[1].lower(), g[1].lower())
        weekday = WEEKDAYS[name]
        if g[0].lower() == "next":
            day = today + timedelta(days=(weekday - today.weekday()) % 7 or 7)
        else:
            day = today - timedelta(days=(today.weekday() - weekday) % 7 or 7)
        return DateSpan(f"{g[0].lower()} {name.capitalize()}", day, day)
    if kind == "ahead":
        n = int(g[0]) if g[0].isdigit() else NUMBER_WORDS[g[0].lower()]
        unit = g[1].lower()
        days = UNIT_DAYS[unit] * n
        spread = max(1, days // 6) if unit != "day" else 0
        center = today + timedelta(days=days)
        return DateSpan(f"in {n} {unit}{'s' if n != 1 else ''}", center - timedelta(days=spread), center + timedelta(days=spread))
    return None


def _next_period(unit: str, today: date) -> DateSpan:
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=1)
        start = monday + timedelta(days=5) if unit == "weekend" else monday
        return DateSpan(f"next {unit}", start, monday + timedelta(days=6))
    if unit == "month":
        first = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        return _month_span(first.year, first.month, "next month")
    if unit == "year":
        return DateSpan(f"next year ({today.year + 1})", date(today.year + 1, 1, 1), date(today.year + 1, 12, 31))
    first, last = SEASONS[unit]
    year = today.year if date(today.year, first, 1) > today else today.year + 1
    end_year = year + (1 if first > last else 0)
    return DateSpan(f"next {unit}", date(year, first, 1), date(end_year, last, calendar.monthrange(end_year, last)[1]))


UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
# "a couple of weeks ago" is one to three weeks back, "a few" two to five, "several" three to eight.
VAGUE_COUNTS = {"couple": (1, 3), "few": (2, 5), "several": (3, 8)}


def _easter(year: int) -> date:
    """Easter Sunday (the Gregorian computus, Meeus/Jones/Butcher)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l = (32 + 2 * e + 2 * i - h - k) % 7  # noqa: E741 (the algorithm's own names)
    m = (a + 11 * h + 22 * l) // 451
    month, day = divmod(h + l - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _holiday_in(name: str, year: int) -> date:
    if name.startswith("easter"):
        return _easter(year) + timedelta(days=1 if name.endswith("monday") else 0)
    if name == "thanksgiving":  # the fourth Thursday of November (the United States')
        first = date(year, 11, 1)
        return first + timedelta(days=(3 - first.weekday()) % 7 + 21)
    for key, (month, day) in FIXED_HOLIDAYS.items():
        if name.startswith(key):
            return date(year, month, day)
    return date(year, 12, 25)  # christmas, xmas


FIXED_HOLIDAYS = {
    "christmas eve": (12, 24),
    "boxing": (12, 26),
    "valentine": (2, 14),
    "halloween": (10, 31),
    "fourth": (7, 4),
    "independence": (7, 4),
}


def _holiday(text: str, year: int | None, today: date) -> DateSpan:
    name = " ".join(text.lower().replace("'", "").split())
    if name.startswith("new year"):
        # New Year's Eve is the last day of a year, New Year's Day the first of the next.
        eve = name.endswith("eve")
        days = [
            date(y, 12, 31) if eve else date(y, 1, 1) for y in ((year,) if year else (today.year - 1, today.year, today.year + 1))
        ]
    else:
        days = [_holiday_in(name, y) for y in ((year,) if year else (today.year - 1, today.year, today.year + 1))]
    # Without a year, the one nearest the day it is said of (the past one on a tie).
    day = min(days, key=lambda d: (abs((d - today).days), d > today))
    return DateSpan(f"{text} {day.year}", day, day)


def date_phrases(question: str) -> list[str]:
    return [m.group(0) for _, pattern in DATE_PATTERNS for m in pattern.finditer(question or "")]


# What a memory's own words date, read from its first this many characters.
EVENT_TEXT_CHARS = 1000


# A state told with how long it has lasted ("I've been surfing for five years", "I've had
# them for 3 years", "it's been a favourite of mine for like 3 years") dates when it began:
# that many units before the day it was said, as "five years ago" would. Only in the
# perfect ('ve / have / has / 's been / been: a closed class), which says the time runs up
# to the day it was said; "we were there for two weeks" and "I had it for a year" (over
# before the day it was said) date nothing. Read in a memory's words only: in a question
# "for three years" is no date to search.
READ_DURATIONS = True
_COUNT = (
    r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|a\s+couple\s+of|a\s+few|several)\s+"
    r"(day|week|month|year|decade)s?\b"
)
_ABOUT = r"(?:about\s+|around\s+|almost\s+|nearly\s+|over\s+|like\s+|the\s+(?:last|past)\s+)?"
_DURATION = re.compile(rf"(?:'ve|\bhave|\bhas|'s\s+been|\bbeen)\b[^.!?;]{{0,60}}?\bfor\s+{_ABOUT}{_COUNT}", re.I)
# The same length told on its own, as the answer to "How long have you...?" ("Seven years
# now, and I still love it"; "now" says the time runs up to the day it was said), or as
# "it's been two years since I quit": both date when the state began.
_DURATION_NOW = re.compile(
    rf"(?<!for\s)(?<!for\s\s)\b{_COUNT}\s+now\b|\bit(?:'s|\s+has)\s+been\s+{_ABOUT}{_COUNT}(?!\s+(?:ago|since\s+we))",
    re.I,
)


_COUNT_WORDS = {**NUMBER_WORDS, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20}


def duration_spans(text: str, said_on: date) -> list[DateSpan]:
    """When each state the text tells with its length ("for five years") began."""
    out = []
    matches = [*_DURATION.finditer(text), *_DURATION_NOW.finditer(text)]
    for m in matches:
        count, unit = (g.lower() for g in m.groups() if g is not None)
        if unit == "decade":
            unit, scale = "year", 10
        else:
            scale = 1
        if count.isdigit() or count in _COUNT_WORDS:
            low = high = (int(count) if count.isdigit() else _COUNT_WORDS[count]) * scale
        else:
            low, high = (scale * n for n in VAGUE_COUNTS[next(w for w in count.split() if w in VAGUE_COUNTS)])
        if unit == "day" and high > 0:
            first, last = said_on - timedelta(days=high), said_on - timedelta(days=low)
        else:
            days_low, days_high = UNIT_DAYS[unit] * low, UNIT_DAYS[unit] * high
            spread = max(1, days_low // 6)
            first, last = said_on - timedelta(days=days_high + spread), said_on - timedelta(days=max(0, days_low - spread))
        told = text[m.start(m.lastindex - 1) : m.end(m.lastindex) + text.startswith("s", m.end(m.lastindex))]
        span = DateSpan(f"began {told} before {said_on:%-d %B %Y}", first, last)
        if all((s.start, s.end) != (first, last) for s in out):
            out.append(span)
    return out


@lru_cache(maxsize=100_000)
def event_spans(text: str, said_on: date) -> tuple[DateSpan, ...]:
    """The times a memory's words name, counted from the day it was said: "yesterday" in a
    note of 8 May 2023 is 7 May 2023, "next month" June 2023. A month without a year is
    the one nearest that day ("in March", said in May, is this March; said in November,
    next March is as near as last: the past one is taken, as a memory mostly tells what
    happened)."""
    out = []
    for span in date_spans(text[:EVENT_TEXT_CHARS], today=said_on, nearest=True):
        if span.start is None:
            year = said_on.year if span.month <= said_on.month + 6 else said_on.year - 1
            span = _month_span(year, span.month, span.label)
        out.append(span)
    if READ_DURATIONS and any(key in text[:EVENT_TEXT_CHARS] for key in ("for ", " now", "been ")):
        out.extend(duration_spans(text[:EVENT_TEXT_CHARS], said_on))
    return tuple(out)


# What a memory's words date is worked out when it is written (Memory.save, bulk_create,
# migration 0018) and stored in its `event_dates`: recall reads hundreds of candidates a
# question, mostly new to event_spans' cache at 100k memories, and running the date
# patterns over those that name a time was the dearest part of a dated question's fetch.
# The stored value names what it was read from (the length and CRC-32 of the text's
# first EVENT_TEXT_CHARS, the day it was said): a row changed by any path that did not
# store it again (a bare queryset update, raw SQL) no longer agrees with its text and is
# read again, so a stale value is never used. The CRC is of the text after the reading's
# version (EVENT_READING): a value stored by an earlier reading of dates (one that knew
# fewer phrases) no longer agrees either; migrations 0021 and 0023 store them again.
EVENT_READING = "5:"


def stored_event_dates(text: str, said_on: date) -> str:
    """The `event_dates` a memory of this text said on this day stores."""
    head = (text or "")[:EVENT_TEXT_CHARS]
    spans = event_spans(head, said_on)
    listed = json.dumps([[s.label, s.start.toordinal(), s.end.toordinal()] for s in spans], separators=(",", ":"))
    return f"{len(head)} {_crc(head)} {said_on.toordinal()} {listed}"


def _crc(head: str) -> int:
    return zlib.crc32(head.encode("utf-8", "surrogatepass"), zlib.crc32(EVENT_READING.encode()))


def events_of(text: str, said_on: date, stored: str | None) -> tuple[DateSpan, ...]:
    """event_spans(text, said_on), from the memory's stored `event_dates` when they were
    made of this very text and day (text: the beginning of its words as read, at most
    EVENT_TEXT_CHARS)."""
    if stored:
        length, crc, day, listed = stored.split(" ", 3)
        if int(length) == len(text) and int(day) == said_on.toordinal() and int(crc) == _crc(text):
            return _listed_spans(listed)
    return event_spans(text, said_on)


@lru_cache(maxsize=100_000)
def _listed_spans(listed: str) -> tuple[DateSpan, ...]:
    if listed == "[]":
        return ()
    return tuple(DateSpan(label, date.fromordinal(a), date.fromordinal(b)) for label, a, b in json.loads(listed))


def event_dates_of(memory) -> str | None:
    """What Memory.event_dates holds for a memory as it is now (None: its time is not known)."""
    if memory.occurred_at is None:
        return None
    return stored_event_dates(memory.raw_text or "", local_day(memory.occurred_at, timezone.get_current_timezone()))


def _days(first: date, last: date) -> int:
    return (last - first).days + 1


def _overlap_share(question_span: DateSpan, event: DateSpan) -> float:
    """How much of the memory's time (`event`) falls in the question's: "yesterday" inside
    "in May" is all of it; "last year" against "in March 2022" a twelfth."""
    if question_span.start is None:
        ranges = [_month_span(y, question_span.month, "") for y in range(event.start.year, event.end.year + 1)]
    else:
        ranges = [question_span]
    inside = sum(max(0, _days(max(r.start, event.start), min(r.end, event.end))) for r in ranges)
    return min(1.0, inside / _days(event.start, event.end))


# A memory may tell of a time the question names after it ("last week", "two months ago")
# or before it ("next month"): the date arm reads memories said up to this many days
# either side of a span for such mentions, at most DATE_ARM_ROWS each side.
REFERS_BACK_DAYS = 62
DATE_ARM_ROWS = 300
# A month named without a year ("in May") means that month in any of the last few years.
MONTH_YEARS_BACK = 10


def date_pool(owner, spans: list[DateSpan], limit: int, today: date) -> list[int]:
    """The date arm: the owner's memories whose time falls in the spans: said in them, or
    said in the weeks around and naming a time in them ("yesterday", "last Friday",
    "on 3/4"; "next Tuesday", told ahead); those the date signal credits most first, then
    the most important."""
    ranges = []
    for span in spans:
        if span.start is None:
            # Whole ranges, not a month() of every row: the occurred_at index can serve them.
            years = range(today.year - MONTH_YEARS_BACK, today.year + 1)
            ranges.extend((s.start, s.end) for s in (_month_span(year, span.month, "") for year in years))
        else:
            ranges.append((span.start, span.end))
    inside = [(first, last + timedelta(days=1)) for first, last in ranges]
    after = [(last + timedelta(days=1), last + timedelta(days=1 + REFERS_BACK_DAYS)) for _, last in ranges]
    before = [(first - timedelta(days=REFERS_BACK_DAYS), first) for first, _ in ranges]
    rows = (
        _rows_within(owner, inside, "importance DESC, occurred_at DESC", limit)
        # The weeks around, nearest first (what is read of them is bounded).
        + _rows_within(owner, after, "occurred_at ASC", DATE_ARM_ROWS)
        + _rows_within(owner, before, "occurred_at DESC", DATE_ARM_ROWS)
    )
    scored = {}
    tz = timezone.get_current_timezone()
    for pk, text, occurred_at, importance, stored in rows:
        day = local_day(occurred_at, tz)
        events = events_of(text or "", day, stored)
        if not events and not any(s.contains(day, DATE_SLACK_DAYS) for s in spans):
            continue  # said in the weeks around and naming no time: nothing to gain (date_signal's 0)
        gain, _ = date_signal(spans, day, events)
        if gain >= W_DATE_NEAR:
            scored[pk] = (-gain, -(importance or 0.0), -day.toordinal(), pk)
    return [key[-1] for key in sorted(scored.values())[:limit]]


def _rows_within(owner, ranges: list[tuple[date, date]], order: str, limit: int) -> list[tuple]:
    """(id, text's beginning, occurred_at, importance, event_dates) of the owner's readable memories that
    occurred in any of the half-open day ranges."""
    where, params = [], []
    for first, end in ranges:
        where.append("(occurred_at >= %s AND occurred_at < %s)")
        for day in (first, end):
            params.append(
                connection.ops.adapt_datetimefield_value(timezone.make_aware(datetime.combine(day, datetime.min.time())))
            )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, substr(raw_text, 1, {EVENT_TEXT_CHARS}), occurred_at, importance, event_dates FROM {MEMORY_TABLE} "
            f"WHERE ({' OR '.join(where)}) AND {READABLE_BY_DATE_SQL} ORDER BY {order} LIMIT %s",
            [*params, owner.pk, limit],
        )
        return cursor.fetchall()


def _aware(value) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if timezone.is_aware(value) else timezone.make_aware(value, UTC)


def local_day(value, tz) -> date:
    """The day in time zone `tz` of a time as the database hands it over (text on SQLite,
    an aware datetime on PostgreSQL). Recall asks it of hundreds of rows a question, the
    same few thousand over and over: timezone.localtime looks the current zone up on every
    call, and SQLite's text is parsed each time; the caller looks the zone up once."""
    return _days_in(tz)(value)


@lru_cache(maxsize=16)
def _days_in(tz):
    # A cache per zone, keyed by the time alone: a key that holds the zone (an object the
    # garbage collector tracks) is never untracked, so each new row's stayed on the
    # collector's books. At 100k memories they were 290 of the 300 objects a question left
    # alive, and the full collections they brought on (one every ~30 questions, 50-70 ms
    # of CPU each at 120,000 objects, more as the cache fills) were a recall's slowest.
    @lru_cache(maxsize=100_000)
    def day(value) -> date:
        return _aware(value).astimezone(tz).date()

    return day


# The date signal: the memory's time falls in a period the question names, or close to it.
W_DATE = 0.35
W_DATE_NEAR = 0.15
W_DATE_MENTION = 0.2
DATE_SLACK_DAYS = 7


def date_signal(spans: list[DateSpan], day: date, events: tuple[DateSpan, ...] = ()) -> tuple[float, str]:
    """What a memory said on `day`, whose words name the times `events`, gains from the
    question's dates, and the reason. Its day counts as its time (a note is mostly about
    its day), and so does each time its words name, by how much of that time falls in
    the question's (a memory of "yesterday" inside "in May" has all its time there, one
    of "last year" against "in March" a twelfth)."""
    inside = next((s for s in spans if s.contains(day)), None)
    near = inside or next((s for s in spans if s.contains(day, DATE_SLACK_DAYS)), None)
    best, reason = 0.0, ""
    if inside:
        best = W_DATE
        reason = f"occurred on {inside.label}" if inside.start and inside.start == inside.end else f"occurred in {inside.label}"
    elif near:
        best, reason = W_DATE_NEAR, f"occurred near {near.label}"
    for event in events:
        for span in spans:
            share = _overlap_share(span, event)
            # Words that name a time holding the question's, however vaguely ("two weeks
            # ago" is one day of five), tell more than being said near it does.
            gain = max(W_DATE * share, W_DATE_MENTION) if share > 0 else 0.0
            if gain > best + 1e-9:
                best, reason = gain, f"tells of {span.label} ('{event.label}', said {day:%-d %B %Y})"
    return best, reason


# A question that asks for a time ("When did...", "In which month...", "What year...",
# "How long ago..."): interrogatives and units of time, closed classes.
_ASKS_TIME = re.compile(
    r"^\W*(?:(?:in|on|during|around|about|approximately|roughly|by)\s+)?"
    r"(?:when\b|(?:what|which)\s+(?:year|month|day|date|time|week|weekend|season)s?\b|how\s+long\s+ago\b|since\s+when\b)",
    re.I,
)
# The units such a question names are what it asks, not what the answer says in words.
TIME_UNITS = frozenset("year years month months day days date dates time week weeks weekend season".split())


# A memory whose words name a time gains this for a question that asks for one ("When
# did Ann...?" is answered by the line that dates what she did). Measured by folds on
# LoCoMo (0.05, 0.1): it helped two conversations at k=5 and cost the third at k=10, so
# it is off; 0 also spares reading the candidates' words for dates.
W_DATED = 0.0
# The same, as a share of the line's own relevance: among the mentions of what the
# question names (planned, done, recalled later), the one that dates it goes first, and a
# dated line that matches nothing of the question gains nothing. Only for a line whose
# time lies on the side of its day the question's verb asks about (DATED_TENSE): "When
# did...?" the one that tells it as done ("yesterday", "last week"), "When is ... going
# to...?" the one that tells it ahead ("next month"). Measured on LoCoMo dev by
# conversation (0.1, 0.2 with and without the tense; CHANGELOG, round 10): with the tense
# at 0.2 no fold lost at k = 5, 10 or 50, one question of conv-26 went from 25th to 27th,
# and the temporal questions' evidence rose within the first places (R@3 82.2 -> 83.9);
# without the tense it cost our own conversations at k = 5. 0: off.
DATED_LIFT = 0.2
DATED_TENSE = True

# What a time question's verb says of the time it asks: past ("When did / was / had"),
# ahead ("When will / is ... going to / planning"), or either. Auxiliaries: a closed class.
_AHEAD = re.compile(r"\b(?:will|shall|going\s+to|planning|plans?|due|upcoming|next)\b", re.I)
_PAST = re.compile(r"\b(?:did|was|were|had|has|have)\b", re.I)


# "How long has Nate had his turtles?" asks for a time too: since when a state has held,
# told as "I've had them for three years" or "since 2019". Only in the perfect (has /
# have / had), where the time runs up to the day it was said; "How long did the drive
# take?" asks for a length, not a time.
ASK_HOW_LONG = True
_HOW_LONG = re.compile(r"^\W*how\s+long\s+(?:has|have|had)\b", re.I)


# "How many weeks passed between ...?", "How many years ago did ...?", "How many months
# after the wedding ...?": a count of a unit of time reckoned from dates (and "ago", told
# apart from "How many times ...?", which counts events).
ASK_HOW_MANY_UNITS = True
_HOW_MANY_UNITS = re.compile(r"^\W*how\s+many\s+(?:days|weeks|months|years)\b", re.I)


def asks_time(question: str) -> bool:
    return (
        bool(_ASKS_TIME.search(question or ""))
        or (ASK_HOW_LONG and bool(_HOW_LONG.search(question or "")))
        or (ASK_HOW_MANY_UNITS and bool(_HOW_MANY_UNITS.search(question or "")))
    )


def time_asked(question: str) -> str:
    """ "past", "ahead" or "" (either) for a question that asks for a time."""
    if _AHEAD.search(question or ""):
        return "ahead"
    if _PAST.search(question or ""):
        return "past"
    return ""


def told_as(events: tuple[DateSpan, ...], said_on: date) -> set[str]:
    """Which sides of the day it was said the times a line names lie on: "past" for
    "yesterday" or "last week", "ahead" for "next month", both for "today" (what is
    told on its day happens then)."""
    sides = set()
    for event in events:
        if event.start is None or event.end is None:
            continue
        if event.start <= said_on:
            sides.add("past")
        if event.end >= said_on:
            sides.add("ahead")
    return sides
