"""Recall: which memories and consolidations the model reads for a question.

Pure selection code (database reads, no model), so every strategy can be measured on
its own (see `manage.py evaluate`). A strategy takes the owner, the question and a
budget and returns ranked memories, each with the reasons it was picked.

Strategies:
- `recent`: the original design, the k newest memories whatever the question.
- `hybrid`: lexical relevance (the full-text index in search.py) combined with what else
  the store knows: dates the question names, entities and topics, importance, recency,
  the turns around a hit in the same source, memories linked to a hit, and the
  consolidations over what was found.
"""

from __future__ import annotations

import calendar
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from . import currency, embeddings, search
from .embeddings import index as vector_index
from .llm.base import AnswerContext, InsightNote, MemoryNote
from .llm.offline import NOT_ENTITIES
from .models import Consolidation, Memory, MemoryLink
from .textutil import STOPWORDS, estimate_tokens, fold, sentences, stem, words

log = logging.getLogger(__name__)

RECENT_CONSOLIDATIONS = 10
# Relevant memories are the wordier ones; hybrid keeps its context no dearer than the
# original's (the newest k) by pacing: its first FULL_TEXT_RANKS memories are shown whole,
# and below them a memory whose text is longer than BRIEF_CHARS is shown by its summary
# whenever showing it whole would lift the running cost above the owner's typical memory
# (measured on the newest ones, the memories the original design reads).
FULL_TEXT_RANKS = 5
BRIEF_CHARS = 100
TYPICAL_SAMPLE = 50
# Consolidations the hybrid strategy adds next to its memories.
HYBRID_CONSOLIDATIONS = 5
# Context the model reads at most; the original design had no limit (50 memories of up to
# 4000 characters each). A setting when there is one.
DEFAULT_MAX_CONTEXT_TOKENS = 16_000


@dataclass
class Recalled:
    memory: Memory
    score: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class RecallResult:
    strategy: str
    memories: list[Recalled]
    consolidations: list[Consolidation]
    #: Why each consolidation was picked, by consolidation id.
    consolidation_reasons: dict[int, list[str]] = field(default_factory=dict)
    #: Memories shown by their summary alone (see memory_note's `brief`).
    brief_ids: frozenset[int] = frozenset()
    _context: AnswerContext | None = field(default=None, repr=False, compare=False)
    _tokens: int | None = field(default=None, repr=False, compare=False)

    @property
    def memory_ids(self) -> list[int]:
        return [r.memory.pk for r in self.memories]

    def to_context(self) -> AnswerContext:
        """What the model reads; built once (the result is not changed after recall) and
        with the insights' source ids read in one query for all of them."""
        if self._context is None:
            sources: dict[int, list[int]] = defaultdict(list)
            if self.consolidations:
                through = Consolidation.sources.through.objects.filter(
                    consolidation_id__in=[c.pk for c in self.consolidations], memory__in=Memory.objects.all()
                )
                for cid, mid in through.values_list("consolidation_id", "memory_id").order_by("memory_id"):
                    sources[cid].append(mid)
            self._context = AnswerContext(
                memories=[memory_note(r.memory, brief=r.memory.pk in self.brief_ids) for r in self.memories],
                consolidations=[
                    InsightNote(id=c.pk, summary=c.summary, insight=c.insight, source_ids=tuple(sources[c.pk]))
                    for c in self.consolidations
                ],
                date_matches=tuple(
                    r.memory.pk for r in self.memories if any(x.startswith(("occurred in ", "occurred on ")) for x in r.reasons)
                ),
            )
        return self._context

    @property
    def context_tokens(self) -> int:
        if self._tokens is None:
            self._tokens = estimate_tokens(self.to_context().render())
        return self._tokens


def memory_note(memory: Memory, *, max_chars: int = 4000, brief: bool = False) -> MemoryNote:
    """What the model reads of a memory. Nothing is said twice: an extractive summary
    (every sentence of it is in the text) is the text itself, and entities and topics the
    text already shows in so many words are left out; they cost tokens and add nothing.
    `brief`: a text longer than its summary is left out, the summary stands for it, and
    so are the topics (key words of that text); for the lower ranks of a context, which
    the model reads for leads, not for detail."""
    text = memory.raw_text[:max_chars]
    summary = memory.summary
    if brief and summary.strip() and len(text) > BRIEF_CHARS and len(summary) < len(text):
        text = ""
    topics = () if brief else memory.topics
    if text and summary_in_text(summary, memory.raw_text) and len(text) == len(memory.raw_text):
        summary = text  # AnswerContext.render prints a text equal to its summary once
    shown = f" {_lower_words(summary if summary == text else f'{summary} {text}')} "
    return MemoryNote(
        id=memory.pk,
        summary=summary,
        text=text,
        source=memory.source,
        entities=tuple(e for e in map(str, memory.entities) if f" {_plain(e)} " not in shown),
        topics=tuple(t for t in map(str, topics) if f" {_plain(t)} " not in shown),
        importance=memory.importance,
        occurred_at=memory.occurred_at,
        valid_until=memory.valid_until if memory.outdated_by_id else None,
        outdated_by=memory.outdated_by_id,
    )


