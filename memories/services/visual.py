"""The data behind the pictures: the connection graph, the timeline and the stats.

Each function returns plain dicts and lists (what the JSON API sends and the pages draw),
scoped to one owner, with server-side limits so a space of 100,000 memories still sends
the browser a few hundred nodes or buckets.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta

from django.db.models import Count, Q
from django.db import connection
from django.db.models import CharField, F, Func, Value
from django.db.models.functions import TruncDate
from django.utils import timezone

from ..models import Consolidation, ConsolidationRun, Memory, MemoryLink, ProviderUsage
from .browse import clamp_day, day_start, filter_memories

# --- graph -----------------------------------------------------------------------------------

GRAPH_DEFAULT_LIMIT = 200
GRAPH_MAX_LIMIT = 1000
# Insight hubs drawn at most; each is one node plus an edge per source shown.
INSIGHT_LIMIT = 150
LABEL_CHARS = 80
UPDATE_WORDS = ("update", "supersede", "replace", "correct")
# Columns a node never shows: a PDF's text can be megabytes.
HEAVY = ("raw_text", "metadata")


def _label(text: str) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _memory_node(m: Memory) -> dict:
    return {
        "id": f"m{m.pk}",
        "kind": "memory",
        "memory_id": m.pk,
        "label": _label(m.summary or m.source),
        "importance": round(float(m.importance), 3),
        "topic": (m.topics or [""])[0],
        "source": m.source,
        "status": m.status,
        "occurred_at": m.occurred_at.isoformat(),
    }


def _link_kind(link: MemoryLink) -> str:
    # Links record what the model saw in words; another flow may write "updates"/"supersedes"
    # links (a newer memory changing an older one's fact), which the picture draws apart.
    kind = getattr(link, "kind", "") or ""
    if kind:
        return str(kind)
    relationship = link.relationship.lower()
    if any(word in relationship for word in UPDATE_WORDS):
        return "updates"
    return "consolidation" if link.consolidation_id else "link"


def graph_data(
    *,
    owner,
    topic: str = "",
    entity: str = "",
    source: str = "",
    date_from: date | None = None,
    date_to: date | None = None,
    limit: int = GRAPH_DEFAULT_LIMIT,
    focus: int | None = None,
    depth: int = 1,
) -> dict:
    """Memories as nodes, links, near-duplicates and updates as edges, insights as hubs.

    Without focus: the owner's most important ready memories matching the filters, at most
    `limit`. With focus: that memory and what lies within `depth` steps of it (links,
    near-duplicates, insights it shares), at most `limit` — how the page expands a node.
    """
    limit = max(1, min(limit, GRAPH_MAX_LIMIT))
    own = Memory.objects.owned_by(owner)
    if focus is not None:
        if not own.filter(pk=focus).exists():
            raise Memory.DoesNotExist(f"No memory {focus}.")
        ids = _neighbourhood(owner=owner, start=focus, depth=max(1, min(depth, 3)), limit=limit)
        total = len(ids)
        memories = list(own.filter(pk__in=ids).defer(*HEAVY))
    else:
        matching = filter_memories(
            owner=owner, topic=topic, entity=entity, source=source, date_from=date_from, date_to=date_to, sort="importance"
        ).filter(status=Memory.Status.READY)
        total = matching.count()
        memories = list(matching.defer(*HEAVY)[:limit])
    memories.sort(key=lambda m: (-m.importance, m.pk))
    ids = {m.pk for m in memories}
    nodes = [_memory_node(m) for m in memories]
    edges = []
    # One IN list, on an indexed column; the other end is checked here (two IN lists of a
    # thousand ids each make SQLite scan).
    for link in MemoryLink.objects.filter(from_memory_id__in=ids).order_by("pk"):
        if link.to_memory_id not in ids:
            continue
        edges.append(
            {
                "id": f"l{link.pk}",
                "source": f"m{link.from_memory_id}",
                "target": f"m{link.to_memory_id}",
                "kind": _link_kind(link),
                "relationship": link.relationship,
            }
        )
    for m in memories:
        if m.duplicate_of_id in ids:
            edges.append(
                {
                    "id": f"d{m.pk}",
                    "source": f"m{m.pk}",
                    "target": f"m{m.duplicate_of_id}",
                    "kind": "duplicate",
                    "relationship": "near-duplicate of",
                }
            )
        if m.superseded_by_id in ids:
            edges.append(
                {
                    "id": f"u{m.pk}",
                    "source": f"m{m.superseded_by_id}",
                    "target": f"m{m.pk}",
                    "kind": "updates",
                    "relationship": "updates",
                }
            )
    hubs, hub_edges = _insight_hubs(owner=owner, ids=ids)
    return {
        "nodes": nodes + hubs,
        "edges": edges + hub_edges,
        "total": total,
        "shown": len(nodes),
        "limit": limit,
        "truncated": total > len(nodes),
        "focus": focus,
    }


def _insight_hubs(*, owner, ids: set[int]) -> tuple[list[dict], list[dict]]:
    through = Consolidation.sources.through
    # Rows by the indexed memory column first, then which of their insights count: a join
    # filtered on both sides makes SQLite walk the whole table.
    rows = list(through.objects.filter(memory_id__in=ids).values_list("consolidation_id", "memory_id"))
    active = set(Consolidation.objects.owned_by(owner).filter(pk__in={c for c, _ in rows}).values_list("pk", flat=True))
    sources = defaultdict(list)
    for consolidation_id, memory_id in rows:
        if consolidation_id in active:
            sources[consolidation_id].append(memory_id)
    # A hub joining two or more shown memories says something; one with a single source shown is noise.
    chosen = sorted((c for c, m in sources.items() if len(m) >= 2), key=lambda c: (-len(sources[c]), -c))[:INSIGHT_LIMIT]
    hubs, edges = [], []
    for c in Consolidation.objects.owned_by(owner).filter(pk__in=chosen).order_by("-pk"):
        hubs.append(
            {
                "id": f"c{c.pk}",
                "kind": "insight",
                "consolidation_id": c.pk,
                "label": _label(c.insight),
                "stale": c.is_stale,
                "sources": len(sources[c.pk]),
            }
        )
        for memory_id in sorted(sources[c.pk]):
            edges.append(
                {
                    "id": f"s{c.pk}-{memory_id}",
                    "source": f"c{c.pk}",
                    "target": f"m{memory_id}",
                    "kind": "insight",
                    "relationship": "source of this insight",
                }
            )
    return hubs, edges


def _neighbourhood(*, owner, start: int, depth: int, limit: int) -> list[int]:
    """Breadth-first from one memory over links, near-duplicates and shared insights."""
    seen = [start]
    known = {start}
    frontier = {start}
    own = Memory.objects.owned_by(owner)
    through = Consolidation.sources.through
    for _ in range(depth):
        found: list[int] = []
        for a, b in (
            MemoryLink.objects.filter(Q(from_memory_id__in=frontier) | Q(to_memory_id__in=frontier))
            .values_list("from_memory_id", "to_memory_id")
            .order_by("pk")[: limit * 4]
        ):
            found += [a, b]
        found += own.filter(duplicate_of_id__in=frontier).values_list("pk", flat=True)[:limit]
        found += [pk for pk in own.filter(pk__in=frontier).values_list("duplicate_of_id", flat=True) if pk]
        shared = through.objects.filter(
            memory_id__in=frontier, consolidation__owner=owner, consolidation__retired_at__isnull=True
        ).values("consolidation_id")
        found += (
            through.objects.filter(consolidation_id__in=shared)
            .values_list("memory_id", flat=True)
            .order_by("memory_id")[: limit * 4]
        )
        fresh = [pk for pk in dict.fromkeys(found) if pk not in known]
        # Only the owner's live memories: a link cannot lead into another space or a deleted row.
        fresh = list(own.filter(pk__in=fresh).order_by("-importance", "pk").values_list("pk", flat=True)[: limit - len(seen)])
        if not fresh:
            break
        seen += fresh
        known.update(fresh)
        frontier = set(fresh)
        if len(seen) >= limit:
            break
    return seen


def graph_facets(*, owner, top: int = 12) -> dict:
    """The commonest topics and sources (for the filter lists and the colour key)."""
    topics: Counter = Counter()
    for row in (
        Memory.objects.owned_by(owner)
        .filter(status=Memory.Status.READY)
        .order_by("-created_at")
        .values_list("topics", flat=True)[:5000]
    ):
        topics.update(t for t in (row or [])[:1])
    sources = Memory.objects.owned_by(owner).values("source").annotate(n=Count("id")).order_by("-n", "source")[:top]
    return {"topics": [t for t, _ in topics.most_common(top)], "sources": [r["source"] for r in sources if r["source"]]}


# --- timeline --------------------------------------------------------------------------------

ZOOMS = ("day", "week", "month", "year")
FLOOR = datetime(1000, 1, 1, tzinfo=UTC)
MAX_BUCKETS = 370


def _bucket_start(day: date, zoom: str) -> date:
    if zoom == "week":
        return day - timedelta(days=day.weekday())
    if zoom == "month":
        return day.replace(day=1)
    if zoom == "year":
        return day.replace(month=1, day=1)
    return day


def _next_bucket(start: date, zoom: str) -> date:
    if zoom == "day":
        return start + timedelta(days=1)
    if zoom == "week":
        return start + timedelta(days=7)
    if zoom == "month":
        return (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    return start.replace(year=start.year + 1)


def _per_day(queryset, field: str) -> dict[date, int]:
    """How many rows fall on each calendar day (server time zone) of a datetime column.

    Grouped in the database. On SQLite, Django's TruncDate calls back into Python for every
    row (half a second per 10,000); SQLite's own date() with the zone's current offset does
    the same in C. (Around a DST change that can put a row an hour from midnight on the
    neighbouring day, which a bar chart of days does not show.)
    """
    if connection.vendor == "sqlite":
        offset = timezone.localtime().utcoffset() or timedelta(0)
        minutes = int(offset.total_seconds() // 60)
        day = Func(F(field), Value(f"{minutes:+d} minutes"), function="date", output_field=CharField())
    else:
        day = TruncDate(field)
    # A (always true) range on the column steers SQLite to an index that starts (owner, column),
    # which then covers the whole query: no table rows are read.
    queryset = queryset.filter(**{f"{field}__gte": FLOOR})
    rows = queryset.annotate(d=day).values("d").annotate(n=Count("id")).order_by()
    out: dict[date, int] = {}
    for row in rows:
        if row["d"] is None:
            continue
        d = date.fromisoformat(row["d"]) if isinstance(row["d"], str) else _local_day(row["d"])
        out[d] = out.get(d, 0) + row["n"]
    return out


def _local_day(value) -> date:
    """A database date or datetime as a calendar day in the server's time zone."""
    if isinstance(value, datetime):
        return timezone.localtime(value).date() if timezone.is_aware(value) else value.date()
    return value


