"""Request and response shapes of the JSON API. Field names of the original design are kept
(total_memories, unconsolidated, connections[].linked_to, memory_id, ...)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from ninja import Schema
from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, field_validator

from ..models import Memory
from ..recall import STRATEGIES
from ..services.browse import SORTS
from ..services import fields
from ..services.ingest import parse_occurred_at

# SQLite and PostgreSQL integers are 64-bit: a bigger id from a client is a 422, not an OverflowError.
MAX_ID = 2**63 - 1
# Dates outside this range are typos, and near year 1 or 9999 a time-zone shift overflows Python's datetime.
EARLIEST, LATEST = 1000, 9000

StatusName = Literal[tuple(Memory.Status.values)]  # type: ignore[valid-type]
SortName = Literal[tuple(SORTS)]  # type: ignore[valid-type]
StrategyName = Literal[tuple(STRATEGIES)]  # type: ignore[valid-type]


def _clean_text(value: str) -> str:
    # JSON may carry lone surrogates ("\ud800"), which no database can store, and NULs,
    # which PostgreSQL refuses: both would otherwise fail at the INSERT as a 500.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (it contains a lone surrogate)") from None
    return value.replace("\x00", "")


def _when(value) -> datetime | None:
    """ISO 8601 date or datetime (naive = the server's time zone), within a sane range."""
    parsed = parse_occurred_at(value)  # IngestError is a ValueError: pydantic reports it as a 422
    if parsed is None:
        return None
    if not EARLIEST <= parsed.year <= LATEST:
        raise ValueError(f"year {parsed.year} is out of range ({EARLIEST}-{LATEST})")
    return parsed.astimezone(UTC)


Text = Annotated[str, AfterValidator(_clean_text)]
When = Annotated[datetime | None, BeforeValidator(_when)]
Label = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), AfterValidator(_clean_text)]


class Message(Schema):
    detail: str


class IngestIn(Schema):
    text: Text = Field(min_length=1, description="What to remember.")
    source: Text = Field("", max_length=500, description="Where it came from (a file name, an app, 'api').")
    occurred_at: When = Field(None, description="When it happened, ISO 8601 (2025-03-15 or 2025-03-15T14:30:00+01:00).")
    expires_at: When = Field(None, description="Forget after: past this date it leaves recall (it stays in the bank, expired).")


class IngestOut(Schema):
    status: Literal["ingested", "duplicate"]
    response: str
    memory_id: int
    memory_status: StatusName


class DeleteIn(Schema):
    memory_id: int = Field(ge=1, le=MAX_ID)


class DeleteOut(Schema):
    status: Literal["deleted"]
    memory_id: int


class ClearOut(Schema):
    status: Literal["cleared"]
    memories_deleted: int
    consolidations_deleted: int
    files_deleted: int


class StatusOut(Schema):
    total_memories: int
    unconsolidated: int
    consolidations: int
    pending: int
    failed: int
    waiting_for_vector: int = Field(
        description="Memories whose vector (recall by meaning) is still to be made in the background; found by words meanwhile."
    )
    provider: str
    provider_is_language_model: bool
    embeddings: str = Field(description="Recall by meaning: the active embeddings backend and model, or off and why.")


class Connection(Schema):
    linked_to: int
    relationship: str


class MemoryOut(Schema):
    id: int
    source: str
    summary: str
    entities: list[str]
    topics: list[str]
    importance: float
    connections: list[Connection]
    created_at: datetime
    consolidated: bool
    status: StatusName
    occurred_at: datetime
    error: str
    file_name: str
    mime_type: str
    outdated_by: int | None = Field(None, description="The memory whose newer fact superseded this one, if any.")
    valid_until: datetime | None = Field(None, description="A superseded fact was true until then.")
    expires_at: datetime | None = None
    expired: bool = False
    last_recalled_at: datetime | None = Field(None, description="When an answer last cited it.")
    base_importance: float | None = Field(None, description="The importance before it faded (null: not faded).")

    @staticmethod
    def resolve_outdated_by(obj: Memory) -> int | None:
        return obj.outdated_by_id

    @staticmethod
    def resolve_expired(obj: Memory) -> bool:
        return obj.is_expired

    @staticmethod
    def resolve_consolidated(obj: Memory) -> bool:
        return obj.consolidated_at is not None

    @staticmethod
    def resolve_connections(obj: Memory) -> list[dict]:
        # links_out/links_in are prefetched by the list query; both directions are connections.
        return [{"linked_to": link.to_memory_id, "relationship": link.relationship} for link in obj.links_out.all()] + [
            {"linked_to": link.from_memory_id, "relationship": link.relationship} for link in obj.links_in.all()
        ]


class MemoryDetail(MemoryOut):
    raw_text: str
    provider: str
    attempts: int
    updated_at: datetime
    supersedes: list[int] = Field(default_factory=list, description="Older memories whose facts this one changed.")

    @staticmethod
    def resolve_supersedes(obj: Memory) -> list[int]:
        return list(Memory.objects.owned_by(obj.owner_id).filter(outdated_by=obj).order_by("pk").values_list("pk", flat=True))


class MemoryList(Schema):
    memories: list[MemoryOut]
    count: int = Field(description="How many memories are in this page (the original field).")
    total: int = Field(description="How many memories match the filters.")
    limit: int
    offset: int
    next_offset: int | None


class MemoryPatch(Schema):
    summary: Text | None = Field(None, min_length=1, max_length=10_000)
    entities: list[Label] | None = Field(None, max_length=30)
    topics: list[Label] | None = Field(None, max_length=30)
    importance: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    occurred_at: When = None
    expires_at: When = Field(None, description='Forget after this date; null or "" clears it.')

    @field_validator("entities", "topics")
    @classmethod
    def _dedupe(cls, values, info):
        # The rules a correction and an import share (services/fields.py): folded, each once.
        return None if values is None else fields.labels(values, field=info.field_name)


class LinkOut(Schema):
    id: int
    from_memory: int
    to_memory: int
    linked_to: int
    direction: Literal["out", "in"]
    relationship: str
    consolidation: int | None
    created_at: datetime


class ConsolidationOut(Schema):
    id: int
    summary: str
    insight: str
    source_ids: list[int]
    provider: str
    created_at: datetime
    stale: bool = Field(description="A source was deleted or superseded; the next consolidation run re-derives it.")

    @staticmethod
    def resolve_stale(obj) -> bool:
        return obj.stale_at is not None

    @staticmethod
    def resolve_source_ids(obj) -> list[int]:
        return sorted(m.pk for m in obj.sources.all())


class ConsolidationList(Schema):
    consolidations: list[ConsolidationOut]
    count: int
    total: int
    limit: int
    offset: int
    next_offset: int | None


class ConsolidateOut(Schema):
    status: Literal["done"]
    response: str
    consolidations: list[int]
    memories_consolidated: int


class RecalledOut(Schema):
    rank: int
    id: int
    source: str
    summary: str
    score: float
    reasons: list[str]


class InsightOut(Schema):
    id: int
    summary: str
    insight: str


class RecallOut(Schema):
    question: str
    strategy: str
    context_tokens: int
    memories: list[RecalledOut]
    consolidations: list[InsightOut]


class QueryOut(Schema):
    question: str
    answer: str
    cited: list[int] = Field(description="Ids of the memories the answer cites as [Memory N].")
    context: list[RecalledOut] = Field(description="The memories the model read, ranked, with why.")
    consolidations: list[InsightOut]
    strategy: str
    provider: str
    elapsed_ms: int


class EventOut(Schema):
    id: int
    action: str
    actor: str
    before: dict
    after: dict
    note: str
    created_at: datetime
