"""Load benchmark: N clients against a real server for a bounded time, then a loss check.

Starts everything from scratch in a temporary data dir: `migrate`, a user with an API
token, gunicorn with several workers, a django-q2 cluster, and a fake Gemini server on
127.0.0.1 that answers like the real API after a realistic delay (the service talks to it
through the real google-genai client). Then N client threads spend DURATION seconds doing
a mix of ingest / query / browse through the JSON API, and the script prints throughput,
p50/p95 latency per operation and error counts. Finally it waits for the task queue to
drain and checks that every ingest the server accepted is stored exactly once and ready.

    .venv/bin/python scripts/bench_load.py --clients 8 --duration 30
    .venv/bin/python scripts/bench_load.py --database-url postgresql://postgres@127.0.0.1:5432/memory_bench \
        --redis-url redis://127.0.0.1:6379/0 --web-workers 2 --clusters 2 --task-workers 1

With --database-url the service runs on that PostgreSQL database (migrated; the bench
user's rows are the only ones counted, other data is left alone) and with --redis-url the
task queue and cache are Redis: the scale-out configuration. --clusters starts that many
`qcluster` processes (each with --task-workers workers).

Nothing here asserts a speed: it prints numbers. The exit status is 1 only when an ingest
was lost or duplicated, or a client saw a server error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from benchlib import free_port, percentile

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

# --- a fake Gemini with latency ---------------------------------------------------------------
# (a small copy of what tests/fake_model_servers.py does: scripts do not import the tests)


class FakeGemini(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, latency: float, jitter: float):
        self.latency, self.jitter = latency, jitter
        self.calls: Counter = Counter()
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _GeminiHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request, client_address):
        pass  # a caller that hung up (the service stopping) is not news


class _GeminiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        server: FakeGemini = self.server
        system = " ".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
        prompt = "\n".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []) if "text" in p)
        if system.startswith("You turn one input"):
            role, text = "extract", json.dumps(self._extraction(prompt))
        elif system.startswith("You read a group"):
            role, text = "consolidate", json.dumps(self._consolidation(prompt))
        else:
            ids = re.findall(r"\[Memory (\d+)\]", prompt)[:2]
            role = "answer"
            text = (
                "From your memories: " + " ".join(f"a delivery is noted [Memory {i}]." for i in ids)
                if ids
                else "Your memories do not say."
            )
        with server.lock:
            server.calls[role] += 1
        time.sleep(max(0.0, random.gauss(server.latency, server.jitter)))
        reply = json.dumps(
            {
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": len(prompt) // 4, "candidatesTokenCount": len(text) // 4},
                "modelVersion": "fake-gemini",
            }
        ).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the service gave up on this call (it is being stopped)

    @staticmethod
    def _extraction(prompt: str) -> dict:
        inner = prompt.split("<input>", 1)[-1].split("</input>", 1)[0].strip()
        words = re.findall(r"[A-Za-z]{4,}", inner)
        return {
            "summary": inner[:160],
            "entities": sorted(set(w for w in words if w[0].isupper()))[:5],
            "topics": [w.lower() for w in words[:3]],
            "importance": 0.5,
            "occurred_at": None,
        }

    @staticmethod
    def _consolidation(prompt: str) -> dict:
        ids = [int(i) for i in re.findall(r"\[Memory (\d+)\]", prompt)]
        links = [{"from_id": a, "to_id": b, "relationship": "same week"} for a, b in zip(ids, ids[1:])]
        return {"summary": f"{len(ids)} related notes.", "insight": "Deliveries cluster on weekdays.", "connections": links}


# --- the service -----------------------------------------------------------------------------


class Service:
    def __init__(self, data: Path, fake_url: str, args):
        self.data = data
        self.port = free_port()
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "MEMORY_TASKS_SYNC", "DEBUG")}
        self.database_url = args.database_url
        if args.database_url:
            self.env["DATABASE_URL"] = args.database_url
        if args.redis_url:
            self.env["REDIS_URL"] = args.redis_url
        self.owner_id = None
        self.env.update(
            {
                "MEMORY_DATA_DIR": str(data),
                "MEMORY_INBOX_DIR": str(data / "inbox"),
                "MEMORY_LLM_PROVIDER": "gemini",
                "GEMINI_API_KEY": "bench-key",
                "GEMINI_BASE_URL": fake_url,
                "GEMINI_MODEL": "gemini-bench",
                "MEMORY_WORKERS": str(args.task_workers),
                "MEMORY_QUEUE_NAME": f"bench{os.getpid()}",
                # The benchmark measures the service, not the per-user rate limits (they would 429 most calls).
                "MEMORY_RATE_LIMIT_INGEST": "",
                "MEMORY_RATE_LIMIT_QUERY": "",
                "LOG_LEVEL": "WARNING",
            }
        )
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs = data / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    def manage(self, *args) -> str:
        return subprocess.run(
            [PYTHON, "manage.py", *args], cwd=ROOT, env=self.env, check=True, capture_output=True, text=True
        ).stdout

    def start(self, name: str, cmd: list[str]):
        with open(self.logs / f"{name}.log", "wb") as log:
            self.procs[name] = subprocess.Popen(
                cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def up(self) -> bool:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/status", timeout=2)
        except urllib.error.HTTPError as exc:
            return exc.code == 401
        except OSError:
            return False
        return True

    def stop(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def sql(self, query: str, params=()):
        # Only the bench user's memories: a PostgreSQL database may hold other data.
        query = query.replace("from memories_memory", f"from memories_memory where owner_id = {int(self.owner_id)}").replace(
            f"{int(self.owner_id)} where", f"{int(self.owner_id)} and"
        )
        if self.database_url:
            import psycopg

            with psycopg.connect(self.database_url) as db:
                return db.execute(query, params).fetchall()
        db = sqlite3.connect(self.data / "memory.sqlite3", timeout=30)
        try:
            return db.execute(query, params).fetchall()
        finally:
            db.close()


# --- the clients -----------------------------------------------------------------------------


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.status: Counter = Counter()
        self.errors: list[str] = []
        self.accepted: dict[int, str] = {}  # memory id -> text
        self.duplicates_answered = 0

    def record(self, op: str, seconds: float, status: int | str, detail: str = ""):
        with self.lock:
            self.latency[op].append(seconds)
            self.status[(op, status)] += 1
            if not isinstance(status, int) or status >= 500 or "database is locked" in detail:
                self.errors.append(f"{op}: {status} {detail[:200]}")


def client_loop(n: int, base: str, token: str, stop: threading.Event, results: Results, mix: list[tuple[str, float]]):
    rng = random.Random(n)
    seq = 0
    headers = {"Authorization": f"Bearer {token}"}
    ops, weights = zip(*mix)
    while not stop.is_set():
        op = rng.choices(ops, weights)[0]
        seq += 1
        if op == "ingest":
            text = (
                f"Client {n} note {seq}: parcel {rng.randrange(10**6)} for {rng.choice(['Ana', 'Bo', 'Chen', 'Dee'])} "
                f"arrived at {rng.randrange(24)}:00 on {rng.choice(['Monday', 'Tuesday', 'Friday'])}."
            )
            req = urllib.request.Request(
                base + "/api/ingest",
                data=json.dumps({"text": text, "source": "bench"}).encode(),
                headers={**headers, "Content-Type": "application/json"},
                method="POST",
            )
        elif op == "query":
            q = urllib.parse.quote(
                rng.choice(["When did the parcel for Chen arrive?", "What arrived on Friday?", "Who got parcels?"])
            )
            req = urllib.request.Request(f"{base}/api/query?q={q}", headers=headers)
            text = ""
        else:
            path = rng.choice(["/api/memories?limit=20", "/api/memories?q=parcel&limit=10", "/api/status", "/api/consolidations"])
            req = urllib.request.Request(base + path, headers=headers)
            text = ""
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                status, body = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        except OSError as exc:
            results.record(op, time.perf_counter() - started, type(exc).__name__, str(exc))
            continue
        results.record(op, time.perf_counter() - started, status, body[:300].decode("utf-8", "replace"))
        if op == "ingest" and status in (200, 201):
            memory_id = json.loads(body)["memory_id"]
            with results.lock:
                if status == 201:
                    results.accepted[memory_id] = text
                else:
                    results.duplicates_answered += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=30.0, help="Seconds of load.")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2, help="Threads per gunicorn worker (gthread when > 1).")
    parser.add_argument("--task-workers", type=int, default=2, help="Workers per qcluster.")
    parser.add_argument("--clusters", type=int, default=1, help="qcluster processes.")
    parser.add_argument("--database-url", default="", help="PostgreSQL instead of a fresh SQLite file.")
    parser.add_argument("--redis-url", default="", help="Redis as the task broker and cache.")
    parser.add_argument("--latency", type=float, default=0.4, help="Mean fake model latency in seconds.")
    parser.add_argument("--jitter", type=float, default=0.15)
    parser.add_argument("--mix", default="ingest=0.5,query=0.15,browse=0.35")
    parser.add_argument("--drain-timeout", type=float, default=300.0)
    parser.add_argument("--keep", action="store_true", help="Keep the data dir (and the process logs) afterwards.")
    args = parser.parse_args()
    mix = [(name, float(weight)) for name, weight in (part.split("=") for part in args.mix.split(","))]

    data = Path(tempfile.mkdtemp(prefix="memory-bench-"))
    fake = FakeGemini(args.latency, args.jitter)
    threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    service = Service(data, fake.url, args)
    try:
        print(f"data dir {data}; fake Gemini at {fake.url} ({args.latency * 1000:.0f} ms ± {args.jitter * 1000:.0f} ms)")
        service.manage("migrate", "-v0")
        owner_id, token = (
            service.manage(
                "shell",
                "-c",
                (
                    "from django.contrib.auth import get_user_model\n"
                    "from memories.services.tokens import create_token\n"
                    f"u = get_user_model().objects.create_user('bench{os.getpid()}-{int(time.time())}', password='bench-password-123')\n"
                    "print(u.pk, create_token(owner=u, name='bench')[1])"
                ),
            )
            .strip()
            .splitlines()[-1]
            .split()
        )
        service.owner_id = int(owner_id)
        service.start(
            "web",
            [
                PYTHON,
                "-m",
                "gunicorn",
                "memoryagent.wsgi",
                "--bind",
                f"127.0.0.1:{service.port}",
                "--workers",
                str(args.web_workers),
                "--threads",
                str(args.threads),
                "--timeout",
                "120",
            ],
        )
        for i in range(args.clusters):
            service.start(f"cluster{i}", [PYTHON, "manage.py", "qcluster"])
        deadline = time.monotonic() + 60
        while not service.up():
            if time.monotonic() > deadline:
                raise SystemExit("gunicorn did not come up; see " + str(service.logs / "web.log"))
            time.sleep(0.3)
        time.sleep(2)  # let the cluster finish starting its workers
        print(
            f"{'PostgreSQL' if args.database_url else 'SQLite'} + {'Redis' if args.redis_url else 'ORM broker'}; "
            f"gunicorn: {args.web_workers} workers x {args.threads} threads; {args.clusters} qcluster x {args.task_workers} workers; "
            f"{args.clients} clients for {args.duration:.0f} s; mix {args.mix}"
        )

        results, stop = Results(), threading.Event()
        base = f"http://127.0.0.1:{service.port}"
        clients = [threading.Thread(target=client_loop, args=(n, base, token, stop, results, mix)) for n in range(args.clients)]
        started = time.monotonic()
        for t in clients:
            t.start()
        time.sleep(args.duration)
        stop.set()
        for t in clients:
            t.join()
        elapsed = time.monotonic() - started

        total = sum(len(v) for v in results.latency.values())
        print(f"\n{total} requests in {elapsed:.1f} s = {total / elapsed:.1f} req/s")
        print(f"{'operation':<10}{'count':>8}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}  statuses")
        for op in sorted(results.latency):
            values = results.latency[op]
            statuses = ", ".join(f"{s}: {n}" for (o, s), n in sorted(results.status.items(), key=str) if o == op)
            print(
                f"{op:<10}{len(values):>8}{len(values) / elapsed:>8.1f}{statistics.median(values) * 1000:>9.0f}"
                f"{percentile(values, 95) * 1000:>9.0f}{max(values) * 1000:>9.0f}  {statuses}"
            )
        print(f"errors (5xx, connection errors, 'database is locked'): {len(results.errors)}")
        for line in results.errors[:10]:
            print("   ", line)

        # Drain: every accepted ingest must leave pending.
        drain_started = time.monotonic()
        while time.monotonic() - drain_started < args.drain_timeout:
            pending = service.sql("select count(*) from memories_memory where status = 'pending'")[0][0]
            if pending == 0:
                break
            time.sleep(0.5)
        drained = time.monotonic() - drain_started
        rows = service.sql("select id, raw_text, status from memories_memory")
        by_id = {pk: (text, status) for pk, text, status in rows}
        text_counts = Counter(text for _, text, _ in rows)
        lost = [pk for pk, text in results.accepted.items() if pk not in by_id or by_id[pk][0] != text]
        duplicated = [t for t, n in text_counts.items() if n > 1]
        unexpected = set(by_id) - set(results.accepted)
        statuses = Counter(status for _, _, status in rows)
        print(f"\nqueue drained in {drained:.1f} s after the load; model calls: {dict(fake.calls)}")
        print(
            f"accepted ingests: {len(results.accepted)}; stored: {len(rows)} ({dict(statuses)}); "
            f"lost: {len(lost)}; duplicated: {len(duplicated)}; stored but never acknowledged: {len(unexpected)}"
        )
        locked = sum(p.read_text(errors="replace").count("database is locked") for p in service.logs.glob("*.log"))
        print(f"'database is locked' in server logs: {locked}")
        ok = not lost and not duplicated and not results.errors and statuses.get("pending", 0) == 0
        print("RESULT:", "OK — every accepted ingest stored exactly once" if ok else "PROBLEM — see above")
        return 0 if ok else 1
    finally:
        service.stop()
        fake.shutdown()
        if args.keep:
            print(f"kept {data}")
        else:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