def timeline_data(*, owner, zoom: str = "month", date_from: date | None = None, date_to: date | None = None) -> dict:
    """Memories counted per day, week, month or year by when they happened and when they
    were stored, with the consolidation runs in the range. At most MAX_BUCKETS buckets: the
    newest ones, unless a range is given."""
    date_from, date_to = clamp_day(date_from), clamp_day(date_to)
    if zoom not in ZOOMS:
        raise ValueError(f"zoom must be one of {', '.join(ZOOMS)}")
    memories = Memory.objects.owned_by(owner)
    counts: dict[str, dict[date, int]] = {}
    span: list[date] = []
    for key, field in (("occurred", "occurred_at"), ("stored", "created_at")):
        scoped = memories
        if date_from:
            scoped = scoped.filter(**{f"{field}__gte": day_start(date_from)})
        if date_to:
            scoped = scoped.filter(**{f"{field}__lt": day_start(date_to + timedelta(days=1))})
        per_bucket: Counter = Counter()
        for day, n in _per_day(scoped, field).items():
            per_bucket[_bucket_start(day, zoom)] += n
        counts[key] = dict(per_bucket)
        span += list(per_bucket)
    runs_qs = ConsolidationRun.objects.owned_by(owner)
    if date_from:
        runs_qs = runs_qs.filter(started_at__gte=day_start(date_from))
    if date_to:
        runs_qs = runs_qs.filter(started_at__lt=day_start(date_to + timedelta(days=1)))
    if not span:
        return {"zoom": zoom, "buckets": [], "runs": [], "truncated": False, "date_from": date_from, "date_to": date_to}
    first = _bucket_start(date_from, zoom) if date_from else min(span)
    # Up to now (runs and stored memories are marked there), or to a future occurred_at.
    last = _bucket_start(date_to, zoom) if date_to else max(max(span), _bucket_start(timezone.localdate(), zoom))
    starts = []
    cursor = last
    # Walk back from the newest bucket so a long history keeps its recent end.
    while cursor >= first and len(starts) < MAX_BUCKETS:
        starts.append(cursor)
        cursor = _bucket_start(cursor - timedelta(days=1), zoom)
    truncated = cursor >= first
    starts.reverse()
    buckets = []
    for start in starts:
        end = _next_bucket(start, zoom) - timedelta(days=1)
        buckets.append(
            {"start": start, "end": end, "occurred": counts["occurred"].get(start, 0), "stored": counts["stored"].get(start, 0)}
        )
    window_start, window_end = day_start(starts[0]), day_start(_next_bucket(starts[-1], zoom))
    runs = [
        {
            "id": r.pk,
            "started_at": r.started_at,
            "finished_at": r.finished_at,
            "memories_consolidated": r.memories_consolidated,
            "consolidations_made": r.consolidations_made,
            "error": r.error,
            "bucket": _bucket_start(_local_day(r.started_at), zoom),
        }
        for r in runs_qs.filter(started_at__gte=window_start, started_at__lt=window_end).order_by("started_at")[:2000]
    ]
    return {"zoom": zoom, "buckets": buckets, "runs": runs, "truncated": truncated, "date_from": date_from, "date_to": date_to}