def summary_in_text(summary: str, text: str) -> bool:
    """Whether the summary only repeats sentences of the text (an extractive summary,
    possibly cut short with an ellipsis)."""
    if not summary.strip():
        return True
    flat = " ".join(text.split())
    return all(" ".join(s.rstrip("…").split()) in flat for s in sentences(summary))


_NON_WORD = re.compile(r"[\W_]+")


def _lower_words(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()


_plain = _lower_words


# Read-your-writes: a memory saved a moment ago and still waiting for extraction is read
# too, by its raw text, and marked pending (see recall()); an agent that adds and then asks
# finds it. Failed ones are not: their text is kept for a retry, not vouched for.
READABLE_STATUSES = (Memory.Status.READY, Memory.Status.PENDING)
PENDING_REASON = "pending: saved, not extracted yet (found by its text)"


def readable_memories(owner):
    """The memories recall may ever return: the owner's, extracted and ready (or pending),
    live (the default manager leaves out deleted and superseded ones), not a near-duplicate,
    and not expired."""
    return Memory.objects.filter(owner=owner, status__in=READABLE_STATUSES, duplicate_of__isnull=True).filter(currency.not_expired())


def usable_consolidations(owner):
    """The owner's consolidations recall may use: not retired, no source gone."""
    return Consolidation.objects.filter(owner=owner).current()


def recall_recent(*, owner, question: str, k: int, now: datetime | None = None) -> RecallResult:
    """The original design: the k newest memories and the ten newest consolidations,
    whatever the question."""
    memories = readable_memories(owner).order_by("-created_at", "-id")[:k]
    consolidations = usable_consolidations(owner).order_by("-created_at", "-id")[:RECENT_CONSOLIDATIONS]
    return RecallResult(
        strategy="recent",
        memories=[Recalled(m, score=0.0, reasons=["recent"]) for m in memories],
        consolidations=list(consolidations),
    )


# --- Dates a question names ---------------------------------------------------------

MONTH_NUMBERS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTH_NUMBERS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTH_NUMBERS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

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
    ("relative_period", re.compile(r"\b(last|this|past|previous)\s+(week|weekend|month|year|summer|winter|spring|fall|autumn)\b", re.I)),
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
        n = int(g[0]) if g[0].isdigit() else _NUMBER_WORDS[g[0].lower()]
        unit = g[1].lower()
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
        center = today - timedelta(days=days)
        # "Two years ago" is vague: allow about a sixth of the distance either way.
        spread = max(1, days // 6) if unit != "day" else 0
        return DateSpan(f"{n} {unit}{'s' if n != 1 else ''} ago", center - timedelta(days=spread), center + timedelta(days=spread))
    if kind == "last_weekday":
        weekday = WEEKDAYS[g[1].lower()]
        back = (today.weekday() - weekday) % 7 or 7
        day = today - timedelta(days=back)
        return DateSpan(f"{g[0].lower()} {g[1].capitalize()}", day, day)
    return None


# --- Hybrid ---------------------------------------------------------------------------

# Weights of the hybrid ranking, tuned on the LoCoMo dev set (manage.py evaluate) and on
# the hand-made stores in tests/test_recall.py.
W_DATE = 0.35  # the memory happened in a period the question names
W_DATE_NEAR = 0.15  # ... or within DATE_SLACK_DAYS of it
DATE_SLACK_DAYS = 7
W_ENTITY = 0.08  # per question word that is one of the memory's entities or topics
MAX_ENTITY_BONUS = 0.2
W_SPEAKER = 0.1  # the memory is in the words of a person the question names ("Ann: ...")
OTHER_SPEAKER = 0.6  # ... and a line of someone else's, when it names one, weighs this much
SPEAKER_KEEP_RANK = 3  # ... but the question's best match stays among the first this many
IMPORTANCE_SPAN = 0.3  # importance 0 -> x0.85, 0.5 -> x1.0, 1 -> x1.15
W_RECENT = 0.05
RECENT_HALF_LIFE_DAYS = 365
W_NEIGHBOUR = 0.5  # share of a hit's score a turn next to it gets (halved per step away)
W_LINK = 0.4  # share of a hit's score a memory linked to it gets
W_AFTER = 1.5  # a turn after a hit (its reply) gets this much of W_NEIGHBOUR, one before it 2 - W_AFTER
NEIGHBOUR_WINDOW = 2  # turns either side in a "source:position" group (see source_group)
SEEDS = 25  # hits whose neighbours and links are brought in
FEEDBACK_DOCS = 10  # best matches whose key words (topics) are searched for again (0: off)
FEEDBACK_TERMS = 5  # ... that many of them, those of the best-scored matches first
FEEDBACK_POOL = 50  # feedback finds considered
W_FEEDBACK = 0.5  # a feedback find's relevance, relative to a direct match's
IMPORTANT = 0.7  # importance from which "important" is given as a reason
# Fusion of the lexical and meaning arms (see fuse): each arm's list counts by rank.
RRF_K = 10  # a smaller k trusts the first ranks of each arm more
W_LEXICAL_ARM = 1.0
W_MEANING_ARM = 1.0
MEANING_POOL = 150  # memories the meaning arm hands over
MEANING_REASON_RANKS = 50  # "close in meaning" is said of the arm's first this many
# A month named without a year ("in May") means that month in any of the last few years.
MONTH_YEARS_BACK = 10

# Recall reads memories with plain SQL: a few hundred rows a question, where the ORM's
# query building and row conversion cost more than the database does.
_MEMORY_TABLE = Memory._meta.db_table
_LINK_TABLE = MemoryLink._meta.db_table
_READABLE_SQL = (
    "owner_id = %s AND status IN ('ready', 'pending') AND deleted_at IS NULL AND superseded_by_id IS NULL AND duplicate_of_id IS NULL"
)
# The same filter with its columns wrapped in no-op expressions, so SQLite's planner walks
# the occurred_at index (a few hundred rows of a period) rather than an owner index (all
# of the owner's memories).
_READABLE_BY_DATE_SQL = (
    "owner_id + 0 = %s AND status || '' IN ('ready', 'pending') AND deleted_at IS NULL "
    "AND superseded_by_id + 0 IS NULL AND duplicate_of_id + 0 IS NULL"
)


@dataclass(slots=True)
class _Question:
    """What the hybrid ranking knows of the question."""

    stems: set[str]
    spans: list[DateSpan]
    now: datetime
    #: Speakers of transcript lines ("Ann: ...") whom the question names.
    speakers: frozenset[str] = frozenset()


@dataclass(slots=True)
class _Candidate:
    id: int
    source: str
    importance: float
    occurred_at: datetime
    keys: frozenset[str]  # stems of the memory's entities and topics
    topics: object  # as the database hands them over (JSON text or a list); feedback reads them
    speaker: str = ""  # stem of the name a "Name: ..." text opens with
    relevance: float = 0.0
    via_feedback: bool = False  # found by feedback words, not by the question's own
    lexical: bool = False  # found by the full-text arm
    meaning_rank: int | None = None  # its place in the meaning arm's list (0 = closest)
    date_reason: str = ""
    base: float = 0.0
    bonus: float = 0.0
    reasons: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.base + self.bonus


_POSITION = re.compile(r"(.+):[A-Za-z]{0,3}\d{1,9}")


def source_group(source: str) -> tuple[str, bool]:
    """The sequence a memory belongs to: "chat:D3:14" is turn 14 of "chat:D3", "report.pdf:7"
    part 7 of "report.pdf" (a source that ends in a position), and the turns or parts
    around it are its neighbours. Any other source ("api", "notes", a URL) names no
    sequence: memories that share it are separate notes, and none lends another support."""
    m = _POSITION.fullmatch(source or "")
    if m:
        return m.group(1), True
    return source or "", False


# Recall stems the same few thousand words over and over; remembering them is most of its speed.
cached_stem = lru_cache(maxsize=100_000)(stem)


def terms(text: str) -> list[str]:
    """textutil.terms with the stem cache."""
    return [cached_stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


_SPLIT = re.compile(r"[\W_]+")


@lru_cache(maxsize=100_000)
def _keys_of(joined: str) -> frozenset[str]:
    return frozenset(cached_stem(fold(t)) for t in _SPLIT.split(joined.lower()) if t and t not in STOPWORDS)


@lru_cache(maxsize=100_000)
def _words_of(joined: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(search.query_words(joined)))


def _json_words(value) -> str:
    # Raw SQL hands JSON over as text on SQLite and as lists on PostgreSQL; the words
    # are what count, so either form will do.
    return value if isinstance(value, str) else " ".join(map(str, value or []))


def _keys(entities, topics) -> frozenset[str]:
    return _keys_of(f"{_json_words(entities)} {_json_words(topics)}")


# A transcript line, "Ann: ..." or "Ann Lee: ...": its speaker. Labels ("Note: ...",
# "Summary: ...") are not people.
_SPEAKER = re.compile(r"\s*([A-Z][A-Za-z'’.-]*(?: [A-Z][A-Za-z'’.-]*){0,2})\s*:\s")


@lru_cache(maxsize=100_000)
def _speaker(head: str | None) -> str:
    m = _SPEAKER.match(head or "")
    first = m.group(1).split()[0] if m else ""
    return cached_stem(first.lower()) if first and first not in NOT_ENTITIES else ""


def _aware(value) -> datetime:
    if isinstance(value, str):
        return _aware_text(value)
    return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)


@lru_cache(maxsize=100_000)
def _aware_text(value: str) -> datetime:
    # SQLite hands datetimes over as text; the same few thousand come back question after question.
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _in(values) -> str:
    return ", ".join(["%s"] * len(values))


def _fetch(owner, ids) -> dict[int, _Candidate]:
    ids = list(ids)
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, source, importance, occurred_at, entities, topics, substr(raw_text, 1, 40) FROM {_MEMORY_TABLE} "
            f"WHERE {_READABLE_SQL} AND id IN ({_in(ids)})",
            [owner.pk, *ids],
        )
        rows = cursor.fetchall()
    return {
        pk: _Candidate(pk, source or "", importance or 0.0, _aware(occurred_at), _keys(entities, topics), topics, _speaker(head))
        for pk, source, importance, occurred_at, entities, topics, head in rows
    }


def _date_pool(owner, spans: list[DateSpan], limit: int, today: date) -> list[int]:
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
            params.append(connection.ops.adapt_datetimefield_value(timezone.make_aware(datetime.combine(day, datetime.min.time()))))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {_MEMORY_TABLE} WHERE ({' OR '.join(where)}) AND {_READABLE_BY_DATE_SQL} "
            "ORDER BY importance DESC, occurred_at DESC LIMIT %s",
            [*params, owner.pk, limit],
        )
        return [row[0] for row in cursor.fetchall()]


