"""Real processes for the crash, concurrency and load tests: gunicorn, qcluster and the inbox
watcher started from a fresh data dir, killed with any signal, and talked to over loopback.

Nothing here mocks the service: the processes run the production code paths against their
own SQLite file, and the tests look at that file directly to see what survived.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

_template_lock = threading.Lock()
_template: Path | None = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def sqlite_time(delta: timedelta) -> str:
    """A Django DateTimeField value as SQLite stores it (UTC, no offset)."""
    return (datetime.now(timezone.utc) + delta).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")


# django-q2's sentinel looks at the schedules every 30 s; a test does not wait for that.
RUN_DUE_SCHEDULES = "from django_q.scheduler import scheduler; scheduler()"


def migrated_template(base_env: dict) -> Path:
    """One migrated database per test session, copied into each service's data dir:
    migrate costs seconds, and every service would otherwise pay it. Its schedules have the
    default intervals, whichever test asked first (migrate again for others)."""
    global _template
    with _template_lock:
        if _template is None:
            import tempfile

            folder = Path(tempfile.mkdtemp(prefix="memory-template-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            env = {k: v for k, v in base_env.items() if not (k.startswith("MEMORY_") and k.endswith("_EVERY_MINUTES"))}
            env["MEMORY_DATA_DIR"] = str(folder)
            subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
            _template = folder / "memory.sqlite3"
        return _template


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict = field(default_factory=dict)

    def json(self):
        return json.loads(self.body or b"null")


class Service:
    """One installation: a data dir, an inbox, and whichever processes a test starts."""

    def __init__(self, root: Path, **env):
        self.root = Path(root)
        self.data_dir = self.root / "data"
        self.inbox = self.root / "inbox"
        self.logs = self.root / "logs"
        for folder in (self.data_dir, self.inbox, self.logs):
            folder.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "MEMORY_DATA_DIR": str(self.data_dir),
            "MEMORY_INBOX_DIR": str(self.inbox),
            "MEMORY_LLM_PROVIDER": "offline",
            "MEMORY_QUEUE_NAME": f"q{os.getpid()}{id(self)}",
            # Load tests send more than a person would; the limits are tested elsewhere.
            "MEMORY_RATE_LIMIT_INGEST": "",
            "MEMORY_RATE_LIMIT_QUERY": "",
            "MEMORY_RATE_LIMIT_RECALL": "",
            "MEMORY_RATE_LIMIT_CONSOLIDATE": "",
            # Each process would load the local model (tests of it run in-process: test_embeddings).
            "MEMORY_EMBEDDINGS": "off",
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("DATABASE_URL", "REDIS_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL", "MEMORY_TASKS_SYNC"):
            self.env.pop(name, None)
        self.env.update({k: str(v) for k, v in env.items()})
        self.db_path = self.data_dir / "memory.sqlite3"
        self.procs: dict[str, subprocess.Popen] = {}
        self.port: int | None = None
        self._starts = 0

    # -- setup ------------------------------------------------------------------------------

    def migrate(self) -> "Service":
        shutil.copyfile(migrated_template(self.env), self.db_path)
        return self

    def manage(self, *args, check=True, timeout=120, input=None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=check,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
        )

    def shell(self, code: str) -> str:
        return self.manage("shell", "-c", code).stdout

    def run_schedule_now(self, name: str) -> None:
        """Time passes for one django-q2 schedule: it falls due, and the scheduler a running
        cluster calls every 30 s is called once now, in a process of its own. It hands the task
        to the broker, and the cluster runs it as it would any scheduled task."""
        self.sql("update django_q_schedule set next_run = ? where name = ?", (sqlite_time(timedelta(minutes=-1)), name))
        self.shell(RUN_DUE_SCHEDULES)

    def make_users(self, *usernames: str) -> dict[str, str]:
        """Users with one API token each, made in one process: {username: token}."""
        code = (
            "import json\n"
            "from django.contrib.auth import get_user_model\n"
            "from memories.services.tokens import create_token\n"
            "out = {}\n"
            f"for name in {list(usernames)!r}:\n"
            "    user = get_user_model().objects.create_user(name, password='pw-' + name * 3)\n"
            "    out[name] = create_token(owner=user, name='test')[1]\n"
            "print(json.dumps(out))\n"
        )
        return json.loads(self.shell(code).strip().splitlines()[-1])

    # -- processes -----------------------------------------------------------------------------

    def _start(self, name: str, args: list[str], env: dict | None = None) -> subprocess.Popen:
        self._starts += 1
        log = open(self.logs / f"{name}.{self._starts}.log", "wb")
        proc = subprocess.Popen(
            args, cwd=ROOT, env={**self.env, **(env or {})}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        self.procs[name] = proc
        return proc

    def start_web(self, workers: int = 2) -> subprocess.Popen:
        self.port = self.port or free_port()
        proc = self._start(
            "web",
            [
                PYTHON,
                "-m",
                "gunicorn",
                "memoryagent.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
                "--timeout",
                "120",
                "--graceful-timeout",
                "5",
            ],
        )
        if not wait_for(lambda: self._web_up(proc), timeout=60, interval=0.3):
            raise RuntimeError(f"gunicorn did not start:\n{self.log_text('web')[-3000:]}")
        return proc

    def _web_up(self, proc) -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode}:\n{self.log_text('web')[-3000:]}")
        try:
            return self.request("GET", "/api/status", timeout=2).status == 401
        except OSError:
            return False

    def start_cluster(self, workers: int = 2) -> subprocess.Popen:
        proc = self._start("cluster", [PYTHON, "manage.py", "qcluster"], {"MEMORY_WORKERS": str(workers)})
        # Ready once the sentinel has written its first status row.
        wait_for(lambda: proc.poll() is not None or "running" in self.log_text("cluster"), timeout=60, interval=0.3)
        return proc

    def start_watcher(self, interval: float = 0.5) -> subprocess.Popen:
        proc = self._start("watcher", [PYTHON, "manage.py", "watch_inbox", "--interval", str(interval)])
        heartbeat = self.data_dir / "inbox-watcher.heartbeat"
        wait_for(lambda: proc.poll() is not None or heartbeat.exists(), timeout=60, interval=0.3)
        return proc

    def kill(self, name: str, sig=signal.SIGKILL, grace: float = 20) -> None:
        """SIGKILL goes to the whole process group: gunicorn's and qcluster's children die with
        it. Any other signal goes to the main process alone, which stops its own children, as
        `serve` does (qcluster hangs when its workers are signalled too); after the grace, or
        once it has stopped, whatever is left of the group is killed."""
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        try:
            if sig == signal.SIGKILL:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # Orphaned grandchildren keep the group id: finish them too.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def stop_all(self) -> None:
        for name in list(self.procs):
            self.kill(name, signal.SIGTERM, grace=10)

    def log_text(self, name: str) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.logs.glob(f"{name}.*.log")))

    def all_logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.logs.glob("*.log")))

    # -- the database, read directly ----------------------------------------------------------

    def sql(self, query: str, params=()) -> list[tuple]:
        db = sqlite3.connect(self.db_path, timeout=30)
        try:
            with db:
                return db.execute(query, params).fetchall()
        finally:
            db.close()

    def memory(self, memory_id: int) -> dict | None:
        db = sqlite3.connect(self.db_path, timeout=30)
        db.row_factory = sqlite3.Row
        try:
            row = db.execute("select * from memories_memory where id = ?", (memory_id,)).fetchone()
            return dict(row) if row else None
        finally:
            db.close()

    # -- HTTP -----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        json_body=None,
        body: bytes | None = None,
        headers: dict | None = None,
        timeout: float = 60,
    ) -> Response:
        headers = dict(headers or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return Response(resp.status, resp.read(), dict(resp.headers))
        except urllib.error.HTTPError as exc:
            return Response(exc.code, exc.read(), dict(exc.headers))


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body: (body, content type)."""
    boundary = f"----memtest{time.time_ns()}"
    out = bytearray()
    for name, value in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    for name, (filename, data) in files.items():
        out += (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                f"Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            + data
            + b"\r\n"
        )
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"