# --- stats -----------------------------------------------------------------------------------

STATS_MAX_DAYS = 730
TOP_N = 6
# Topic and entity trends read at most this many of the newest memories in the window.
TREND_SCAN = 5_000


def _days(start: date, end: date) -> list[date]:
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def stats_data(*, owner, days: int = 30) -> dict:
    """Memories per day, by source and status; top topics and entities per week; model
    calls, failures and breaker trips; the consolidation backlog per day."""
    days = max(1, min(days, STATS_MAX_DAYS))
    today = timezone.localdate()
    start = today - timedelta(days=days - 1)
    since = day_start(start)
    memories = Memory.objects.owned_by(owner)
    day_list = _days(start, today)

    per_day = _per_day(memories.filter(created_at__gte=since), "created_at")
    by_source = list(memories.values("source").annotate(n=Count("id")).order_by("-n", "source")[:10])
    by_status = {s: 0 for s in Memory.Status.values}
    by_status.update(dict(memories.values_list("status").annotate(n=Count("id")).order_by()))

    weeks = sorted({_bucket_start(d, "week") for d in day_list})
    topic_weeks: dict[str, Counter] = {"topics": Counter(), "entities": Counter()}
    per_week: dict[str, dict[date, Counter]] = {"topics": defaultdict(Counter), "entities": defaultdict(Counter)}
    rows = (
        memories.filter(created_at__gte=since, status=Memory.Status.READY)
        .order_by("-created_at")
        .values_list("created_at", "topics", "entities")[:TREND_SCAN]
    )
    for created_at, topics, entities in rows:
        week = _bucket_start(_local_day(created_at), "week")
        for key, values in (("topics", topics), ("entities", entities)):
            distinct = set(values or [])
            topic_weeks[key].update(distinct)
            per_week[key][week].update(distinct)
    trends = {
        key: [
            {"name": name, "total": total, "counts": [per_week[key][w][name] for w in weeks]}
            for name, total in topic_weeks[key].most_common(TOP_N)
        ]
        for key in ("topics", "entities")
    }

    usage = defaultdict(lambda: {"calls": 0, "failures": 0, "breaker_trips": 0})
    for row in ProviderUsage.objects.filter(Q(owner=owner) | Q(owner__isnull=True), day__gte=start).values(
        "day", "calls", "failures", "breaker_trips"
    ):
        for name in ("calls", "failures", "breaker_trips"):
            usage[row["day"]][name] += row[name]
    providers = list(
        ProviderUsage.objects.owned_by(owner)
        .filter(day__gte=start)
        .values("provider")
        .annotate(n=Count("id"))
        .order_by("provider")
        .values_list("provider", flat=True)
    )

    return {
        "days": days,
        "date_from": start,
        "date_to": today,
        "stored_per_day": [{"day": d, "count": per_day.get(d, 0)} for d in day_list],
        "by_source": [{"source": r["source"] or "(none)", "count": r["n"]} for r in by_source],
        "by_status": by_status,
        "weeks": weeks,
        "top_topics": trends["topics"],
        "top_entities": trends["entities"],
        "provider_per_day": [{"day": d, **usage[d]} for d in day_list],
        "providers": providers,
        "backlog_per_day": _backlog(memories=memories, day_list=day_list),
    }


def _backlog(*, memories, day_list: list[date]) -> list[dict]:
    """Ready memories stored but not yet consolidated at the end of each day.

    Rebuilt from when each live memory was stored and consolidated (nothing extra is
    recorded): a memory deleted since no longer counts on the days it waited.
    """
    waiting = memories.filter(status=Memory.Status.READY, duplicate_of__isnull=True)
    first = day_start(day_list[0])
    level = waiting.filter(created_at__lt=first).filter(Q(consolidated_at__isnull=True) | Q(consolidated_at__gte=first)).count()
    added = _per_day(waiting.filter(created_at__gte=first), "created_at")
    done = _per_day(waiting.filter(consolidated_at__gte=first), "consolidated_at")
    out = []
    for d in day_list:
        level += added.get(d, 0) - done.get(d, 0)
        out.append({"day": d, "backlog": max(level, 0)})
    return out