def _newest(owner, limit: int, order: str) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {_MEMORY_TABLE} WHERE {_READABLE_SQL} ORDER BY {order} LIMIT %s", [owner.pk, limit])
        return [row[0] for row in cursor.fetchall()]


def _base_score(c: _Candidate, q: _Question) -> None:
    score = c.relevance
    if q.spans:
        day = timezone.localtime(c.occurred_at).date()
        inside = next((s for s in q.spans if s.contains(day)), None)
        near = inside or next((s for s in q.spans if s.contains(day, DATE_SLACK_DAYS)), None)
        if inside:
            score += W_DATE
            c.date_reason = f"occurred in {inside.label}" if inside.start != inside.end else f"occurred on {inside.label}"
        elif near:
            score += W_DATE_NEAR
            c.date_reason = f"occurred near {near.label}"
    if c.speaker and c.speaker in q.speakers:
        score += W_SPEAKER
    shared = q.stems & c.keys
    if shared:
        score += min(MAX_ENTITY_BONUS, W_ENTITY * len(shared))
    score *= 1 - IMPORTANCE_SPAN / 2 + IMPORTANCE_SPAN * min(1.0, max(0.0, c.importance))
    age_days = max(0.0, (q.now - c.occurred_at).total_seconds() / 86400)
    score += W_RECENT * 0.5 ** (age_days / RECENT_HALF_LIFE_DAYS)
    c.base = score


