"""What the MCP tools return: the pydantic models the SDK turns into output schemas, and
the memories, insights and recall results made into them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from ..models import Consolidation, Memory
from ..recall import RecallResult
from ..services.browse import owned_source_ids

# Text shown per memory in lists and search results; get_memory shows all of it.
LIST_TEXT_CHARS = 2000


class Connection(BaseModel):
    linked_to: int
    relationship: str


class MemoryOut(BaseModel):
    id: int
    uri: str
    status: str = Field(description="pending (saved; extraction queued, already found by its text), ready, failed, review.")
    source: str
    summary: str
    text: str
    text_truncated: bool
    entities: list[str]
    topics: list[str]
    importance: float
    occurred_at: datetime
    created_at: datetime
    consolidated: bool
    connections: list[Connection]
    file_name: str
    error: str


class Found(BaseModel):
    rank: int
    id: int
    uri: str
    score: float
    reasons: list[str] = Field(description="Why recall picked this memory.")
    status: str
    source: str
    summary: str
    text: str
    occurred_at: datetime


class InsightOut(BaseModel):
    id: int
    uri: str
    summary: str
    insight: str
    source_ids: list[int]
    stale: bool


class SearchOut(BaseModel):
    query: str
    strategy: str
    memories: list[Found]
    insights: list[InsightOut]


class AskOut(BaseModel):
    question: str
    answer: str = Field(description="Cites the memories it used as [Memory N]; N is a memory id listed in `memories`.")
    cited: list[int]
    memories: list[Found] = Field(description="The memories the answer was written from, ranked.")
    insights: list[InsightOut]
    provider: str
    provider_is_language_model: bool


class AddOut(BaseModel):
    status: Literal["ingested", "duplicate"]
    memory_id: int
    uri: str
    memory_status: str
    message: str


class ListOut(BaseModel):
    memories: list[MemoryOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class DeleteOut(BaseModel):
    status: Literal["deleted"]
    memory_id: int
    message: str


class ConsolidateOut(BaseModel):
    consolidations: list[int]
    memories_consolidated: int
    message: str


class StatusOut(BaseModel):
    user: str
    total_memories: int
    ready: int
    pending: int
    failed: int
    review: int
    unconsolidated: int
    consolidations: int
    provider: str
    provider_is_language_model: bool


def memory_uri(pk: int) -> str:
    return f"memory://memories/{pk}"


def insight_uri(pk: int) -> str:
    return f"memory://insights/{pk}"


def memory_out(memory: Memory, *, full: bool = False) -> MemoryOut:
    """`memory` comes with its links prefetched through link_prefetches (_with_links), so
    its connections are only those within the owner's space."""
    text = memory.raw_text if full else memory.raw_text[:LIST_TEXT_CHARS]
    links = [Connection(linked_to=link.to_memory_id, relationship=link.relationship) for link in memory.links_out.all()]
    links += [Connection(linked_to=link.from_memory_id, relationship=link.relationship) for link in memory.links_in.all()]
    return MemoryOut(
        id=memory.pk,
        uri=memory_uri(memory.pk),
        status=memory.status,
        source=memory.source,
        summary=memory.summary,
        text=text,
        text_truncated=len(text) < len(memory.raw_text),
        entities=[str(e) for e in memory.entities],
        topics=[str(t) for t in memory.topics],
        importance=memory.importance,
        occurred_at=memory.occurred_at,
        created_at=memory.created_at,
        consolidated=memory.consolidated_at is not None,
        connections=links,
        file_name=memory.file_name,
        error=memory.error,
    )


def insight_out(consolidation: Consolidation) -> InsightOut:
    return InsightOut(
        id=consolidation.pk,
        uri=insight_uri(consolidation.pk),
        summary=consolidation.summary,
        insight=consolidation.insight,
        source_ids=owned_source_ids(consolidation),
        stale=consolidation.stale_at is not None,
    )


def recalled_out(result: RecallResult) -> tuple[list[Found], list[InsightOut]]:
    memories = [
        Found(
            rank=rank,
            id=r.memory.pk,
            uri=memory_uri(r.memory.pk),
            score=round(float(r.score), 4),
            reasons=list(r.reasons),
            status=r.memory.status,
            source=r.memory.source,
            summary=r.memory.summary,
            text=r.memory.raw_text[:LIST_TEXT_CHARS],
            occurred_at=r.memory.occurred_at,
        )
        for rank, r in enumerate(result.memories, 1)
    ]
    return memories, [insight_out(c) for c in result.consolidations]
