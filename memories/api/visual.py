"""The data behind the graph, timeline and stats pages, as JSON (the pages read the same)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from ninja import Query, Router, Schema
from ninja.errors import HttpError
from pydantic import Field, model_validator

from ..models import Memory
from ..services import visual
from . import schemas as s

router = Router(tags=["pictures"])


class GraphParams(Schema):
    topic: s.Text = Field("", max_length=200)
    entity: s.Text = Field("", max_length=200)
    source: s.Text = Field("", max_length=500)
    date_from: date | None = Field(None, description="First day (occurred_at), included.")
    date_to: date | None = Field(None, description="Last day (occurred_at), included.")
    limit: int = Field(visual.GRAPH_DEFAULT_LIMIT, ge=1, le=visual.GRAPH_MAX_LIMIT, description="Most memory nodes sent.")
    focus: int | None = Field(None, ge=1, le=s.MAX_ID, description="Expand from this memory: it and its neighbours only.")
    depth: int = Field(1, ge=1, le=3, description="Steps from the focus memory.")

    @model_validator(mode="after")
    def _range(self):
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to")
        return self


class GraphNode(Schema):
    id: str = Field(description="m<id> for a memory, c<id> for an insight.")
    kind: Literal["memory", "insight"]
    label: str
    memory_id: int | None = None
    consolidation_id: int | None = None
    importance: float | None = None
    topic: str | None = None
    source: str | None = None
    status: str | None = None
    occurred_at: datetime | None = None
    stale: bool | None = None
    sources: int | None = None


class GraphEdge(Schema):
    id: str
    source: str
    target: str
    kind: str = Field(description="link, consolidation, duplicate, updates or insight (memory to its insight hub).")
    relationship: str


class GraphOut(Schema):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    total: int = Field(description="Memories matching the filters (or in the neighbourhood).")
    shown: int
    limit: int
    truncated: bool
    focus: int | None


@router.get(
    "/graph",
    response={200: GraphOut, 404: s.Message, 422: s.Message},
    summary="The connection graph: memories, their links and the insights over them",
)
def graph(request, params: Query[GraphParams]):
    try:
        return visual.graph_data(
            owner=request.auth,
            topic=params.topic.strip(),
            entity=params.entity.strip(),
            source=params.source.strip(),
            date_from=params.date_from,
            date_to=params.date_to,
            limit=params.limit,
            focus=params.focus,
            depth=params.depth,
        )
    except Memory.DoesNotExist:
        raise HttpError(404, f"No memory {params.focus}.") from None


class TimelineParams(Schema):
    zoom: Literal[tuple(visual.ZOOMS)] = "month"  # type: ignore[valid-type]
    date_from: date | None = None
    date_to: date | None = None

    @model_validator(mode="after")
    def _range(self):
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to")
        return self


class Bucket(Schema):
    start: date
    end: date
    occurred: int = Field(description="Memories that happened in this period.")
    stored: int = Field(description="Memories stored in this period.")


class RunMark(Schema):
    id: int
    started_at: datetime
    finished_at: datetime | None
    memories_consolidated: int
    consolidations_made: int
    error: str
    bucket: date


class TimelineOut(Schema):
    zoom: str
    buckets: list[Bucket]
    runs: list[RunMark]
    truncated: bool = Field(description="More periods exist before the first one sent; give date_from to see them.")
    date_from: date | None
    date_to: date | None


@router.get(
    "/timeline",
    response={200: TimelineOut, 422: s.Message},
    summary="Memories per day, week, month or year, by when they happened and when they were stored",
)
def timeline(request, params: Query[TimelineParams]):
    return visual.timeline_data(owner=request.auth, zoom=params.zoom, date_from=params.date_from, date_to=params.date_to)


class DayCount(Schema):
    day: date
    count: int


class SourceCount(Schema):
    source: str
    count: int


class Trend(Schema):
    name: str
    total: int
    counts: list[int] = Field(description="One count a week, aligned with `weeks`.")


class UsageDay(Schema):
    day: date
    calls: int
    failures: int
    breaker_trips: int


class BacklogDay(Schema):
    day: date
    backlog: int


class StatsOut(Schema):
    days: int
    date_from: date
    date_to: date
    stored_per_day: list[DayCount]
    by_source: list[SourceCount]
    by_status: dict[str, int]
    weeks: list[date]
    top_topics: list[Trend]
    top_entities: list[Trend]
    provider_per_day: list[UsageDay] = Field(description="Model calls made for the caller; breaker trips are engine-wide.")
    providers: list[str]
    backlog_per_day: list[BacklogDay]


@router.get(
    "/stats",
    response={200: StatsOut, 422: s.Message},
    summary="Counts over time: stored, by source and status, topics, model calls, backlog",
)
def stats(request, days: int = Query(30, ge=1, le=visual.STATS_MAX_DAYS)):
    return visual.stats_data(owner=request.auth, days=days)