def _neighbours(owner, seeds: list[_Candidate]) -> dict[int, list[tuple[int, int]]]:
    """For each seed, the (memory id, steps away: negative before it, positive after) of the
    memories around it in its source."""
    if not seeds:
        return {}
    # Turns ingested together have consecutive ids; a small id window around each seed
    # finds them in one query.
    pad = NEIGHBOUR_WINDOW * 3
    window = sorted({pk for seed in seeds for pk in range(seed.id - pad, seed.id + pad + 1)})
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, source FROM {_MEMORY_TABLE} WHERE {_READABLE_SQL} AND id IN ({_in(window)}) ORDER BY id",
            [owner.pk, *window],
        )
        nearby = cursor.fetchall()
    by_group: dict[str, list[int]] = defaultdict(list)
    for pk, source in nearby:
        group, windowed = source_group(source or "")
        if windowed:
            by_group[group].append(pk)
    out: dict[int, list[tuple[int, int]]] = {}
    for seed in seeds:
        group, windowed = source_group(seed.source)
        same = by_group[group] if windowed else []
        width = NEIGHBOUR_WINDOW
        if seed.id not in same:
            continue
        at = same.index(seed.id)
        out[seed.id] = [(same[j], j - at) for j in range(max(0, at - width), min(len(same), at + width + 1)) if j != at]
    return out


