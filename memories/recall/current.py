"""What is true now: one recall signal over the ranked candidates, no model.

- An expired memory (past its `expires_at`) leaves recall.
- A superseded memory (a newer one changed its fact: `outdated_by`, `valid_until`) ranks
  right below its current successor; the successor is brought in when only the old one
  matched the question ("Where do I live?" matches "I live in Paris", not "I moved to
  Berlin"). A question about a period the old fact was true in ("Where did I live in
  2024?") leaves the old one where its date put it.

Recall calls `prefer_current` once, on its ranked list; the candidates only need `id`,
`score`, `bonus` and `reasons` (recall's own candidate type), so the signal does not
care which arms found them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import Protocol

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from ..models import Memory

# How far a chain of updates (A -> B -> C -> ...) is followed to its current end.
MAX_CHAIN = 10


class Ranked(Protocol):
    id: int
    bonus: float
    reasons: list[str]

    @property
    def score(self) -> float: ...


class Span(Protocol):
    start: date | None
    end: date | None


def not_expired(now: datetime | None = None) -> Q:
    """The ORM filter for memories still in recall's reach."""
    return Q(expires_at__isnull=True) | Q(expires_at__gt=now or timezone.now())


def past_marker(valid_until: datetime | None) -> str:
    return f"until {timezone.localtime(valid_until):%Y-%m}" if valid_until else ""


def prefer_current[C: Ranked](
    ranked: Sequence[C],
    *,
    owner,
    now: datetime | None = None,
    spans: Iterable[Span] = (),
    fetch: Callable[[set[int]], dict[int, C]] | None = None,
) -> list[C]:
    """The ranked candidates with expired ones left out and each superseded one right
    below its current successor (fetched with `fetch` when it was not a candidate)."""
    now = now or timezone.now()
    if not ranked:
        return list(ranked)
    # Only the few candidates with an expiry or a successor come back: nearly always none.
    # Whether one has them was read with it (Candidate.flagged); only the others are asked.
    known = {c.id for c in ranked if getattr(c, "flagged", None)}
    unknown = {c.id for c in ranked if getattr(c, "flagged", None) is None}
    states = _states(owner, known | (_flagged(unknown) if unknown else set()))
    current_of = _current_successors(owner, states, now)
    missing = {s for s in current_of.values() if s is not None} - {c.id for c in ranked}
    extra = fetch(missing) if (fetch and missing) else {}
    spans = [s for s in spans if s.start is not None]
    out: list[C] = []
    held: list[C] = []
    placed: set[int] = set()
    by_id = {c.id: c for c in ranked}
    for c in ranked:
        if c.id in placed:
            continue
        state = states.get(c.id)
        if state is None:  # nothing to say: current, no expiry
            out.append(c)
            placed.add(c.id)
            continue
        if _expired(state["expires_at"], now):
            continue
        successor_id = current_of.get(c.id)
        if successor_id is not None and state["valid_until"] is not None:
            until = past_marker(state["valid_until"])
            if _about_its_time(state, spans):
                c.reasons.append(f"superseded ({until}), true in the period asked about")
                if not getattr(c, "date_reason", True):
                    # Its own day may lie before the period, but its replacement says it
                    # held through it: as much the period's as a note said in it.
                    from .dates import W_DATE  # here: dates imports readable, which imports this module

                    c.bonus += W_DATE
                    c.date_reason = "held in the period asked about"
                    held.append(c)
            else:
                successor = by_id.get(successor_id) or extra.get(successor_id)
                if successor is not None and successor_id not in placed:
                    # Lifted to just above the old one: what it replaced was relevant, so it is.
                    successor.bonus += max(0.0, c.score - successor.score) + 1e-4
                    successor.reasons.append(f"current: supersedes #{c.id}")
                    out.append(successor)
                    placed.add(successor_id)
                c.reasons.append(f"superseded by #{successor_id} ({until})")
        out.append(c)
        placed.add(c.id)
    for c in held:  # up to where its score, with the period's credit, now puts it
        out.remove(c)
        out.insert(next((i for i, other in enumerate(out) if other.score < c.score), len(out)), c)
    return out


def _expired(expires_at, now: datetime) -> bool:
    return expires_at is not None and expires_at <= now


def _states(owner, ids: set[int]) -> dict[int, dict]:
    if not ids:
        return {}
    # Owner and liveness are checked on the few rows that come back.
    rows = (
        Memory.all_objects.filter(pk__in=ids)
        .order_by()
        .values(
            "id",
            "owner_id",
            "deleted_at",
            "superseded_by_id",
            "outdated_by_id",
            "valid_until",
            "expires_at",
            "occurred_at",
            "status",
        )
    )
    return {
        row["id"]: row
        for row in rows
        if row["owner_id"] == owner.pk and row["deleted_at"] is None and row["superseded_by_id"] is None
    }


# What _flagged asks of a row, as an SQL expression on it.
FLAGGED_SQL = "(outdated_by_id IS NOT NULL OR expires_at IS NOT NULL)"


def _flagged(ids: set[int]) -> set[int]:
    """Of these ids, those with an expiry or a successor: one primary-key lookup per id in
    plain SQL (recall hands over hundreds of ids; building that query through the ORM
    costs more than running it)."""
    ids = list(ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {Memory._meta.db_table} WHERE id IN ({', '.join(['%s'] * len(ids))}) AND {FLAGGED_SQL}",
            ids,
        )
        return {row[0] for row in cursor.fetchall()}


def _current_successors(owner, states: dict[int, dict], now: datetime) -> dict[int, int | None]:
    """For each superseded candidate, the end of its chain of updates that is in recall's
    reach (ready, live, not expired), or None."""
    known = dict(states)
    chains = {pk: [pk] for pk, s in states.items() if s["outdated_by_id"]}
    for _ in range(MAX_CHAIN):
        wanted = {known[chain[-1]]["outdated_by_id"] for chain in chains.values() if known[chain[-1]]["outdated_by_id"]}
        wanted -= known.keys()
        if wanted:
            known.update(_states(owner, wanted))
        moved = False
        for chain in chains.values():
            nxt = known[chain[-1]]["outdated_by_id"]
            if nxt and nxt in known and nxt not in chain:
                chain.append(nxt)
                moved = True
        if not moved:
            break
    out = {}
    for pk, chain in chains.items():
        end = known.get(chain[-1])
        usable = (
            len(chain) > 1
            and end is not None
            and end["status"] == Memory.Status.READY
            and end["outdated_by_id"] is None
            and not _expired(end["expires_at"], now)
        )
        out[pk] = chain[-1] if usable else None
    return out


def _about_its_time(state: dict, spans: list[Span]) -> bool:
    """The question names a period the old fact was true in and the new one not yet."""
    if not spans:
        return False
    start = timezone.localtime(state["occurred_at"]).date()
    until = timezone.localtime(state["valid_until"]).date()
    return any(span.end >= start and span.start < until for span in spans)
