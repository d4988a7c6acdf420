"""Benchmark: seed N memories for one owner and time the memory bank page.

    .venv/bin/python scripts/bench_memory_bank.py [--memories 100000] [--repeat 5] [--vocabulary tiny|realistic]

--vocabulary tiny (the worst case: 14 words, so every word is in nearly every memory) or
realistic (Zipf-distributed words from 5,000, 300 topics, 2,000 entities).

Runs against a throwaway SQLite database in a temporary data dir (the real data dir is
not touched). Prints the median time of each request, and for comparison the time of the
naive approach (the link_count-annotated queryset paged with OFFSET and counted).
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--vocabulary", choices=("tiny", "realistic"), default="realistic")
    args = parser.parse_args()

    data_dir = fresh_django("bench-bank-", LOG_LEVEL="WARNING")
    from django.test import Client
    from django.contrib.auth import get_user_model
    from django.db.models import Count

    from memories.models import Memory, MemoryLink

    owner = get_user_model().objects.create_user("bench", password="bench-password-123")
    words = "alpha beta gamma delta agents memory planning research inbox product meeting budget lisbon oslo".split()
    rng = random.Random(7)
    if args.vocabulary == "realistic":
        syllables = "ka lo mi ra tu ne si po da ve ri ko ma lu te".split()
        vocabulary = list(dict.fromkeys("".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(8000)))[:5000]
        vocabulary[100:104] = ["tulip", "lisbon", "oslo", "garden"]
        weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
        topics, entities = vocabulary[:300], [w.capitalize() for w in vocabulary[50:2050]]
        topics[0], entities[0] = "café", "Zürich"
    else:
        vocabulary, weights, topics, entities = words, None, words, words
    started = time.perf_counter()
    batch = []
    for i in range(args.memories):
        text = " ".join(rng.choices(vocabulary, weights=weights, k=50))
        if rng.random() < 0.01:
            text += " tulips"
        batch.append(
            Memory(
                owner=owner,
                raw_text=text,
                summary=text[:200],
                topics=list(dict.fromkeys(rng.choices(topics, weights=weights and weights[: len(topics)], k=3))),
                entities=list(dict.fromkeys(rng.choices(entities, weights=weights and weights[: len(entities)], k=2))),
                importance=rng.random(),
                status="ready",
                content_hash=f"{i:064x}",
                source="bench",
            )
        )
        if len(batch) == 5000:
            Memory.objects.bulk_create(batch)
            batch = []
    Memory.objects.bulk_create(batch)
    ids = sorted(Memory.objects.values_list("pk", flat=True))
    MemoryLink.objects.bulk_create(
        MemoryLink(from_memory_id=a, to_memory_id=b, relationship="bench")
        for a, b in zip(ids[: len(ids) // 5 : 2], ids[1 : len(ids) // 5 : 2])
    )
    print(
        f"seeded {args.memories:,} memories and {MemoryLink.objects.count():,} links in {time.perf_counter() - started:.1f}s ({data_dir})"
    )

    client = Client(HTTP_HOST="localhost")  # settings allow only local hosts, not the test client's "testserver"
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
        "topic filter (non-ASCII)": "/memories/?topic=caf%C3%A9",
        "entity filter (non-ASCII)": "/memories/?entity=Z%C3%BCrich",
        "text search, two words": "/memories/?q=oslo+lisbon",
        "text search, stemmed (tulip)": "/memories/?q=tulip",
        "text search + topic filter": "/memories/?q=garden&topic=lisbon",
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

    naive = (
        Memory.objects.filter(owner=owner)
        .annotate(link_count=Count("links_out", distinct=True) + Count("links_in", distinct=True))
        .order_by("-created_at", "-id")
    )
    print("\nfor comparison, the annotated queryset with COUNT + OFFSET:")
    for label, fn in {
        "count": lambda: naive.count(),
        "page 1": lambda: list(naive[:24]),
        "page at 90% depth": lambda: list(naive[int(args.memories * 0.9) : int(args.memories * 0.9) + 24]),
    }.items():
        t = time.perf_counter()
        fn()
        print(f"{label:<34} {(time.perf_counter() - t) * 1000:>10.1f}")


if __name__ == "__main__":
    main()