def _links(seeds: list[_Candidate]) -> list[tuple[int, int, str]]:
    ids = [s.id for s in seeds]
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT from_memory_id, to_memory_id, relationship FROM {_LINK_TABLE} "
            f"WHERE from_memory_id IN ({_in(ids)}) OR to_memory_id IN ({_in(ids)}) LIMIT 500",
            [*ids, *ids],
        )
        rows = cursor.fetchall()
    seed_ids = set(ids)
    out = []
    for a, b, relationship in rows:
        if a in seed_ids:
            out.append((a, b, relationship))
        if b in seed_ids:
            out.append((b, a, relationship))
    return out


def recall_hybrid(*, owner, question: str, k: int, now: datetime | None = None) -> RecallResult:
    now = now or timezone.now()
    today = timezone.localdate(now)
    spans = date_spans(question or "", today=today)
    # Words that only name a date ("May", "2023") would match the text of unrelated
    # memories; the date signal handles them.
    date_words = {w for s in spans for w in search.query_words(s.label)} | set(search.query_words(" ".join(_date_phrases(question))))
    q_words = [w for w in search.query_words(question) if w not in date_words]
    q_stems = {cached_stem(fold(w)) for w in q_words}
    pool = max(150, 4 * k)

    lexical = _relevance(owner, q_words, pool)
    meaning = _meaning(owner, question, MEANING_POOL)
    relevance = fuse(lexical, meaning)
    ids = set(relevance)
    if spans:
        ids.update(_date_pool(owner, spans, k, today))
    fallback = not ids
    if fallback:
        # Nothing to match on (or nothing matched): the newest and the most important.
        ids.update(_newest(owner, pool, "created_at DESC, id DESC"))
        ids.update(_newest(owner, k, "importance DESC, id DESC"))

    candidates = _fetch(owner, ids)
    q = _Question(q_stems, spans, now, frozenset(c.speaker for c in candidates.values() if c.speaker in q_stems))
    meaning_rank = {pk: i for i, (pk, _) in enumerate(meaning)}
    for c in candidates.values():
        c.relevance = relevance.get(c.id, 0.0)
        c.lexical = c.id in lexical
        c.meaning_rank = meaning_rank.get(c.id)
        _base_score(c, q)
    expansion = _feedback(owner, candidates, q) if lexical else []
    seeds = sorted(candidates.values(), key=lambda c: -c.base)[:SEEDS]
    seeds = [s for s in seeds if s.relevance > 0 or s.date_reason]

    # The turns around a hit and the memories linked to it: what a question's words miss
    # (the reply to "what did you research?" rarely repeats "research").
    around = _neighbours(owner, seeds)
    links = _links(seeds)
    new = {pk for near in around.values() for pk, _ in near} | {b for _, b, _ in links}
    new -= candidates.keys()
    for pk, c in _fetch(owner, new).items():
        _base_score(c, q)
        candidates[pk] = c
    support: dict[int, tuple[float, str]] = {}

    def lend(seed: _Candidate, pk: int, share: float, reason: str) -> None:
        if pk not in candidates:
            return
        # Company never outranks the hit it came with: support lifts a memory at most to
        # just below the seed (the more support it is owed, the closer: the reply right
        # after a hit stays above the turn after that), and adds nothing to one that
        # already ranks above it.
        own = candidates[pk].base
        ceiling = seed.base * (0.98 + 0.01 * min(1.0, share))
        amount = min(share * seed.base, max(0.0, ceiling - own))
        if amount > support.get(pk, (0.0, ""))[0]:
            support[pk] = (amount, reason)

    for seed in seeds:
        for pk, steps in around.get(seed.id, []):
            where = "same conversation as"
            # What follows a hit is more often its answer than what precedes it.
            share = W_NEIGHBOUR * 0.5 ** (abs(steps) - 1) * (W_AFTER if steps > 0 else 2 - W_AFTER)
            lend(seed, pk, share, f"{where} #{seed.id}")
    by_id = {s.id: s for s in seeds}
    for a, b, relationship in links:
        lend(by_id[a], b, W_LINK, f"linked to #{a}: {relationship}"[:120])
    for pk, (amount, reason) in support.items():
        candidates[pk].bonus += amount
        candidates[pk].reasons.append(reason)

    if q.speakers:
        # A question about Ann is answered by what Ann said far more often than by what
        # others said to her. Only the final order: a line of theirs still brings Ann's
        # reply to it along. But the question's best match keeps a place among the first
        # SPEAKER_KEEP_RANK whoever said it: a line of someone else's that holds what is
        # asked ("What did Bob tell Ann about the job?") must not sink below Ann's small talk.
        best = max(candidates.values(), key=lambda c: (c.relevance, c.base), default=None)
        for c in candidates.values():
            if c.speaker and c.speaker not in q.speakers:
                c.bonus -= (1 - OTHER_SPEAKER) * c.score
        if best is not None and best.relevance > 0 and best.speaker and best.speaker not in q.speakers:
            above = sorted((c.score for c in candidates.values() if c is not best), reverse=True)
            if len(above) >= SPEAKER_KEEP_RANK - 1 and SPEAKER_KEEP_RANK > 1:
                floor = above[SPEAKER_KEEP_RANK - 2] - 1e-6
                if best.score < floor:
                    best.bonus += floor - best.score
    ranked = sorted(candidates.values(), key=lambda c: (-c.score, -c.occurred_at.timestamp(), -c.id))
    # What is true now: expired memories out, each superseded one below its successor.
    ranked = currency.prefer_current(ranked, owner=owner, now=now, spans=spans, fetch=lambda ids: _fetch_scored(owner, ids, q))
    chosen, brief = _within_budget(owner, ranked, k)
    matcher, feedback_matcher = _word_matcher(q_words), _word_matcher(expansion)
    recalled = []
    for c, memory in chosen:
        reasons = []
        # A feedback find may hold question words too (its direct match was just weaker).
        matched = _matched_words(memory, matcher) if c.lexical or c.via_feedback else []
        if matched:
            reasons.append("matches " + ", ".join(f"'{w}'" for w in matched))
        if c.via_feedback:
            shared = ", ".join(f"'{w}'" for w in _matched_words(memory, feedback_matcher))
            reasons.append(f"shares {shared} with the best matches" if shared else "shares words with the best matches")
        elif c.lexical and not matched:
            reasons.append("matches the question")
        if c.meaning_rank is not None and c.meaning_rank < MEANING_REASON_RANKS:
            reasons.append("close in meaning to the question")
        reasons.extend(r for r in (c.date_reason, *c.reasons) if r)
        if c.keys & q_stems:
            reasons.append("about " + ", ".join(f"'{w}'" for w in q_words if cached_stem(fold(w)) in c.keys)[:100])
        if memory.importance >= IMPORTANT:
            reasons.append(f"important ({memory.importance:.1f})")
        if fallback:
            reasons.append("recent")
        recalled.append(Recalled(memory, score=round(c.score, 4), reasons=reasons))
    consolidations, why = _consolidations(owner, recalled, q_words)
    return RecallResult(
        strategy="hybrid", memories=recalled, consolidations=consolidations, consolidation_reasons=why, brief_ids=brief
    )


