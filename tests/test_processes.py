"""Real processes: the django-q2 cluster runs the consolidation schedule, and `serve`
starts and stops the whole service."""

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.procs import RUN_DUE_SCHEDULES, migrated_template

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


@pytest.fixture
def service_env(tmp_path):
    """A fresh data dir with a database migrated by the real command (the session's
    template, tests/procs.py: migrate costs seconds)."""
    env = {
        **os.environ,
        "MEMORY_DATA_DIR": str(tmp_path / "data"),
        "MEMORY_INBOX_DIR": str(tmp_path / "inbox"),
        "MEMORY_CONSOLIDATE_EVERY_MINUTES": "1",
        "MEMORY_LLM_PROVIDER": "offline",
    }
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    (tmp_path / "data").mkdir(mode=0o700, exist_ok=True)  # conftest.isolated_storage may have made it
    shutil.copyfile(migrated_template(env), tmp_path / "data" / "memory.sqlite3")
    return env


def manage(env, *args):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True)


def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def stop(proc, grace=20):
    """SIGTERM to the main process alone, as `serve` does: qcluster stops its own workers, and
    hangs when they are signalled too. Whatever is left of its group after that is killed."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def test_schedule_exists_once_after_migrate_twice(service_env):
    manage(service_env, "migrate", "-v0")
    db = sqlite3.connect(Path(service_env["MEMORY_DATA_DIR"]) / "memory.sqlite3")
    rows = db.execute("select func, minutes from django_q_schedule where name = 'memories.consolidate_all'").fetchall()
    assert rows == [("memories.tasks.consolidate_all", 1)]


def redis_available():
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.mark.parametrize("broker", ["orm", "redis"])
def test_qcluster_runs_the_consolidation_schedule(service_env, broker, tmp_path):
    if broker == "redis":
        if not redis_available():
            pytest.skip("no Redis on 127.0.0.1:6379")
        service_env = {**service_env, "REDIS_URL": "redis://127.0.0.1:6379/0", "MEMORY_QUEUE_NAME": f"test-{tmp_path.name}"}
    manage(service_env, "ingest", "--text", "Project Falcon launches in March; Sarah Chen leads.")
    manage(service_env, "ingest", "--text", "Sarah Chen booked the Project Falcon venue in Berlin.")
    db_path = Path(service_env["MEMORY_DATA_DIR"]) / "memory.sqlite3"
    cluster = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=service_env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The schedule fell due when migrate made it. The cluster's sentinel would look in
        # 30 s; its scheduler, called once now, hands the task to the broker the cluster reads.
        manage(service_env, "shell", "-c", RUN_DUE_SCHEDULES)

        def consolidated():
            with sqlite3.connect(db_path, timeout=10) as db:
                return db.execute("select count(*) from memories_consolidation").fetchone()[0] > 0

        assert wait_for(consolidated, timeout=90), "the scheduled consolidation did not run within 90 s"
        with sqlite3.connect(db_path) as db:
            assert db.execute("select count(*) from memories_memory where consolidated_at is null").fetchone()[0] == 0
            assert db.execute("select count(*) from memories_memorylink").fetchone()[0] == 1
    finally:
        stop(cluster)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_starts_everything_and_ctrl_c_stops_everything(service_env):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}", "--web-workers", "1"],
        cwd=ROOT,
        env=service_env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def up():
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2).status == 200
            except OSError:
                return False

        assert wait_for(up, timeout=60)
        heartbeat = Path(service_env["MEMORY_DATA_DIR"]) / "inbox-watcher.heartbeat"
        assert wait_for(heartbeat.exists, timeout=60), "the inbox watcher did not start"
        children = descendants(proc.pid)
        assert len(children) >= 5  # gunicorn master + worker, qcluster + its workers, watcher
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
        assert "Stopped." in output
        # Idle, everything stops by itself when asked: nothing had to be killed.
        assert "killing it" not in output, output
        # Nothing of the service is left running.
        assert wait_for(lambda: not any(_alive(int(pid)) for pid in children), timeout=15)
    finally:
        stop(proc)


def descendants(pid):
    """Every process below pid (each service child runs in its own session)."""
    found, todo = [], [pid]
    while todo:
        out = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True).stdout.split()
        found += out
        todo += [int(p) for p in out]
    return found


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is finished; only its parent has yet to reap it.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_serve_fails_fast_with_the_variable_to_set_when_the_port_is_busy(service_env):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}", "--web-workers", "1"],
            cwd=ROOT,
            env=service_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0
    assert f"Port {port} on 127.0.0.1 is already in use" in result.stderr
    assert f"MEMORY_BIND=127.0.0.1:{port + 1} make run" in result.stderr
    assert "running at" not in result.stdout and "Traceback" not in result.stderr
