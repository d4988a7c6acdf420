#!/usr/bin/env python
"""How long the scheduled consolidation takes to drain a backlog offline, and what it made.

    .venv/bin/python scripts/bench_consolidate.py [--size 10000] [--dataset ../shared/data/locomo-dev.json] [--database-url]

The backlog is every dialog turn of the LoCoMo file (real conversation) topped up to --size
with made-up notes (people, projects, topics and Zipf-drawn filler words, as bench_recall.py
writes them). Then consolidate_all() -- what the django-q2 schedule runs -- is timed once.
Runs on a throwaway SQLite file unless --database-url. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--dataset", default=str(ROOT.parent.parent / "shared/data/locomo-dev.json"))
    parser.add_argument("--database-url", action="store_true")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="bench-consolidate-"))
    os.environ["MEMORY_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    if not args.database_url:
        os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from bench_recall import realistic
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from memories.llm.extractive.similarity import by_meaning
    from memories.management.commands.evaluate import bulk_remember, load_locomo
    from memories.models import Consolidation, Memory, MemoryLink
    from memories.services.consolidate import consolidate_all

    owner = None
    try:
        call_command("migrate", verbosity=0)
        owner = get_user_model().objects.create_user(username=f"bench-{os.getpid()}")
        items = []
        if Path(args.dataset).exists():
            for conv in load_locomo(Path(args.dataset)):
                items += [
                    {
                        "text": t.text,
                        "source": f"{conv.sample_id}:{t.dia_id}",
                        "occurred_at": t.occurred_at,
                        "entities": [t.speaker] if t.speaker else [],
                    }
                    for t in conv.turns
                ]
        items = items[: args.size]
        rng = random.Random(11)
        start = timezone.make_aware(datetime(2024, 1, 1))
        items += [realistic(rng, i, start) for i in range(args.size - len(items))]
        began = time.perf_counter()
        for chunk in range(0, len(items), 5000):
            bulk_remember(owner=owner, items=items[chunk : chunk + 5000])
        loaded = time.perf_counter() - began
        print(
            f"database: {connection.vendor}; similarity: {'meaning' if by_meaning() else 'lexical (TF-IDF)'}; "
            f"{len(items):,} memories loaded in {loaded:.1f} s"
        )
        began = time.perf_counter()
        outcomes = consolidate_all()
        took = time.perf_counter() - began
        left = Memory.objects.filter(owner=owner, consolidated_at__isnull=True).count()
        made = Consolidation.objects.filter(owner=owner)
        unrelated = made.filter(summary__endswith="unrelated memories.").count()
        print(
            f"one scheduled run: {took:.1f} s; {sum(o.run.memories_consolidated for o in outcomes):,} memories consolidated, "
            f"{left} left waiting; {made.count():,} insights ({made.count() - unrelated:,} on a shared thread, "
            f"{unrelated:,} saying their memories are unrelated); {MemoryLink.objects.filter(consolidation__owner=owner).count():,} links"
        )
    finally:
        if owner is not None and args.database_url:
            owner.delete()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