def _fetch_scored(owner, ids, q: _Question) -> dict[int, _Candidate]:
    fetched = _fetch(owner, ids)
    for c in fetched.values():
        _base_score(c, q)
    return fetched


def _meaning(owner, question: str, pool: int) -> list[tuple[int, float]]:
    """The meaning arm: the owner's memories closest to the question by embedding, best
    first, with their cosine. Empty when embeddings are off, the owner has no vectors of
    the active model, or the backend fails (recall then stands on its lexical arm)."""
    if not question.strip():
        return []
    try:
        embedder = embeddings.get_embedder()
        if embedder is None:
            return []
        vector = embeddings.embed_question(embedder, question[:2000])
        return vector_index.search(owner_id=owner.pk, model=embedder.model, dim=embedder.dim, query=vector, limit=pool)
    except embeddings.EmbeddingError as exc:
        log.warning("recall without the meaning arm: %s", exc)
        return []


def fuse(lexical: dict[int, float], meaning: list[tuple[int, float]]) -> dict[int, float]:
    """One relevance per memory from the two arms, by rank (reciprocal-rank fusion): bm25
    and cosine are on scales that cannot be added (bm25 is unbounded and grows with the
    store; e5's cosines crowd between 0.7 and 0.9). Scaled so a memory first in both arms
    scores 1, as the best lexical match does when there is no meaning arm.

    With no meaning arm, the lexical relevance is returned as it is: recall with
    embeddings off ranks exactly as it did before they existed."""
    if not meaning:
        return lexical
    lex_rank = {pk: i for i, pk in enumerate(sorted(lexical, key=lambda pk: -lexical[pk]))}
    top = (W_LEXICAL_ARM + W_MEANING_ARM) / (RRF_K + 1)
    out: dict[int, float] = defaultdict(float)
    for pk, rank in lex_rank.items():
        out[pk] += W_LEXICAL_ARM / (RRF_K + rank + 1)
    for rank, (pk, _) in enumerate(meaning):
        out[pk] += W_MEANING_ARM / (RRF_K + rank + 1)
    return {pk: value / top for pk, value in out.items()}


