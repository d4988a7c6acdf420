"""What the hybrid ranking knows of the question and of each memory an arm found, read
with plain SQL (a few hundred rows a question, where the ORM's query building and row
conversion cost more than the database does)."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache

from django.db import connection
from django.utils import timezone

from . import dates as _dates
from .dates import EVENT_TEXT_CHARS, DateSpan, events_of, local_day
from .readable import READABLE_SQL
from .current import FLAGGED_SQL
from .sql import MEMORY_TABLE, placeholders
from .speaker import speaker_of
from .words import keys


@dataclass(slots=True)
class Question:
    """What the hybrid ranking knows of the question."""

    stems: set[str]
    spans: list[DateSpan]
    now: datetime
    #: Speakers of transcript lines ("Ann: ...") whom the question names.
    speakers: frozenset[str] = frozenset()
    #: The question asks for a time ("When did...", "In which month...").
    asks_time: bool = False
    #: What the question's verb says of the time it asks: "past", "ahead" or "" (dates.time_asked).
    tense: str = ""
    #: The rows its word searches have read, by id (fetch makes candidates of them without reading them again).
    read: dict[int, tuple] = field(default_factory=dict)

    @property
    def reads_dates(self) -> bool:
        """The memories' own dates matter: their words are read for them (dates.event_spans)."""
        return bool(self.spans) or (self.asks_time and (_dates.W_DATED > 0 or _dates.DATED_LIFT > 0))


@dataclass(slots=True)
class Candidate:
    id: int
    source: str
    importance: float
    occurred_at: datetime
    keys: Set[str]  # stems of the memory's entities and topics (a frozenset, or words.StoredKeys)
    topics: object  # as the database hands them over (JSON text or a list); feedback reads them
    speaker: str = ""  # stem of the name a "Name: ..." text opens with
    relevance: float = 0.0
    via_feedback: bool = False  # found by feedback words, not by the question's own
    lexical: bool = False  # found by the full-text arm
    meaning_rank: int | None = None  # its place in the meaning arm's list (0 = closest)
    date_reason: str = ""
    events: tuple[DateSpan, ...] = ()  # the times its words name (read when the question's dates matter)
    day: date | None = None  # occurred_at's day in the current time zone
    #: It has an expiry or a successor (current.py reads those again); None: not known.
    flagged: bool | None = None
    base: float = 0.0
    bonus: float = 0.0
    reasons: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.base + self.bonus


def _aware(value) -> datetime:
    if isinstance(value, str):
        return _aware_text(value)
    return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)


@lru_cache(maxsize=100_000)
def _aware_text(value: str) -> datetime:
    # SQLite hands datetimes over as text; the same few thousand come back question after question.
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# A memory waiting for extraction has no entities or topics yet: its key words are those
# of its text's beginning, so the entity signal (scoring.py) sees in a just-added memory
# what it will see once extracted (the extraction names them from the same words).
PENDING_KEY_CHARS = 600


def fetch(owner, ids, *, dates: bool = False, read: dict[int, tuple] | None = None) -> dict[int, Candidate]:
    """The owner's readable memories among `ids`, as candidates (unscored), in id order.
    dates: read the times their words name too (a question about a time). read: rows the
    words arm has read this question (sqlite_search.READ_COLUMNS, by id): a memory among
    them is made a candidate from its row, not read again."""
    ids = list(ids)
    if not ids:
        return {}
    head_chars = max(PENDING_KEY_CHARS, EVENT_TEXT_CHARS) if dates else 40
    tz = timezone.get_current_timezone()
    out = {}
    if read:
        rest = []
        for pk in ids:
            row = read.get(pk)
            if row is None:
                rest.append(pk)
                continue
            _, raw_text, _, entities, topics, source, importance, occurred_at, status, readable, stored, flagged, keyed = row
            if readable:
                pending = status == "pending"
                head = None if raw_text is None else raw_text[: PENDING_KEY_CHARS if pending else head_chars]
                out[pk] = _candidate(
                    pk, source, importance, occurred_at, entities, topics, head, pending, stored, flagged, keyed, dates, tz
                )
        ids = rest
    if ids:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, source, importance, occurred_at, entities, topics, "
                f"CASE WHEN status = 'pending' THEN substr(raw_text, 1, {PENDING_KEY_CHARS}) "
                f"ELSE substr(raw_text, 1, {head_chars}) END, "
                f"status = 'pending', {'event_dates' if dates else 'NULL'}, {FLAGGED_SQL}, recall_keys FROM {MEMORY_TABLE} "
                f"WHERE {READABLE_SQL} AND id IN ({placeholders(ids)})",
                [owner.pk, *ids],
            )
            rows = cursor.fetchall()
        for pk, source, importance, occurred_at, entities, topics, head, pending, stored, flagged, keyed in rows:
            out[pk] = _candidate(
                pk, source, importance, occurred_at, entities, topics, head, pending, stored, flagged, keyed, dates, tz
            )
    return dict(sorted(out.items())) if read else out  # as one read gives them


def _candidate(
    pk, source, importance, occurred_at, entities, topics, head, pending, stored, flagged, keyed, dates, tz
) -> Candidate:
    c = Candidate(
        pk,
        source or "",
        importance or 0.0,
        _aware(occurred_at),
        keys(head[:PENDING_KEY_CHARS], "") if pending else keys(entities, topics, keyed),
        topics,
        speaker_of(head[:40] if head else head),
        day=local_day(occurred_at, tz),
        flagged=bool(flagged),
    )
    if dates and head:
        c.events = events_of(head, c.day, stored)
    return c


def newest(owner, limit: int, order: str) -> list[int]:
    """The ids of the owner's first readable memories in `order` (an SQL ORDER BY)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {MEMORY_TABLE} WHERE {READABLE_SQL} ORDER BY {order} LIMIT %s", [owner.pk, limit])
        return [row[0] for row in cursor.fetchall()]
