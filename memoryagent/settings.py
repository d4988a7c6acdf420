"""Settings: one file, environment variables with defaults that work locally on SQLite."""

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    """A yes/no setting. A value it cannot read stops start-up with the variable named:
    MEMORY_HTTPS=ture silently meaning "off" would be worse than no start."""
    value = os.getenv(name)
    if value is None or not value.strip():
        return default
    word = value.strip().lower()
    if word in {"1", "true", "yes", "on"}:
        return True
    if word in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a yes/no value: use 1/0, true/false, yes/no or on/off.")


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.getenv(name, default).split(",") if item.strip()]


MEMORY_DATA_DIR = Path(os.getenv("MEMORY_DATA_DIR", BASE_DIR / "data")).resolve()
# The data dir holds the database, the originals and the secret key: readable by the
# service's own account only (0700); a check warns at start-up when existing files are wider.
MEMORY_DATA_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)


def _secret_key() -> str:
    """Use SECRET_KEY when given; otherwise generate one once and keep it in the data dir."""
    if key := os.getenv("SECRET_KEY"):
        return key
    key_file = MEMORY_DATA_DIR / "secret_key"
    if not key_file.exists():
        # O_EXCL: when several processes start at once, exactly one writes the key.
        try:
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(50))
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG")
# Django's test runner adds "testserver" itself; a running service never answers to it.
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "django_q",
    "ninja",  # serves its bundled Swagger UI for /api/docs (no CDN)
    "memories",
]

MIDDLEWARE = [
    # First: a forwarded scheme or address counts only from a configured proxy.
    "memories.middleware.TrustedProxyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memories.middleware.DatabaseBusyMiddleware",
]

ROOT_URLCONF = "memoryagent.urls"
WSGI_APPLICATION = "memoryagent.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memories.context_processors.nav",
            ],
        },
    },
]

