"""Benchmark: the list endpoint, GET /api/memories, a page at a time, at a few thousand memories.

    .venv/bin/python scripts/bench_api_list.py [--memories 5000] [--links-per-memory 3] [--repeat 7]

Runs against a throwaway SQLite database in a temporary data dir (the real data dir is not
touched). Prints the median time and the number of SQL queries of a few pages of the
endpoint as it is, and for comparison the same page read the old way: every row annotated
with its link count (a GROUP BY over both link joins, which nothing in the response read),
counted through that annotation, and the links prefetched on top.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchlib import fresh_django  # noqa: E402


def count_queries(connection, fn) -> int:
    # Counted by wrapping the cursor: a request through the test client resets
    # connection.queries when it starts, so CaptureQueriesContext would see none.
    calls = []
    with connection.execute_wrapper(
        lambda execute, sql, params, many, context: calls.append(sql) or execute(sql, params, many, context)
    ):
        fn()
    return len(calls)


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--links-per-memory", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    data_dir = fresh_django("bench-api-list-", LOG_LEVEL="WARNING")
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import Count
    from django.test import Client

    from memories.api.common import page
    from memories.api.memories import with_connections
    from memories.models import Memory, MemoryLink
    from memories.services.browse import filter_memories

    owner = get_user_model().objects.create_user("bench", password="bench-password-123")
    rng = random.Random(7)
    words = "alpha beta gamma delta agents memory planning research inbox product meeting budget lisbon oslo".split()
    started = time.perf_counter()
    Memory.objects.bulk_create(
        (
            Memory(
                owner=owner,
                raw_text=(text := " ".join(rng.choices(words, k=40))),
                summary=text[:200],
                topics=rng.sample(words, 2),
                entities=rng.sample(words, 2),
                importance=rng.random(),
                status="ready",
                content_hash=f"{i:064x}",
                source="bench",
            )
            for i in range(args.memories)
        ),
        batch_size=2000,
    )
    ids = list(Memory.objects.filter(owner=owner).values_list("pk", flat=True))
    pairs = {(a, b) for a in ids for b in rng.sample(ids, args.links_per_memory) if a != b}
    MemoryLink.objects.bulk_create(
        (MemoryLink(from_memory_id=a, to_memory_id=b, relationship="bench") for a, b in pairs), batch_size=5000
    )
    print(f"seeded {args.memories:,} memories and {len(pairs):,} links in {time.perf_counter() - started:.1f}s ({data_dir})")

    client = Client(HTTP_HOST="localhost")
    client.force_login(owner)
    middle = args.memories // 2
    cases = {
        "page 1 (newest, 50)": ("/api/memories", {}),
        "page at 50% depth (newest, 50)": ("/api/memories", {"offset": middle}),
        "page 1 (importance, 200)": ("/api/memories", {"sort": "importance", "limit": 200}),
        "topic filter (50)": ("/api/memories", {"topic": "lisbon"}),
    }

    def old_way(sort="new", limit=50, offset=0, topic=""):
        annotated = filter_memories(owner=owner, sort=sort, topic=topic).annotate(
            link_count=Count("links_out", distinct=True) + Count("links_in", distinct=True)
        )
        result = page(with_connections(annotated, owner=owner), limit=limit, offset=offset)
        for memory in result["items"]:  # what serialising the connections reads
            list(memory.links_out.all()), list(memory.links_in.all())

    print(f"\n{'request':<32} {'endpoint ms':>12} {'queries':>8} {'old way ms':>11} {'queries':>8}")
    for label, (url, params) in cases.items():
        assert client.get(url, params).status_code == 200
        endpoint_queries = count_queries(connection, lambda: client.get(url, params))
        endpoint = median_ms(lambda: client.get(url, params), args.repeat)
        kwargs = {
            "sort": params.get("sort", "new"),
            "limit": params.get("limit", 50),
            "offset": params.get("offset", 0),
            "topic": params.get("topic", ""),
        }
        old_queries = count_queries(connection, lambda: old_way(**kwargs))
        old = median_ms(lambda: old_way(**kwargs), args.repeat)
        print(f"{label:<32} {endpoint:>12.1f} {endpoint_queries:>8} {old:>11.1f} {old_queries:>8}")


if __name__ == "__main__":
    main()