def _relevance(owner, query: list[str], pool: int) -> dict[int, float]:
    """Lexical relevance of the owner's best matches, scaled so the best is 1."""
    hits = search.lexical_search(owner=owner, query=query, limit=pool)
    top = max((h.score for h in hits), default=0.0)
    return {h.memory_id: (h.score / top if top > 0 else 0.0) for h in hits}


def _feedback(owner, candidates: dict[int, _Candidate], q: _Question) -> list[str]:
    """Pseudo-relevance feedback: the key words of the best matches stand for what the
    question means but does not say ("exercises" finds "yoga" and "kickboxing" once the
    best match mentions them). They are searched for in a second pass, whose finds join
    as weaker matches (W_FEEDBACK); a memory both passes found keeps the better of its
    two relevances. Returns the words searched for."""
    if not FEEDBACK_DOCS:
        return []
    best = sorted((c for c in candidates.values() if c.relevance > 0), key=lambda c: -c.base)[:FEEDBACK_DOCS]
    weight: dict[str, float] = defaultdict(float)
    for c in best:
        for w in _words_of(_json_words(c.topics)):
            if cached_stem(fold(w)) not in q.stems:
                weight[w] += c.base
    expansion = sorted(weight, key=lambda w: -weight[w])[:FEEDBACK_TERMS]
    if not expansion:
        return []
    more = _relevance(owner, expansion, FEEDBACK_POOL)
    candidates.update(_fetch(owner, more.keys() - candidates.keys()))
    for pk, r in more.items():
        c = candidates.get(pk)
        if c is not None and W_FEEDBACK * r > c.relevance:
            c.relevance, c.via_feedback = W_FEEDBACK * r, True
            _base_score(c, q)
    return expansion


def _date_phrases(question: str) -> list[str]:
    return [m.group(0) for _, pattern in DATE_PATTERNS for m in pattern.finditer(question or "")]


def _word_matcher(q_words: list[str]):
    """One regex for all question words: a word matches a text word that starts with its
    stem ("launch" finds "launched"), which is how the index matched it too."""
    if not q_words:
        return None
    stems = sorted({cached_stem(w) for w in q_words} | set(q_words), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(map(re.escape, stems)) + r")", re.I), q_words


def _matched_words(memory: Memory, matcher) -> list[str]:
    if matcher is None:
        return []
    regex, q_words = matcher
    text = f"{memory.raw_text} {memory.summary} {' '.join(map(str, memory.entities))} {' '.join(map(str, memory.topics))}"
    found = {m.lower() for m in regex.findall(text)}
    return [w for w in q_words if w in found or cached_stem(w) in found][:6]


def max_context_tokens() -> int:
    return int(getattr(settings, "MEMORY_RECALL_MAX_TOKENS", DEFAULT_MAX_CONTEXT_TOKENS))


def _within_budget(owner, ranked: list[_Candidate], k: int) -> tuple[list[tuple[_Candidate, Memory]], frozenset[int]]:
    """The best k that fit the token budget, and which of them are shown brief (see
    FULL_TEXT_RANKS). A memory too long for what is left is skipped, not truncated:
    shorter ones below it may still fit."""
    budget = max_context_tokens()
    head = ranked[: k + 10]
    # The first k are nearly always the ones shown; the spares only when one was too long.
    memories = Memory.objects.in_bulk([c.id for c in head[:k]])
    typical = _typical_cost(owner)
    chosen, brief, used = [], set(), 0
    for i, c in enumerate(head):
        if i == k:
            memories.update(Memory.objects.in_bulk([c.id for c in head[k:]]))
        memory = memories.get(c.id)
        if memory is None:
            continue
        cost = _cost(memory, brief=False)
        if len(chosen) >= FULL_TEXT_RANKS and used + cost > (len(chosen) + 1) * typical:
            short = _cost(memory, brief=True)
            if short < cost:
                cost = short
                brief.add(memory.pk)
        if used + cost > budget and chosen:
            brief.discard(memory.pk)
            continue
        chosen.append((c, memory))
        used += cost
        if len(chosen) == k:
            break
    return chosen, frozenset(brief)


