"""Benchmark: seed N memories for one owner and time the memory bank page.

    .venv/bin/python scripts/bench_memory_bank.py [--memories 100000] [--repeat 5]

Runs against a throwaway SQLite database in a temporary data dir (the real data dir is
not touched). Prints the median time of each request, and for comparison the time of the
naive approach (the link_count-annotated queryset paged with OFFSET and counted).
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="bench-bank-")
    os.environ["MEMORY_DATA_DIR"] = data_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.contrib.auth import get_user_model
    from django.db.models import Count

    from memories.models import Memory, MemoryLink

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create_user("bench", password="bench-password-123")
    words = "alpha beta gamma delta agents memory planning research inbox product meeting budget lisbon oslo".split()
    rng = random.Random(7)
    started = time.perf_counter()
    batch = []
    for i in range(args.memories):
        text = " ".join(rng.choices(words, k=50))
        batch.append(Memory(owner=owner, raw_text=text, summary=text[:200], topics=rng.sample(words, 3),
                            entities=rng.sample(words, 2), importance=rng.random(), status="ready",
                            content_hash=f"{i:064x}", source="bench"))
        if len(batch) == 5000:
            Memory.objects.bulk_create(batch)
            batch = []
    Memory.objects.bulk_create(batch)
    ids = sorted(Memory.objects.values_list("pk", flat=True))
    MemoryLink.objects.bulk_create(
        MemoryLink(from_memory_id=a, to_memory_id=b, relationship="bench") for a, b in zip(ids[: len(ids) // 5 : 2], ids[1 : len(ids) // 5 : 2])
    )
    print(f"seeded {args.memories:,} memories and {MemoryLink.objects.count():,} links in {time.perf_counter() - started:.1f}s ({data_dir})")

    client = Client()
    client.force_login(owner)
    newest = list(Memory.objects.filter(owner=owner).order_by("-created_at", "-id").values_list("pk", flat=True))
    deep_anchor = newest[int(len(newest) * 0.9)]
    by_importance = list(Memory.objects.filter(owner=owner).order_by("-importance", "-id").values_list("pk", flat=True))
    cases = {
        "page 1 (newest)": "/memories/",
        "page at 90% depth (newest)": f"/memories/?after={deep_anchor}",
        "page 1 (importance)": "/memories/?sort=importance",
        "page at 90% depth (importance)": f"/memories/?sort=importance&after={by_importance[int(len(by_importance) * 0.9)]}",
        "previous page at 90% depth": f"/memories/?before={deep_anchor}",
        "topic filter": "/memories/?topic=lisbon",
        "text search (full scan)": "/memories/?q=oslo+lisbon",
        "status partial (HTMX)": "/status/",
    }
    print(f"\n{'request':<34} {'median ms':>10} {'max ms':>8}")
    for label, url in cases.items():
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - t) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        print(f"{label:<34} {statistics.median(times):>10.1f} {max(times):>8.1f}")

    naive = Memory.objects.filter(owner=owner).annotate(
        link_count=Count("links_out", distinct=True) + Count("links_in", distinct=True)
    ).order_by("-created_at", "-id")
    print("\nfor comparison, the annotated queryset with COUNT + OFFSET:")
    for label, fn in {
        "count": lambda: naive.count(),
        "page 1": lambda: list(naive[:24]),
        "page at 90% depth": lambda: list(naive[int(args.memories * 0.9): int(args.memories * 0.9) + 24]),
    }.items():
        t = time.perf_counter()
        fn()
        print(f"{label:<34} {(time.perf_counter() - t) * 1000:>10.1f}")


if __name__ == "__main__":
    main()
