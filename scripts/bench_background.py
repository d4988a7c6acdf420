"""Background work against a user's writes: the service as `make run` starts it (gunicorn
with 2 workers and the task cluster) while a consolidation works through a backlog, an
import of a whole space runs and `embed --all` recomputes vectors, and clients add and ask
through the JSON API and MCP. Prints what the clients saw, idle and during the jobs, and
the longest write transaction each job held (on SQLite, how long every other writer had to
wait for it), then checks that every add the service acknowledged is stored.

    .venv/bin/python scripts/bench_background.py                       # SQLite, 5,000 memories
    .venv/bin/python scripts/bench_background.py --backlog 1500 --duration 60 --clients 6
    .venv/bin/python scripts/bench_background.py --database-url postgresql://postgres@127.0.0.1:5432/postgres

With --database-url a database of its own is made on that server (and dropped after).
Nothing here asserts a speed; the exit status is 1 when a call failed or an acknowledged
add is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from benchlib import free_port, percentile

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

# Runs a manage.py command with every outermost transaction timed: on SQLite each holds the
# write lock from BEGIN IMMEDIATE to COMMIT. The longest so far is written to a file after
# each one, so a job stopped at the end of the window still reports.
TRACED = r"""
import json, os, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
django.setup()
from django.core.management import call_command
from django.db import transaction
out, stats = sys.argv[1], {"longest_s": 0.0, "transactions": 0}
enter, exit_ = transaction.Atomic.__enter__, transaction.Atomic.__exit__
def timed_enter(self):
    connection = transaction.get_connection(self.using)
    if not connection.in_atomic_block:
        connection.bench_started = time.perf_counter()
    return enter(self)
def timed_exit(self, *exc):
    try:
        return exit_(self, *exc)
    finally:
        connection = transaction.get_connection(self.using)
        if not connection.in_atomic_block and getattr(connection, "bench_started", None):
            stats["longest_s"] = max(stats["longest_s"], time.perf_counter() - connection.bench_started)
            stats["transactions"] += 1
            connection.bench_started = None
            with open(out, "w") as f:
                json.dump(stats, f)
