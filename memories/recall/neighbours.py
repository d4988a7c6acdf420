"""Support from the company a hit keeps: the turns around it in one conversation or
document, and the memories linked to it. What a question's words miss (the reply to
"what did you research?" rarely repeats "research") comes along with its hit."""

from __future__ import annotations

from collections import defaultdict

from django.db import connection

from ..textutil import source_group as source_group  # read here and by the answerer
from .candidates import Candidate
from .readable import READABLE_SQL
from .sql import LINK_TABLE, MEMORY_TABLE, placeholders

W_NEIGHBOUR = 0.5  # share of a hit's score a turn next to it gets (halved per step away)
W_LINK = 0.4  # share of a hit's score a memory linked to it gets
W_AFTER = 1.5  # a turn after a hit (its reply) gets this much of W_NEIGHBOUR, one before it 2 - W_AFTER
NEIGHBOUR_WINDOW = 2  # turns either side in a "source:position" group (see source_group)
SEEDS = 25  # hits whose neighbours and links are brought in


def seeds_of(candidates: dict[int, Candidate]) -> list[Candidate]:
    """The hits whose company is brought in: the best-scored that matched the question
    or its dates."""
    seeds = sorted(candidates.values(), key=lambda c: -c.base)[:SEEDS]
    return [s for s in seeds if s.relevance > 0 or s.date_reason]


def around(owner, seeds: list[Candidate]) -> dict[int, list[tuple[int, int]]]:
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
            f"SELECT id, source FROM {MEMORY_TABLE} WHERE {READABLE_SQL} AND id IN ({placeholders(window)}) ORDER BY id",
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


def links(seeds: list[Candidate]) -> list[tuple[int, int, str]]:
    """(seed id, linked memory id, relationship) for each link of a seed, either way."""
    ids = [s.id for s in seeds]
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT from_memory_id, to_memory_id, relationship FROM {LINK_TABLE} "
            f"WHERE from_memory_id IN ({placeholders(ids)}) OR to_memory_id IN ({placeholders(ids)}) LIMIT 500",
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


def brought_in(near: dict[int, list[tuple[int, int]]], linked: list[tuple[int, int, str]]) -> set[int]:
    """Every memory the seeds' company names."""
    return {pk for company in near.values() for pk, _ in company} | {b for _, b, _ in linked}


def lend_support(
    candidates: dict[int, Candidate],
    seeds: list[Candidate],
    near: dict[int, list[tuple[int, int]]],
    linked: list[tuple[int, int, str]],
) -> None:
    """Each memory of a seed's company gets a share of the seed's score as a bonus (the
    best share any seed lends it), with the reason."""
    support: dict[int, tuple[float, str]] = {}

    def lend(seed: Candidate, pk: int, share: float, reason: str) -> None:
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
        for pk, steps in near.get(seed.id, []):
            where = "same conversation as"
            # What follows a hit is more often its answer than what precedes it.
            share = W_NEIGHBOUR * 0.5 ** (abs(steps) - 1) * (W_AFTER if steps > 0 else 2 - W_AFTER)
            lend(seed, pk, share, f"{where} #{seed.id}")
    by_id = {s.id: s for s in seeds}
    for a, b, relationship in linked:
        lend(by_id[a], b, W_LINK, f"linked to #{a}: {relationship}"[:120])
    for pk, (amount, reason) in support.items():
        candidates[pk].bonus += amount
        candidates[pk].reasons.append(reason)
