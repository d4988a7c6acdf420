"""The tools and resources an agent sees, on the official MCP SDK's MCPServer.

Every tool is a thin call into the services, made as the caller: the owner of the API token
that authenticated the HTTP request, or the user `manage.py mcp` was started for. Service
calls run through `sync_to_async(thread_sensitive=True)`: under WSGI that is the request's
own thread (its database connection, closed by Django at the end of the request); under
stdio one thread for the whole session.

Errors a caller can act on are ToolErrors carrying the API's own messages; anything else
reaches the client as the SDK's bare "Error executing tool <name>", never a traceback.

Each tool and resource is a module-level function, marked with @tool or @resource (what
the SDK shows of it); build_server registers them all on a new MCPServer. Running a call as
the caller is caller.py; what the tools return, outputs.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, Field

from .. import __version__
from ..models import ApiToken, Consolidation, Memory
from ..services import (
    ConsolidationBusy,
    answer_question,
    consolidate_owner,
    filter_memories,
    ingest_text,
)
from ..services import delete_memory as tombstone_memory
from ..services import update_memory as correct_memory
from ..services.browse import SORTS, link_prefetches
from ..services.query import clean_question, recall_context
from ..services.status import engine_status, space_counts
from .caller import Caller, own_memory, rate_limit, run_tool
from .outputs import (
    AddOut,
    AskOut,
    ConsolidateOut,
    DeleteOut,
    ListOut,
    MemoryOut,
    SearchOut,
    StatusOut,
    insight_out,
    memory_out,
    memory_uri,
    recalled_out,
)

MAX_ID = 2**63 - 1


# -- what the tools take ---------------------------------------------------------------------

StatusName = Literal[tuple(Memory.Status.values)]  # type: ignore[valid-type]
SortName = Literal[tuple(SORTS)]  # type: ignore[valid-type]
MemoryId = Annotated[int, Field(ge=1, le=MAX_ID, description="A memory id, as search_memories and list_memories give it.")]


# -- the server ------------------------------------------------------------------------------

INSTRUCTIONS = """\
This is the user's long-term memory. Before answering a question about the user, their work,
people or past events, call `search_memories` (ranked memories with the reasons they were
picked) or `ask` (an answer citing [Memory N]). When the user tells you something worth keeping,
call `add_memory`; it is searchable at once. Memories are read as resources at
memory://memories/{id}, insights at memory://insights/{id}. `delete_memory` is a recorded
decision: the same content is refused afterwards until the user restores it."""

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


# Each tool and resource with what the SDK is told about it; build_server registers them.
_TOOLS: list[tuple[Callable, dict]] = []
_RESOURCES: list[tuple[str, Callable, dict]] = []


def tool(**options):
    def register(fn):
        _TOOLS.append((fn, options))
        return fn

    return register


def resource(uri: str, **options):
    def register(fn):
        _RESOURCES.append((uri, fn, options))
        return fn

    return register


@tool(
    title="Remember",
    description=(
        "Store a new memory in the user's space: a note, a fact, a decision, what someone said. "
        "Extraction (summary, entities, topics) runs in the background, but the memory is found by "
        "search_memories and ask at once. The same text twice is one memory; deleted content is refused."
    ),
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
)
async def add_memory(
    text: Annotated[str, Field(min_length=1, max_length=1_000_000, description="What to remember, in plain words.")],
    source: Annotated[str, Field(max_length=500, description="Where it came from: an app, a conversation, a file name.")] = "mcp",
    occurred_at: Annotated[
        str | None, Field(max_length=40, description="When it happened, ISO 8601 (2025-03-15 or 2025-03-15T14:30:00+01:00).")
    ] = None,
) -> AddOut:
    def do(caller: Caller) -> AddOut:
        rate_limit(caller, "ingest")
        result = ingest_text(
            owner=caller.owner, text=text, source=source or "mcp", occurred_at=occurred_at, actor=caller.actor, queue=True
        )
        return AddOut(
            status="ingested" if result.created else "duplicate",
            memory_id=result.memory.pk,
            uri=memory_uri(result.memory.pk),
            memory_status=result.memory.status,
            message=result.message,
        )

    return await run_tool(do, needs=ApiToken.Scope.WRITE)


@tool(
    title="Search memories",
    description=(
        "Find the user's memories relevant to a query, best first, each with the reasons recall picked it "
        "(matched words, dates, entities, links) and the insights built over them. Use it before answering "
        "anything about the user's past."
    ),
    annotations=READ,
)
async def search_memories(
    query: Annotated[str, Field(min_length=1, max_length=2000, description="A question or key words.")],
    k: Annotated[int, Field(ge=1, le=100, description="How many memories to return at most.")] = 10,
) -> SearchOut:
    def do(caller: Caller) -> SearchOut:
        question = clean_question(query)
        rate_limit(caller, "recall")
        try:
            result = recall_context(owner=caller.owner, question=question, k=k)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        memories, insights = recalled_out(result)
        return SearchOut(query=question, strategy=result.strategy, memories=memories, insights=insights)

    return await run_tool(do)


@tool(
    title="Ask",
    description=(
        "Answer a question from the user's memories only. The answer cites the memories it used as "
        "[Memory N]; every cited N is one of the returned `memories`, which are what the answer was written from."
    ),
    annotations=READ,
)
async def ask(
    question: Annotated[str, Field(min_length=1, max_length=2000, description="The question.")],
    k: Annotated[
        int | None, Field(ge=1, le=100, description="How many memories the answer may read (default: the server's).")
    ] = None,
) -> AskOut:
    def do(caller: Caller) -> AskOut:
        rate_limit(caller, "query")
        try:
            result = answer_question(owner=caller.owner, question=question, k=k, actor=caller.actor)
        except ValueError as exc:  # an empty question once whitespace is squeezed out
            raise ToolError(str(exc)) from None
        memories, insights = recalled_out(result.recall)
        return AskOut(
            question=result.question,
            answer=result.answer,
            cited=result.cited,
            memories=memories,
            insights=insights,
            provider=result.provider,
            provider_is_language_model=result.provider_is_language_model,
        )

    return await run_tool(do)


@tool(
    title="Get a memory",
    description="One memory with its whole text, summary, entities, topics and connections.",
    annotations=READ,
)
async def get_memory(memory_id: MemoryId) -> MemoryOut:
    return await run_tool(lambda caller: memory_out(own_memory(caller, memory_id), full=True))


@tool(
    title="List memories",
    description=(
        "Browse the user's memories a page at a time, newest first by default; filter by words in the text, "
        "a topic, an entity or a status. For relevance ranking use search_memories."
    ),
    annotations=READ,
)
async def list_memories(
    query: Annotated[str, Field(max_length=500, description="Words the text, summary or source must contain.")] = "",
    topic: Annotated[str, Field(max_length=200, description="Only memories with this topic.")] = "",
    entity: Annotated[str, Field(max_length=200, description="Only memories naming this entity.")] = "",
    status: Annotated[StatusName | None, Field(description="Only memories in this state.")] = None,
    sort: Annotated[SortName, Field(description="new, old, importance or occurred (when it happened).")] = "new",
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=10**9)] = 0,
) -> ListOut:
    def do(caller: Caller) -> ListOut:
        found = filter_memories(
            owner=caller.owner, q=query.strip(), topic=topic.strip(), entity=entity.strip(), status=status or "", sort=sort
        ).prefetch_related(*link_prefetches(owner=caller.owner))
        total = found.count()
        page = [memory_out(m) for m in found[offset : offset + limit]]
        return ListOut(
            memories=page,
            total=total,
            limit=limit,
            offset=offset,
            next_offset=offset + limit if offset + limit < total else None,
        )

    return await run_tool(do)


@tool(
    title="Correct a memory",
    description="Correct what extraction wrote: summary, entities, topics, importance or when it happened. "
    "Fields left out stay as they are; every change is recorded in the memory's history.",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
)
async def update_memory(
    memory_id: MemoryId,
    summary: Annotated[str | None, Field(min_length=1, max_length=10_000)] = None,
    entities: Annotated[list[str] | None, Field(max_length=30, description="People, places, projects it names.")] = None,
    topics: Annotated[list[str] | None, Field(max_length=30)] = None,
    importance: Annotated[float | None, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = None,
    occurred_at: Annotated[str | None, Field(max_length=40, description="ISO 8601 date or datetime.")] = None,
) -> MemoryOut:
    changes = {
        name: value
        for name, value in (
            ("summary", summary),
            ("entities", entities),
            ("topics", topics),
            ("importance", importance),
            ("occurred_at", occurred_at),
        )
        if value is not None
    }

    def do(caller: Caller) -> MemoryOut:
        if not changes:
            raise ToolError("Give at least one of summary, entities, topics, importance, occurred_at.")
        correct_memory(owner=caller.owner, memory_id=memory_id, changes=changes, actor=caller.actor)
        return memory_out(own_memory(caller, memory_id), full=True)

    return await run_tool(do, needs=ApiToken.Scope.WRITE)


@tool(
    title="Delete a memory",
    description=(
        "Delete a memory: it leaves search and answers at once, and the same content is refused if it is "
        "added again, until the user restores it (the bank's deleted page). Insights built on it turn stale."
    ),
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False),
)
async def delete_memory(memory_id: MemoryId) -> DeleteOut:
    def do(caller: Caller) -> DeleteOut:
        if tombstone_memory(owner=caller.owner, memory_id=memory_id, actor=caller.actor) is None:
            raise ToolError(f"No memory {memory_id}.")
        return DeleteOut(status="deleted", memory_id=memory_id, message=f"Deleted memory {memory_id}.")

    return await run_tool(do, needs=ApiToken.Scope.ADMIN)


@tool(
    title="Consolidate",
    description="Connect the user's new memories and write insights over them now (it also runs every 30 minutes).",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False),
)
async def consolidate() -> ConsolidateOut:
    def do(caller: Caller) -> ConsolidateOut:
        rate_limit(caller, "consolidate")
        try:
            outcome = consolidate_owner(owner=caller.owner, actor=caller.actor)
        except ConsolidationBusy as exc:
            raise ToolError(str(exc)) from None
        run = outcome.run
        if run.error and not outcome.consolidations:
            raise ToolError(f"The provider failed: {run.error}")
        made = len(outcome.consolidations)
        message = (
            f"Made {made} consolidation{'s' * (made != 1)} over {run.memories_consolidated} memories."
            if made
            else "Nothing to consolidate: fewer than two new memories are ready."
        )
        return ConsolidateOut(
            consolidations=[c.pk for c in outcome.consolidations],
            memories_consolidated=run.memories_consolidated,
            message=message,
        )

    return await run_tool(do, needs=ApiToken.Scope.WRITE)


@tool(title="Status", description="Counts of the user's memory space and which engine is working.", annotations=READ)
async def status() -> StatusOut:
    def do(caller: Caller) -> StatusOut:
        counts = space_counts(owner=caller.owner)
        engine = engine_status()
        return StatusOut(
            user=caller.owner.get_username(),
            total_memories=counts["memories"],
            ready=counts["ready"],
            pending=counts["pending"],
            failed=counts["failed"],
            review=counts["review"],
            unconsolidated=counts["unconsolidated"],
            consolidations=counts["consolidations"],
            provider=engine.label or f"unavailable: {engine.error}",
            provider_is_language_model=engine.is_language_model,
        )

    return await run_tool(do)


@resource(
    "memory://memories/{memory_id}",
    name="memory",
    title="A memory",
    description="One memory of the user's, as JSON (the same fields get_memory returns).",
    mime_type="application/json",
)
async def memory_resource(memory_id: str) -> str:
    def do(caller: Caller) -> str:
        try:
            memory = own_memory(caller, _resource_id(memory_id)) if memory_id.isdigit() else None
        except Memory.DoesNotExist:
            memory = None
        if memory is None:
            raise ResourceNotFoundError(f"No memory {memory_id}.")
        return memory_out(memory, full=True).model_dump_json(indent=2)

    return await run_tool(do)


@resource(
    "memory://insights/{insight_id}",
    name="insight",
    title="An insight",
    description="One consolidation (an insight over several memories) of the user's, as JSON, with its source ids.",
    mime_type="application/json",
)
async def insight_resource(insight_id: str) -> str:
    def do(caller: Caller) -> str:
        consolidation = (
            Consolidation.all_objects.owned_by(caller.owner).filter(pk=_resource_id(insight_id)).first()
            if insight_id.isdigit()
            else None
        )
        if consolidation is None:
            raise ResourceNotFoundError(f"No insight {insight_id}.")
        out = insight_out(consolidation).model_dump(mode="json")
        out["retired"] = consolidation.retired_at is not None
        out["created_at"] = consolidation.created_at.isoformat()
        return json.dumps(out, indent=2)

    return await run_tool(do)


def build_server() -> MCPServer:
    server = MCPServer(name="always-on-memory", title="Always-On Memory", version=__version__, instructions=INSTRUCTIONS)
    for fn, options in _TOOLS:
        server.tool(**options)(fn)
    for uri, fn, options in _RESOURCES:
        server.resource(uri, **options)(fn)
    _refuse_unknown_arguments(server)
    return server


def _refuse_unknown_arguments(server: MCPServer) -> None:
    """Every tool's arguments are exactly its schema's: a misspelled `occured_at` is an error
    the agent reads and corrects, not a value quietly dropped (the memory dated "now"). The
    SDK builds each tool's argument model with pydantic's default, which ignores extra keys;
    here each gets extra="forbid", which also puts additionalProperties: false in its schema.
    (The tool list is the SDK's private _tool_manager: mcp is pinned, and test_mcp.py checks it.)"""
    for tool in server._tool_manager.list_tools():
        loose = tool.fn_metadata.arg_model
        strict = type(loose.__name__, (loose,), {"model_config": ConfigDict(**loose.model_config, extra="forbid")})
        tool.fn_metadata.arg_model = strict
        tool.parameters = strict.model_json_schema(by_alias=True)


def _resource_id(value: str) -> int:
    pk = int(value)
    return pk if 1 <= pk <= MAX_ID else 0


server = build_server()
