"""The token budget: which of the ranked memories fit the context, and which of them are
shown by their summary alone."""

from __future__ import annotations

import zlib
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache

from django.conf import settings
from django.db import connection

from ..llm.base import AnswerContext
from ..models import Memory
from ..textutil import estimate_tokens
from .candidates import Candidate
from .readable import READABLE_SQL, readable_memories
from .sql import MEMORY_TABLE, live_memories
from .result import memory_note

# Relevant memories are the wordier ones; hybrid keeps its context no dearer than the
# original's (the newest k) by pacing: its first FULL_TEXT_RANKS memories are shown whole,
# and below them a memory whose text is longer than BRIEF_CHARS (result.py) is shown by
# its summary whenever showing it whole would lift the running cost above the owner's
# typical memory (measured on the newest ones, the memories the original design reads).
FULL_TEXT_RANKS = 5
TYPICAL_SAMPLE = 50


def max_context_tokens() -> int:
    """Context the model reads at most (MEMORY_RECALL_MAX_TOKENS); the original design had no
    limit (50 memories of up to 4000 characters each)."""
    return settings.MEMORY_RECALL_MAX_TOKENS


def within_budget(owner, ranked: list[Candidate], k: int) -> tuple[list[tuple[Candidate, Memory]], frozenset[int]]:
    """The best k that fit the token budget, and which of them are shown brief (see
    FULL_TEXT_RANKS). A memory too long for what is left is skipped, not truncated:
    shorter ones below it may still fit."""
    budget = max_context_tokens()
    head = ranked[: k + 10]
    # The first k are nearly always the ones shown; the spares only when one was too long.
    memories = live_memories([c.id for c in head[:k]])
    typical = _typical_cost(owner)
    chosen, brief, used = [], set(), 0
    for i, c in enumerate(head):
        if i == k:
            memories.update(live_memories([c.id for c in head[k:]]))
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
    """What showing the memory costs in context tokens: as stored when it was saved
    (context_cost_of) while that still agrees with the memory, else rendered and
    remembered until it is edited."""
    stored = memory.__dict__.get("context_cost")
    if stored:
        fingerprint, full, short = stored.split(" ")
        if int(fingerprint) == _fingerprint(memory):
            # The note's length without its id, which a memory saved the first time has not yet.
            return max(1, (int(short if brief else full) + len(str(memory.pk)) + 3) // 4)
    key = (memory.pk, memory.updated_at, brief)
    cost = _COSTS.get(key)
    if cost is None:
        if len(_COSTS) > 100_000:
            _COSTS.clear()
        cost = _COSTS[key] = estimate_tokens(AnswerContext(memories=[memory_note(memory, brief=brief)]).render())
    return cost


_COSTS: dict[tuple, int] = {}


# What showing a memory costs is worked out when it is saved (Memory.save, bulk_create,
# migration 0019) and stored in its `context_cost`: "<fingerprint> <chars> <brief chars>",
# the length of its note rendered alone, whole and brief, less its id. Rendering the notes
# of the memories new to the cache above was the budget's dearest part after the read.
# The fingerprint is a CRC-32 of everything the note shows (and of how notes render
# today, _note_format): a memory changed by a path that did not store it again (a bare
# queryset update of its summary, its importance faded) no longer matches and is rendered.


def context_cost_of(memory: Memory) -> str | None:
    """What Memory.context_cost stores for a memory as it is now (None: it cannot be shown yet)."""
    try:
        fingerprint = _fingerprint(memory)
        return f"{fingerprint} {_note_chars(memory, brief=False)} {_note_chars(memory, brief=True)}"
    except (AttributeError, TypeError, ValueError):
        return None


def _note_chars(memory: Memory, *, brief: bool) -> int:
    note = replace(memory_note(memory, brief=brief), id=0)
    return len(AnswerContext(memories=[note]).render()) - 1


def _fingerprint(memory: Memory) -> int:
    valid_until = memory.valid_until if memory.outdated_by_id else None
    shown = "\x1f".join(
        (
            memory.raw_text,
            memory.summary,
            repr(memory.entities),
            repr(memory.topics),
            memory.source,
            f"{memory.importance:.2f}",
            memory.occurred_at.strftime("%Y-%m-%d %H:%M") if memory.occurred_at else "",
            f"{memory.outdated_by_id} {valid_until:%Y-%m}" if valid_until else "",
            str((memory.metadata or {}).get("said_by") or "")[:100],
            _note_format(),
        )
    )
    return zlib.crc32(shown.encode("utf-8", "surrogatepass"))


@lru_cache(maxsize=1)
def _note_format() -> str:
    """How notes render today, as a figure: stored costs of a format since changed no
    longer match."""
    sample = Memory(
        pk=1,
        raw_text="Ann: We moved to Lisbon last May. It was a long drive, and the cat hated every hour of it.",
        summary="Ann moved to Lisbon.",
        entities=["Ann", "Lisbon", "Bob"],
        topics=["move", "drive", "cat"],
        source="chat:D1:3",
        importance=0.6,
        occurred_at=datetime(2024, 5, 8, 10, 30, tzinfo=UTC),
        valid_until=datetime(2025, 1, 1, tzinfo=UTC),
        outdated_by_id=2,
        metadata={"said_by": "assistant"},
    )
    rendered = AnswerContext(memories=[memory_note(sample, brief=b) for b in (False, True)]).render()
    return str(zlib.crc32(rendered.encode()))


def _typical_cost(owner) -> float:
    """Mean context cost of the owner's newest memories. Remembered per owner until a
    newer memory arrives: the newest one's id is one indexed lookup, the costs are not."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, updated_at FROM {MEMORY_TABLE} WHERE {READABLE_SQL} ORDER BY created_at DESC, id DESC LIMIT 1",
            [owner.pk],
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
