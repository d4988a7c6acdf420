"""Running it for a team: health and readiness endpoints, structured logs, and the
compose file and Procfile a team adapts."""

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from django.test import Client
from django.utils import timezone

from memories.logs import JsonFormatter
from memories.schedule import SWEEP_NAME, ensure_consolidation_schedule

ROOT = Path(__file__).resolve().parent.parent


def test_healthz_answers_without_sign_in_or_database():
    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.fixture
def schedules(db):
    from django_q.models import Schedule

    ensure_consolidation_schedule()
    return Schedule.objects.filter(name=SWEEP_NAME)


def test_readyz_is_ready_with_database_broker_and_a_live_cluster(schedules):
    schedules.update(next_run=timezone.now() + timedelta(minutes=4))
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ready" and set(body["checks"]) == {"database", "broker", "cluster"}


def test_readyz_says_when_no_cluster_is_running(schedules):
    schedules.update(next_run=timezone.now() - timedelta(hours=2))
    response = Client().get("/readyz")
    assert response.status_code == 503
    cluster = response.json()["checks"]["cluster"]
    assert not cluster["ok"] and "qcluster" in cluster["detail"]


def test_readyz_says_when_redis_does_not_answer(schedules, settings):
    schedules.update(next_run=timezone.now())
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens once the socket is closed
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "redis": f"redis://127.0.0.1:{port}/0"}
    response = Client().get("/readyz")
    assert response.status_code == 503
    broker = response.json()["checks"]["broker"]
    assert not broker["ok"] and "Redis did not answer" in broker["detail"]
    # Anyone may ask /readyz: where Redis lives stays in the log, not in the answer.
    assert str(port) not in response.content.decode() and "127.0.0.1" not in response.content.decode()


def test_json_log_lines_parse_and_keep_extras():
    record = logging.LogRecord("memories.test", logging.WARNING, __file__, 1, "memory %s failed", (7,), None)
    record.memory_id = 7
    entry = json.loads(JsonFormatter().format(record))
    assert entry["level"] == "WARNING" and entry["message"] == "memory 7 failed" and entry["memory_id"] == 7


@pytest.mark.slow
def test_json_logs_are_switched_on_by_the_setting():
    env = {**os.environ, "MEMORY_LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "memoryagent.settings"}
    code = "import django, logging; django.setup(); logging.getLogger('memories').warning('hello %s', 'team')"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    line = json.loads(result.stderr.strip().splitlines()[-1])
    assert line["message"] == "hello team" and line["logger"] == "memories"


# --- compose.yaml and Procfile ------------------------------------------------------------------


def _commands():
    from django.core.management import get_commands

    return set(get_commands())


def _check_app_command(command: str):
    """An app command names a real management command or the real WSGI module."""
    words = command.split()
    if "manage.py" in words:
        assert words[words.index("manage.py") + 1] in _commands(), command
    else:
        assert "gunicorn memoryagent.wsgi" in command, command
        assert (ROOT / "memoryagent" / "wsgi.py").exists()


def test_compose_file_runs_web_cluster_watcher_on_postgresql_and_redis():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert {"web", "cluster", "watcher", "postgres", "redis", "migrate"} <= set(services)
    for name in ("web", "cluster", "watcher", "migrate"):
        service = services[name]
        command = " ".join(service["command"])
        _check_app_command(command)
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("postgresql://") and "@postgres:" in env["DATABASE_URL"], name
        assert env["REDIS_URL"].startswith("redis://redis:"), name
        assert "SECRET_KEY" in env, name  # one key for every container
        assert "data:/data" in service["volumes"], name  # originals shared with the workers
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])
    assert "qcluster" in services["cluster"]["command"] and "--queue" in services["watcher"]["command"]
    assert (ROOT / services["web"]["build"] / "Dockerfile").exists()
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "requirements.txt" in dockerfile and "MEMORY_DATA_DIR=/data" in dockerfile


def test_compose_file_passes_docker_compose_config():
    docker = shutil.which("docker")
    if not docker or subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("docker compose is not installed; the YAML is checked by the test above")
    result = subprocess.run(
        [docker, "compose", "-f", str(ROOT / "compose.yaml"), "config", "-q"],
        capture_output=True,
        text=True,
        env={**os.environ, "SECRET_KEY": "test"},
    )
    assert result.returncode == 0, result.stderr


def test_procfile_names_real_commands():
    processes = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, command = line.partition(":")
            processes[name.strip()] = command.strip()
    assert {"release", "web", "worker", "watcher"} <= set(processes)
    for command in processes.values():
        _check_app_command(command)


@pytest.mark.django_db
def test_api_docs_lay_out_for_phones(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("docs-reader", password="x" * 12))
    page = client.get("/api/docs").content.decode()
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page and "swagger" in page.lower()