def _cost(memory: Memory, *, brief: bool) -> int:
    """What showing the memory costs in context tokens; remembered until it is edited (a
    figure gone stale through a bare queryset update only shifts the pacing a little)."""
    key = (memory.pk, memory.updated_at, brief)
    cost = _COSTS.get(key)
    if cost is None:
        if len(_COSTS) > 100_000:
            _COSTS.clear()
        cost = _COSTS[key] = estimate_tokens(AnswerContext(memories=[memory_note(memory, brief=brief)]).render())
    return cost


_COSTS: dict[tuple, int] = {}


def _typical_cost(owner) -> float:
    """Mean context cost of the owner's newest memories. Remembered per owner until a
    newer memory arrives: the newest one's id is one indexed lookup, the costs are not."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, updated_at FROM {_MEMORY_TABLE} WHERE {_READABLE_SQL} ORDER BY created_at DESC, id DESC LIMIT 1", [owner.pk]
        )
        key = (owner.pk, *(cursor.fetchone() or (None, None)))
    if key not in _TYPICAL:
        rows = readable_memories(owner).order_by("-created_at", "-id")
        costs = [_cost(m, brief=False) for m in rows[:TYPICAL_SAMPLE]]
        if len(_TYPICAL) > 1000:
            _TYPICAL.clear()
        _TYPICAL[key] = sum(costs) / len(costs) if costs else float(max_context_tokens())
    return _TYPICAL[key]


_TYPICAL: dict[tuple, float] = {}


def _consolidations(owner, recalled: list[Recalled], q_words: list[str]) -> tuple[list[Consolidation], dict[int, list[str]]]:
    """Consolidations built over the chosen memories, and those whose text matches."""
    score: dict[int, float] = defaultdict(float)
    why: dict[int, list[str]] = defaultdict(list)
    usable = list(usable_consolidations(owner).values_list("id", flat=True)[:5000])
    if not usable:
        return [], {}
    chosen = {r.memory.pk: r.score for r in recalled}
    if chosen:
        through = Consolidation.sources.through.objects.filter(memory_id__in=list(chosen), consolidation_id__in=usable)
        built: dict[int, list[int]] = defaultdict(list)
        for cid, mid in through.values_list("consolidation_id", "memory_id"):
            built[cid].append(mid)
            score[cid] += chosen[mid]
        for cid, mids in built.items():
            why[cid].append("built from " + ", ".join(f"#{m}" for m in sorted(mids)[:5]))
    if q_words:
        # The longest words are the most specific; a LIKE per word keeps this portable.
        longest = sorted(q_words, key=len, reverse=True)[:4]
        where = Q()
        for w in longest:
            where |= Q(insight__icontains=w) | Q(summary__icontains=w)
        rows = usable_consolidations(owner).filter(where).values_list("id", "summary", "insight")[:200]
        q_stems = {cached_stem(w): w for w in q_words}
        for cid, summary, insight in rows:
            have = set(terms(f"{summary} {insight}"))
            matched = [w for s, w in q_stems.items() if s in have]
            if matched:
                score[cid] += len(matched) / len(q_stems)
                why[cid].append("matches " + ", ".join(f"'{w}'" for w in matched[:5]))
    best = sorted(score, key=lambda cid: -score[cid])[:HYBRID_CONSOLIDATIONS]
    objects = usable_consolidations(owner).in_bulk(best)
    return [objects[cid] for cid in best if cid in objects], {cid: why[cid] for cid in best if cid in objects}


STRATEGIES = {"hybrid": recall_hybrid, "recent": recall_recent}
DEFAULT_STRATEGY = "hybrid"


def recall(*, owner, question: str, strategy: str | None = None, k: int | None = None, now: datetime | None = None) -> RecallResult:
    strategy = strategy or settings.MEMORY_RECALL_STRATEGY or DEFAULT_STRATEGY
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown recall strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}.")
    k = max(1, min(int(k or settings.MEMORY_RECALL_K), 500))
    result = STRATEGIES[strategy](owner=owner, question=question or "", k=k, now=now)
    if settings.MEMORY_REVIEW_MODE:
        # New input waits for a person's approval before recall may read it.
        result.memories = [r for r in result.memories if r.memory.status != Memory.Status.PENDING]
    for r in result.memories:
        if r.memory.status == Memory.Status.PENDING:
            r.reasons.append(PENDING_REASON)
    return result
