"""Benchmark: how long an import holds the database's write lock, at a few thousand memories.

    .venv/bin/python scripts/bench_import.py [--memories 5000] [--old]

Runs against a throwaway SQLite database in a temporary data dir (the real data dir is not
touched). Seeds a space (memories with their history, links, insights), exports it, and
imports it into an empty space and then again into the same space (the deduplicating path).
Prints the number of write transactions each import opened, the longest and the median
time spent inside one, the import's total time, and the longest a concurrent writer (a
thread writing a memory every 50 ms meanwhile) waited for its own small transaction. On
SQLite every other writer (an upload, the extraction worker, the watcher) waits while one
of the import's is open. With --old the same
export is also imported by the previous importer (one transaction for the whole file),
read from git, for comparison.
"""

import argparse
import io
import statistics
import subprocess
import sys
import threading
import time
import types
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchlib import fresh_django  # noqa: E402


class TimedTransactions:
    """Stands in for django.db.transaction in the importer's module: every outermost
    atomic() block it opens is timed, from entering (BEGIN IMMEDIATE) to leaving (COMMIT)."""

    def __init__(self, real):
        self.real = real
        self.times: list[float] = []
        self.depth = 0

    def __getattr__(self, name):
        return getattr(self.real, name)

    @contextmanager
    def atomic(self, *args, **kwargs):
        outermost = self.depth == 0 and not self.real.get_connection().in_atomic_block
        self.depth += 1
        started = time.perf_counter()
        try:
            with self.real.atomic(*args, **kwargs):
                yield
        finally:
            self.depth -= 1
            if outermost:
                self.times.append((time.perf_counter() - started) * 1000)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--old", action="store_true", help="also time the previous importer (git HEAD~ of --old-path)")
    parser.add_argument("--old-rev", default="", help="the commit whose --old-path is the old importer")
    parser.add_argument(
        "--old-path",
        default="memories/services/importer.py",
        help="the old importer's path in that commit (before the split: memories/services/portability.py)",
    )
    parser.add_argument("--pause", type=float, nargs="*", default=None, help="SQLITE_PAUSE values to compare (seconds)")
    parser.add_argument("--memory-batch", type=int, default=0, help="MEMORY_BATCH to use instead of the importer's")
    args = parser.parse_args()

    data_dir = fresh_django("bench-import-", LOG_LEVEL="WARNING", MEMORY_EMBEDDINGS="off")
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django_q.conf import Conf

    from memories.models import Consolidation, Event, Memory, MemoryLink, content_hash
    from memories.services import importer
    from memories.services.export import export_space

    Conf.SYNC = False  # queued tasks go to the ORM broker, not run here
    users = get_user_model().objects
    alice = users.create_user("alice", password="bench-password-123")
    words = "alpha beta gamma delta agents memory planning research inbox product meeting budget lisbon oslo".split()
    started = time.perf_counter()
    memories = Memory.objects.bulk_create(
        (
            Memory(
                owner=alice,
                raw_text=(text := f"Note {i}: " + " ".join(words[(i * 7 + k) % len(words)] for k in range(40))),
                summary=text[:200],
                topics=[words[i % len(words)]],
                entities=[words[(i + 3) % len(words)].title()],
                importance=(i % 10) / 10,
                status="ready",
                content_hash=content_hash(text),
                source="bench",
            )
            for i in range(args.memories)
        ),
        batch_size=2000,
    )
    Event.objects.bulk_create(
        (Event(owner=alice, subject_type="memory", subject_id=m.pk, action="created", actor="user:alice") for m in memories),
        batch_size=2000,
    )
    MemoryLink.objects.bulk_create(
        (MemoryLink(from_memory=a, to_memory=b, relationship="bench") for a, b in zip(memories, memories[1:])),
        batch_size=2000,
    )
    for start in range(0, len(memories), 50):
        insight = Consolidation.objects.create(owner=alice, summary=f"Batch {start}", insight=f"Insight over {start}")
        insight.sources.set(memories[start : start + 50])
    data = b"".join(export_space(owner=alice))
    print(
        f"seeded and exported {args.memories:,} memories, {args.memories:,} events, {args.memories - 1:,} links "
        f"({len(data) / 1e6:.1f} MB) in {time.perf_counter() - started:.1f}s ({data_dir})"
    )

    writer = users.create_user("writer", password="bench-password-123")

    def keep_writing(stop: threading.Event, waits: list[float]) -> None:
        """Another writer meanwhile (an upload, a worker): one small write transaction every
        50 ms, timed from asking for the lock to its commit."""
        from django.db import connection

        n = 0
        try:
            while not stop.is_set():
                n += 1
                began = time.perf_counter()
                with transaction.atomic():
                    Memory.objects.create(owner=writer, raw_text=f"w{n}", content_hash=content_hash(f"w{n} {time.time()}"))
                waits.append((time.perf_counter() - began) * 1000)
                stop.wait(0.05)
        finally:
            connection.close()

    def timed(module, owner, label):
        timer = TimedTransactions(transaction)
        module.transaction = timer
        stop, waits = threading.Event(), []
        other = threading.Thread(target=keep_writing, args=(stop, waits))
        other.start()
        try:
            began = time.perf_counter()
            result = module.import_space(owner=owner, lines=io.BytesIO(data))
            total = time.perf_counter() - began
        finally:
            module.transaction = transaction
            stop.set()
            other.join()
        times = timer.times
        print(
            f"{label:<34} {len(times):>6} {max(times):>10.1f} {statistics.median(times):>10.1f} {total:>8.1f} "
            f"{max(waits, default=0):>11.1f}   {result.memories:,} stored, {result.duplicates:,} already there"
        )

    print(f"\n{'import':<34} {'txns':>6} {'longest ms':>10} {'median ms':>10} {'total s':>8} {'writer ms':>11}")
    if args.memory_batch:
        importer.MEMORY_BATCH = args.memory_batch
    print(f"memories {importer.MEMORY_BATCH} a transaction, other records {importer.BATCH}")
    for i, pause in enumerate(args.pause or [importer.SQLITE_PAUSE]):
        importer.SQLITE_PAUSE = pause
        bob = users.create_user(f"bob-{i}", password="bench-password-123")
        timed(importer, bob, f"into an empty space, pause {pause * 1000:.0f} ms")
        timed(importer, bob, f"again into the same space, pause {pause * 1000:.0f} ms")
    if args.old:
        rev = args.old_rev or "HEAD~"
        source = subprocess.run(
            ["git", "show", f"{rev}:{args.old_path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        old = types.ModuleType("memories.services._importer_old")
        old.__package__ = "memories.services"
        sys.modules[old.__name__] = old  # dataclasses look their module up
        exec(compile(source, f"{rev}:{args.old_path}", "exec"), old.__dict__)  # noqa: S102 - the repository's own file
        timed(old, users.create_user("carol", password="bench-password-123"), f"old importer ({rev}), empty space")


if __name__ == "__main__":
    main()
