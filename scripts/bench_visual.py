"""Benchmark: seed N memories (with links, insights and runs) for one owner and time the data
behind the graph, timeline and stats pages.

    .venv/bin/python scripts/bench_visual.py [--memories 100000] [--repeat 5]

Runs against a throwaway SQLite database in a temporary data dir (the real data dir is not
touched) unless --database-url is given. Prints the median time of each call and what it sent.
"""

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchlib import fresh_django  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--database-url", help="A PostgreSQL database to use (its memories tables are filled).")
    args = parser.parse_args()

    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    fresh_django("bench-visual-")
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from memories.models import Consolidation, ConsolidationRun, Memory, MemoryLink
    from memories.services import visual

    owner = get_user_model().objects.create_user(f"bench-{int(time.time())}")
    words = "alpha beta gamma delta agents memory planning research inbox product meeting budget lisbon oslo".split()
    rng = random.Random(7)
    now = timezone.now()
    started = time.perf_counter()
    batch = []
    for i in range(args.memories):
        text = " ".join(rng.choices(words, k=30))
        batch.append(
            Memory(
                owner=owner,
                raw_text=text,
                summary=text[:200],
                topics=rng.sample(words, 3),
                entities=rng.sample(words, 2),
                importance=rng.random(),
                status="ready",
                content_hash=f"{owner.pk:08x}{i:056x}",
                source=rng.choice(["notes", "mail", "chat"]),
                occurred_at=now - timedelta(days=rng.randint(0, 1500)),
            )
        )
        if len(batch) == 5000:
            Memory.objects.bulk_create(batch)
            batch = []
    Memory.objects.bulk_create(batch)
    ids = list(Memory.objects.filter(owner=owner).order_by("pk").values_list("pk", flat=True))
    # Spread the stored times over two years, and consolidate 80% of them in batches of ten.
    step = max(1, len(ids) // 730)
    for day, start in enumerate(range(0, len(ids), step)):
        chunk = ids[start : start + step]
        when = now - timedelta(days=730 - day)
        Memory.objects.filter(pk__in=chunk).update(created_at=when)
    for start in range(0, int(len(ids) * 0.8), 10):
        group = ids[start : start + 10]
        c = Consolidation.objects.create(owner=owner, summary="bench", insight=f"insight over {group[0]}")
        c.sources.set(group)
        MemoryLink.objects.bulk_create(
            MemoryLink(from_memory_id=a, to_memory_id=b, relationship="related", consolidation=c)
            for a, b in zip(group, group[1:])
        )
        Memory.objects.filter(pk__in=group).update(consolidated_at=now)
    ConsolidationRun.objects.bulk_create(
        ConsolidationRun(owner=owner, started_at=now - timedelta(hours=h), finished_at=now) for h in range(0, 24 * 60, 30)
    )
    print(f"seeded {len(ids):,} memories in {time.perf_counter() - started:.0f} s")

    focus = ids[len(ids) // 3]
    calls = {
        "graph (default 200)": lambda: visual.graph_data(owner=owner),
        "graph limit=1000": lambda: visual.graph_data(owner=owner, limit=1000),
        "graph topic filter": lambda: visual.graph_data(owner=owner, topic="budget"),
        "graph focus depth=2": lambda: visual.graph_data(owner=owner, focus=focus, depth=2),
        "timeline month": lambda: visual.timeline_data(owner=owner, zoom="month"),
        "timeline day": lambda: visual.timeline_data(owner=owner, zoom="day"),
        "stats 30 days": lambda: visual.stats_data(owner=owner, days=30),
        "stats 365 days": lambda: visual.stats_data(owner=owner, days=365),
    }
    print(f"{'call':<22} {'median ms':>10} {'KB of JSON':>11}")
    for name, call in calls.items():
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            result = call()
            times.append((time.perf_counter() - t) * 1000)
        size = len(json.dumps(result, default=str)) / 1024
        print(f"{name:<22} {statistics.median(times):>10.0f} {size:>11.0f}")


if __name__ == "__main__":
    main()