transaction.Atomic.__enter__, transaction.Atomic.__exit__ = timed_enter, timed_exit
call_command(*sys.argv[2:])
"""


def note(i: int) -> str:
    people = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivan", "Jun"]
    things = ["the Falcon launch", "the budget review", "a trip to Lisbon", "the hiring plan", "the pricing page",
              "the kitchen remodel", "marathon training", "the garden", "the database migration", "the book club"]  # fmt: skip
    return (
        f"{people[i % 10]} talked about {things[(i * 7) % 10]} on day {i}; "
        f"{people[(i * 3) % 10]} wants a follow-up on {things[(i * 3) % 10]} next week (note {i})."
    )


class Bench:
    def __init__(self, args):
        self.args = args
        self.root = Path(tempfile.mkdtemp(prefix="bench-background-"))
        self.env = {
            **os.environ,
            "MEMORY_DATA_DIR": str(self.root / "data"),
            "MEMORY_INBOX_DIR": str(self.root / "inbox"),
            "MEMORY_LLM_PROVIDER": "offline",
            "MEMORY_EMBEDDINGS": args.embeddings,
            "MEMORY_QUEUE_NAME": f"bench{os.getpid()}",
            "MEMORY_RATE_LIMIT_INGEST": "",
            "MEMORY_RATE_LIMIT_QUERY": "",
            "MEMORY_RATE_LIMIT_RECALL": "",
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL", "REDIS_URL", "DATABASE_URL"):
            self.env.pop(name, None)
        self.database = None
        if args.database_url:
            self.database = f"bench_background_{os.getpid()}"
            self._admin_sql(f"create database {self.database}")
            self.env["DATABASE_URL"] = args.database_url.rsplit("/", 1)[0] + "/" + self.database
        self.procs: dict[str, subprocess.Popen] = {}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def _admin_sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.args.database_url, autocommit=True) as db:
            db.execute(statement)

    def manage(self, *args, env=None) -> str:
        done = subprocess.run(
            [PYTHON, "manage.py", *args], cwd=ROOT, env={**self.env, **(env or {})}, capture_output=True, text=True
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def start(self, name: str, cmd: list[str], env=None) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "wb")
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env={**self.env, **(env or {})}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.procs[name] = proc
        return proc

    def sql(self, query: str) -> list[tuple]:
        out = self.manage(
            "shell",
            "-c",
            f"from django.db import connection\nc = connection.cursor(); c.execute({query!r}); import json; print(json.dumps(c.fetchall()))",
        )
        return json.loads(out.strip().splitlines()[-1])

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        if self.database:
            time.sleep(1)
            self._admin_sql(f"drop database if exists {self.database} with (force)")
        shutil.rmtree(self.root, ignore_errors=True)


class Calls:
    def __init__(self):
        self.lock = threading.Lock()
        self.times: dict[tuple[str, str], list[float]] = {}
        self.failed: list[str] = []
        self.acknowledged: set[int] = set()
        self.phase = "idle"

    def record(self, op: str, seconds: float, ok: bool, detail: str = "", memory_id: int | None = None) -> None:
        with self.lock:
            self.times.setdefault((self.phase, op), []).append(seconds)
            if not ok:
                self.failed.append(f"{self.phase} {op}: {detail[:200]}")
            if memory_id:
                self.acknowledged.add(memory_id)


def api_client(bench: Bench, token: str, n: int, stop: threading.Event, calls: Calls) -> None:
    def call(method, path, body=None):
        req = urllib.request.Request(
            bench.url + path,
            method=method,
            data=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=120) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except OSError as exc:
            return 0, str(exc).encode()

    i = 0
    while not stop.is_set():
        i += 1
        started = time.perf_counter()
        status, body = call(
            "POST", "/api/ingest", json.dumps({"text": f"client {n} add {i}: {note(10_000 + 97 * n + i)}"}).encode()
        )
        ok = status in (200, 201)
        calls.record(
            "add", time.perf_counter() - started, ok, f"{status} {body[:150]!r}", json.loads(body)["memory_id"] if ok else None
        )
        started = time.perf_counter()
        status, body = call("GET", f"/api/recall?q=client+{n}+add+{i}&k=10")
        calls.record("recall", time.perf_counter() - started, status == 200, f"{status} {body[:150]!r}")


def mcp_client(bench: Bench, token: str, n: int, stop: threading.Event, calls: Calls) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def loop():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            async with Client(streamable_http_client(bench.url + "/mcp", http_client=http)) as client:
                i = 0
                while not stop.is_set():
                    i += 1
                    started = time.perf_counter()
                    try:
                        result = await client.call_tool(
                            "add_memory", {"text": f"agent {n} note {i}: {note(50_000 + 97 * n + i)}"}
                        )
                        ok, detail = not result.is_error, " ".join(getattr(p, "text", "") for p in result.content)
                    except Exception as exc:  # a transport failure is a failed call too
                        result, ok, detail = None, False, repr(exc)
                    memory_id = result.structured_content.get("memory_id") if ok and result.structured_content else None
                    calls.record("mcp add", time.perf_counter() - started, ok, detail, memory_id)
                    started = time.perf_counter()
                    try:
                        found = await client.call_tool("search_memories", {"query": f"agent {n} note {i}"})
                        ok, detail = not found.is_error, ""
                    except Exception as exc:
                        ok, detail = False, repr(exc)
                    calls.record("mcp search", time.perf_counter() - started, ok, detail)

    asyncio.run(loop())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backlog", type=int, default=5000, help="memories consolidated, imported and embedded")
    parser.add_argument("--clients", type=int, default=8, help="client threads (a quarter of them MCP agents)")
    parser.add_argument("--idle-seconds", type=float, default=20, help="clients alone first, for the idle figures")
    parser.add_argument("--duration", type=float, default=120, help="seconds of clients while the jobs run")
    parser.add_argument("--embeddings", default="local", help="MEMORY_EMBEDDINGS for every process (make run: local)")
    parser.add_argument("--database-url", default="", help="a PostgreSQL server to make the bench database on")
    args = parser.parse_args()

    bench = Bench(args)
    try:
        print(
            f"setting up {args.backlog} memories ({'PostgreSQL' if args.database_url else 'SQLite'}, embeddings {args.embeddings})...",
            flush=True,
        )
        bench.manage("migrate", "-v0")
        tokens = json.loads(bench.manage("shell", "-c", (
            "import json\nfrom django.contrib.auth import get_user_model\nfrom memories.services.tokens import create_token\n"
            "out = {}\nfor name in ['backlog', 'importer', 'clients']:\n"
            "    user = get_user_model().objects.create_user(name)\n    out[name] = create_token(owner=user, name='bench')[1]\n"
            "print(json.dumps(out))"
        )).strip().splitlines()[-1])  # fmt: skip
        jsonl = bench.root / "backlog.jsonl"
        jsonl.write_text("\n".join(json.dumps({"text": note(i), "source": "bench"}) for i in range(args.backlog)))
        started = time.perf_counter()
        # Stored without vectors (fast); `embed --all` computes them during the window.
        bench.manage("ingest", "--jsonl", str(jsonl), "--user", "backlog", env={"MEMORY_EMBEDDINGS": "off"})
        export = bench.root / "space.jsonl"
        bench.manage("export", "--user", "backlog", "--output", str(export))
        print(f"  stored and exported in {time.perf_counter() - started:.0f} s", flush=True)

        bench.start(
            "web",
            [
                PYTHON,
                "-m",
                "gunicorn",
                "memoryagent.wsgi",
                "--bind",
                f"127.0.0.1:{bench.port}",
                "--workers",
                "2",
                "--timeout",
                "120",
            ],
        )
        bench.start("cluster", [PYTHON, "manage.py", "qcluster"])
        for _ in range(120):
            try:
                urllib.request.urlopen(bench.url + "/healthz", timeout=2)
                break
            except OSError:
                time.sleep(0.5)

        calls, stop = Calls(), threading.Event()
        mcp_count = max(1, args.clients // 4)
        threads = [
            threading.Thread(
                target=mcp_client if n < mcp_count else api_client, args=(bench, tokens["clients"], n, stop, calls), daemon=True
            )
            for n in range(args.clients)
        ]
        for thread in threads:
            thread.start()
        time.sleep(args.idle_seconds)

        calls.phase = "jobs"
        traces = {name: bench.root / f"{name}.trace.json" for name in ("consolidate", "import", "embed --all")}
        jobs = {
            "consolidate": ["consolidate", "--user", "backlog"],
            "import": ["import", str(export), "--user", "importer"],
            "embed --all": ["embed", "--all", "--user", "backlog"],
        }
        job_started = time.perf_counter()
        for name, command in jobs.items():
            bench.start(name.replace(" ", ""), [PYTHON, "-c", TRACED, str(traces[name]), *command])
        time.sleep(args.duration)
        stop.set()
        for thread in threads:
            thread.join(timeout=150)
        elapsed = time.perf_counter() - job_started

        print(
            f"\nclients: {args.clients} ({mcp_count} over MCP), {args.idle_seconds:.0f} s idle, then {args.duration:.0f} s with the jobs running"
        )
        print(f"{'phase':<6} {'operation':<11} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for (phase, op), seconds in sorted(calls.times.items(), key=lambda kv: (kv[0][0] != "idle", kv[0][1])):
            print(
                f"{phase:<6} {op:<11} {len(seconds):>6} {statistics.median(seconds) * 1000:>8.0f} {percentile(seconds, 95) * 1000:>8.0f} {max(seconds) * 1000:>8.0f}"
            )
        total = sum(len(v) for v in calls.times.values())
        print(f"calls made {total}, failed {len(calls.failed)}")
        for failure in calls.failed[:5]:
            print("  ", failure)

        print(f"\n{'job':<12} {'state after the window':<26} {'transactions':>12} {'longest write transaction':>26}")
        for name, trace in traces.items():
            proc = bench.procs[name.replace(" ", "")]
            state = f"finished ({proc.returncode})" if proc.poll() is not None else f"still running at {elapsed:.0f} s"
            stats = json.loads(trace.read_text()) if trace.exists() else {"longest_s": 0, "transactions": 0}
            print(f"{name:<12} {state:<26} {stats['transactions']:>12} {stats['longest_s'] * 1000:>23.0f} ms")

        ids = ",".join(str(i) for i in calls.acknowledged) or "0"
        stored = bench.sql(f"select count(*) from memories_memory where id in ({ids})")[0][0]
        print(f"\nadds acknowledged {len(calls.acknowledged)}, stored {stored}")
        return 0 if not calls.failed and stored == len(calls.acknowledged) else 1
    finally:
        bench.stop()


if __name__ == "__main__":
    sys.exit(main())