# SQLite is a production database here: the web server, the django-q2 workers and the
# inbox watcher all write to it. WAL lets readers run beside a writer; IMMEDIATE
# transactions take the write lock up front so concurrent writers queue on the busy
# timeout instead of failing halfway with "database is locked".
if os.getenv("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60)}
else:
    # Created 0600 before SQLite makes it (0644 under the usual umask): SQLite gives its
    # -wal and -shm files the database file's permissions, so all three stay private.
    try:
        os.close(os.open(MEMORY_DATA_DIR / "memory.sqlite3", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": MEMORY_DATA_DIR / "memory.sqlite3",
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                # How long a writer waits for the write lock before its request answers
                # 503 (services/busy.py). Background jobs hold it for well under a second.
                "timeout": float(os.getenv("MEMORY_SQLITE_TIMEOUT", "30")),
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }

# The cache holds rate-limit counters and the model circuit breaker, which the web server,
# the task workers and the watcher must all see: Redis when there is one, else files in
# the data dir (shared by every process on this machine).
if os.getenv("REDIS_URL"):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": os.environ["REDIS_URL"]}}
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": MEMORY_DATA_DIR / "cache"}
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sign-in goes through a backend that throttles failed passwords per account and per
# address (memories/signin.py), for the sign-in page and the admin's alike.
AUTHENTICATION_BACKENDS = ["memories.signin.ThrottledModelBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.getenv("TIME_ZONE", "UTC")
USE_I18N = True
# Dates and times in one format everywhere, the admin included (see formats/en/formats.py).
FORMAT_MODULE_PATH = ["memoryagent.formats"]
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = MEMORY_DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns on every request while it is missing
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve straight from the app folders too, so the app works before collectstatic runs.
WHITENOISE_USE_FINDERS = True

# Originals of uploaded and inbox files live under the data dir; they are served only
# through a view that checks ownership, never from a public URL.
MEDIA_ROOT = MEMORY_DATA_DIR / "files"
MEDIA_URL = "/files/"

# Uploads: keep big files on disk while they stream in.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# Originals are private to the service's account, like the database.
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    CSRF_COOKIE_SAMESITE = "Lax"
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
    SECURE_REFERRER_POLICY = "same-origin"
    # Behind TLS (the deploy check), turn these on with MEMORY_HTTPS=1.
    if env_bool("MEMORY_HTTPS"):
        SESSION_COOKIE_SECURE = True
        CSRF_COOKIE_SECURE = True
        SECURE_SSL_REDIRECT = True
        SECURE_HSTS_SECONDS = 60 * 60 * 24 * 30
        SECURE_HSTS_INCLUDE_SUBDOMAINS = True
        # Preloading is a one-way submission to the browsers' list; it is the operator's call.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
        # Read only from MEMORY_TRUSTED_PROXIES: memories.middleware drops the header from
        # anyone else, so a client cannot claim a TLS connection it does not have.
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Where `serve` listens (HOST:PORT), how many web workers it starts, and the address
# `welcome` prints links for (behind a proxy: the public one).
MEMORY_BIND = os.getenv("MEMORY_BIND", "127.0.0.1:8000")
WEB_CONCURRENCY = int(os.getenv("WEB_CONCURRENCY", "2"))
MEMORY_BASE_URL = os.getenv("MEMORY_BASE_URL", f"http://{MEMORY_BIND}")

# Addresses of reverse proxies whose X-Forwarded-Proto and X-Forwarded-For are believed
# (comma-separated IPs). Empty: those headers are ignored from everyone.
MEMORY_TRUSTED_PROXIES = env_list("MEMORY_TRUSTED_PROXIES", "")

# Content-Security-Policy on every page (Django's own middleware). Scripts and styles come
# from this site only (htmx is served from static files); no inline script runs, and
# htmx's inline indicator style and eval are off (the htmx-config meta tag in base.html).
from django.utils.csp import CSP  # noqa: E402

SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "media-src": [CSP.SELF],
    "frame-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# --- Memory engine -------------------------------------------------------------------

MEMORY_LLM_PROVIDER = os.getenv("MEMORY_LLM_PROVIDER", "auto")  # auto | offline | gemini | openai_compat
GEMINI_API_KEY = os.getenv("GEMINI_API_KEY") or os.getenv("GOOGLE_API_KEY") or ""
GEMINI_MODEL = os.getenv("GEMINI_MODEL", "gemini-2.5-flash-lite")
# Only for tests and proxies: where the google-genai client sends its requests.
GEMINI_BASE_URL = os.getenv("GEMINI_BASE_URL", "")
OPENAI_BASE_URL = os.getenv("OPENAI_BASE_URL", "")
OPENAI_MODEL = os.getenv("OPENAI_MODEL", "")
OPENAI_API_KEY = os.getenv("OPENAI_API_KEY", "")
MEMORY_LLM_TIMEOUT_SECONDS = float(os.getenv("MEMORY_LLM_TIMEOUT_SECONDS", "60"))
# The most an OpenAI-compatible server may write in one reply (max_tokens), by role; 0: no
# cap sent. A reply cut off at the cap fails with a reason instead of being half-read.
OPENAI_MAX_TOKENS_EXTRACT = int(os.getenv("OPENAI_MAX_TOKENS_EXTRACT", "1024"))
OPENAI_MAX_TOKENS_CONSOLIDATE = int(os.getenv("OPENAI_MAX_TOKENS_CONSOLIDATE", "2048"))
OPENAI_MAX_TOKENS_UPDATES = int(os.getenv("OPENAI_MAX_TOKENS_UPDATES", "512"))
OPENAI_MAX_TOKENS_ANSWER = int(os.getenv("OPENAI_MAX_TOKENS_ANSWER", "1024"))
# A sampling seed sent with every request (llama.cpp, vLLM, Ollama and OpenAI take one): two
# readings of one input differ less (a server's batching may still vary them). Empty: none.
OPENAI_SEED = int(os.environ["OPENAI_SEED"]) if os.getenv("OPENAI_SEED", "").strip() else None
MEMORY_LLM_MAX_RETRIES = int(os.getenv("MEMORY_LLM_MAX_RETRIES", "3"))
# Text in pictures: auto (RapidOCR, else tesseract) | rapidocr | tesseract | off.
MEMORY_OCR = os.getenv("MEMORY_OCR", "auto")
# Speech: an OpenAI-compatible server with /audio/transcriptions (whisper.cpp, faster-whisper,
# OpenAI), e.g. http://127.0.0.1:8080/v1. Empty: recordings keep their metadata only.
MEMORY_TRANSCRIBE_BASE_URL = os.getenv("MEMORY_TRANSCRIBE_BASE_URL", "")
MEMORY_TRANSCRIBE_MODEL = os.getenv("MEMORY_TRANSCRIBE_MODEL", "whisper-1")
MEMORY_TRANSCRIBE_API_KEY = os.getenv("MEMORY_TRANSCRIBE_API_KEY", "")
# Embeddings (recall by meaning): auto = the configured provider's when there is one,
# else the local model when it is installed, else off.
MEMORY_EMBEDDINGS = os.getenv("MEMORY_EMBEDDINGS", "auto")  # auto | local | gemini | openai_compat | off
GEMINI_EMBEDDING_MODEL = os.getenv("GEMINI_EMBEDDING_MODEL", "gemini-embedding-001")
GEMINI_EMBEDDING_DIM = int(os.getenv("GEMINI_EMBEDDING_DIM", "768"))
# An OpenAI-compatible server's embedding model (e.g. nomic-embed-text on Ollama); unset: none.
OPENAI_EMBEDDING_MODEL = os.getenv("OPENAI_EMBEDDING_MODEL", "")
MEMORY_EMBED_BATCH = int(os.getenv("MEMORY_EMBED_BATCH", "64"))
# Texts per call to an OpenAI-compatible /embeddings: a CPU server embeds ~100 tokens a second
# on one thread, and 64 memories took as long as the whole call timeout.
OPENAI_EMBEDDING_BATCH = int(os.getenv("OPENAI_EMBEDDING_BATCH", "16"))
# Where the meaning arm searches: auto = pgvector in PostgreSQL when the extension is
# there (migration 0013), else numpy in each process; numpy forces the latter.
MEMORY_VECTOR_SEARCH = os.getenv("MEMORY_VECTOR_SEARCH", "auto")  # auto | numpy
# The numpy search's per-process cache of owners' vectors, in megabytes (half precision:
# 0.75 MB per 1,000 memories at 384 dimensions); the least recently searched owners leave first.
MEMORY_VECTOR_CACHE_MB = int(os.getenv("MEMORY_VECTOR_CACHE_MB", "256"))
# The latent-terms arm's per-process inverted index of owners' memories, in megabytes (about
# 1.5 MB per 1,000 memories); the least recently searched owners leave first.
MEMORY_TERMS_CACHE_MB = int(os.getenv("MEMORY_TERMS_CACHE_MB", "256"))
# The local model's latent terms (a third recall arm beside words and meaning): computed with
# each memory's vector and searched with every question when the local model is active.
MEMORY_LATENT_TERMS = env_bool("MEMORY_LATENT_TERMS", True)
# Digests (services/digests.py, recall/digests.py): the consolidation run groups each
# person's memories by meaning, and a question that matches a group brings in its sources.
MEMORY_DIGESTS = env_bool("MEMORY_DIGESTS", False)

MEMORY_INBOX_DIR = Path(os.getenv("MEMORY_INBOX_DIR", BASE_DIR / "inbox")).resolve()
MEMORY_INBOX_USER = os.getenv("MEMORY_INBOX_USER", "")
# inbox/<username>/ belongs to that user (folders made by the service, 0700). Off: every
# inbox file belongs to MEMORY_INBOX_USER, whatever folder it is in.
MEMORY_INBOX_USER_FOLDERS = env_bool("MEMORY_INBOX_USER_FOLDERS", True)
MEMORY_CONSOLIDATE_EVERY_MINUTES = int(os.getenv("MEMORY_CONSOLIDATE_EVERY_MINUTES", "30"))
MEMORY_CONSOLIDATE_BATCH_SIZE = int(os.getenv("MEMORY_CONSOLIDATE_BATCH_SIZE", "10"))
MEMORY_CONSOLIDATE_MAX_BATCHES = int(os.getenv("MEMORY_CONSOLIDATE_MAX_BATCHES", "20"))  # per run, for a language model
# The offline engine groups and consolidates up to this many memories in one run.
MEMORY_CONSOLIDATE_MAX_BACKLOG = int(os.getenv("MEMORY_CONSOLIDATE_MAX_BACKLOG", "20000"))
# hybrid: relevance-ranked recall (memories/recall/); recent: the original's 50 newest.
MEMORY_RECALL_STRATEGY = os.getenv("MEMORY_RECALL_STRATEGY", "hybrid")
MEMORY_RECALL_K = int(os.getenv("MEMORY_RECALL_K", "50"))
MEMORY_RECALL_MAX_TOKENS = int(os.getenv("MEMORY_RECALL_MAX_TOKENS", "16000"))
MEMORY_MAX_UPLOAD_MB = int(os.getenv("MEMORY_MAX_UPLOAD_MB", "200"))
# The original files one user may keep in all (uploads, inbox, imports); 0 turns it off.
MEMORY_MAX_STORAGE_MB = int(os.getenv("MEMORY_MAX_STORAGE_MB", "10240"))
# API rate limits per user ("N/s|m|h|d"; empty or 0 turns a limit off).
MEMORY_RATE_LIMIT_INGEST = os.getenv("MEMORY_RATE_LIMIT_INGEST", "60/m")
MEMORY_RATE_LIMIT_QUERY = os.getenv("MEMORY_RATE_LIMIT_QUERY", "30/m")
MEMORY_RATE_LIMIT_RECALL = os.getenv("MEMORY_RATE_LIMIT_RECALL", "60/m")
MEMORY_RATE_LIMIT_CONSOLIDATE = os.getenv("MEMORY_RATE_LIMIT_CONSOLIDATE", "10/h")
# Failed sign-ins (sign-in page, admin, welcome links) allowed before each further one makes
# the next attempt wait (15 s, doubling): per account and address together, per account from
# anywhere, per client address. The count is forgotten one period after the last failure.
MEMORY_RATE_LIMIT_LOGIN_PAIR = os.getenv("MEMORY_RATE_LIMIT_LOGIN_PAIR", "5/h")
MEMORY_RATE_LIMIT_LOGIN_ACCOUNT = os.getenv("MEMORY_RATE_LIMIT_LOGIN_ACCOUNT", "10/h")
MEMORY_RATE_LIMIT_LOGIN_ADDRESS = os.getenv("MEMORY_RATE_LIMIT_LOGIN_ADDRESS", "30/h")
# Longest one file may take to be read (PDF pages are read until it runs out).
MEMORY_EXTRACT_TIME_BUDGET_SECONDS = float(os.getenv("MEMORY_EXTRACT_TIME_BUDGET_SECONDS", "60"))
# How long one extraction may hold a memory before the sweeper assumes its worker died.
MEMORY_EXTRACTION_LEASE_MINUTES = float(os.getenv("MEMORY_EXTRACTION_LEASE_MINUTES", "10"))
# Review mode: new memories wait for a person to approve them before recall uses them.
MEMORY_REVIEW_MODE = env_bool("MEMORY_REVIEW_MODE")
# Facts change: a new memory that changes an older one's fact supersedes it (off: "0").
MEMORY_DETECT_UPDATES = env_bool("MEMORY_DETECT_UPDATES", default=True)
# Forgetting: importance fades once a memory has gone unused (not cited by an answer) for
# MEMORY_FADE_AFTER_DAYS, halving every MEMORY_FADE_HALF_LIFE_DAYS after that (0: never).
MEMORY_FADE_AFTER_DAYS = int(os.getenv("MEMORY_FADE_AFTER_DAYS", "90"))
MEMORY_FADE_HALF_LIFE_DAYS = int(os.getenv("MEMORY_FADE_HALF_LIFE_DAYS", "180"))
# How often the maintenance task (fading, per-space retention) runs.
MEMORY_MAINTAIN_EVERY_MINUTES = int(os.getenv("MEMORY_MAINTAIN_EVERY_MINUTES", "1440"))

# --- Background tasks (django-q2) ----------------------------------------------------

Q_CLUSTER = {
    # The queue's name: installations sharing one Redis need different names.
    "name": os.getenv("MEMORY_QUEUE_NAME", "memory"),
    "workers": int(os.getenv("MEMORY_WORKERS", "2")),
    "timeout": 600,
    "retry": 900,  # must exceed timeout, or a slow task is handed out twice
    "max_attempts": 3,
    "queue_limit": 50,
    "catch_up": False,  # after downtime, run a missed schedule once, not once per missed slot
    "label": "Tasks",
    "sync": env_bool("MEMORY_TASKS_SYNC"),
}
if os.getenv("REDIS_URL"):
    Q_CLUSTER["redis"] = os.environ["REDIS_URL"]
else:
    Q_CLUSTER["orm"] = "default"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "memories.logs.JsonFormatter"},
    },
    # One-time sign-in links never reach a log line (Django logs the path of a refused request).
    "filters": {"redact": {"()": "memories.logredact.RedactFilter"}},
    # MEMORY_LOG_FORMAT=json: one JSON object a line, for a log collector.
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["redact"],
            "formatter": "json" if os.getenv("MEMORY_LOG_FORMAT", "").lower() == "json" else "plain",
        }
    },
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "INFO")},
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "google_genai": {"level": "WARNING"},
        # The MCP endpoint runs one short-lived session manager per request (memories/mcp/http.py).
        "mcp.server.streamable_http_manager": {"level": "WARNING"},
        # runserver's request lines, through the redacting handler too.
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}
