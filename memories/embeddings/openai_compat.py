"""Embeddings from an OpenAI-compatible server: POST {OPENAI_BASE_URL}/embeddings, as
Ollama, llama.cpp's server, vLLM and LM Studio serve it. Same transport, retries and
error messages as the chat provider (urllib; no extra dependency)."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request

import numpy as np
from django.conf import settings

from ..modelapi import ProviderError, Retryable, call_with_retries
from ..modelapi.openai import http_error
from ..modelapi.redact import scrub_secrets
from .base import Embedder, EmbeddingError, normalised

LABEL = "The OpenAI-compatible embeddings endpoint"


class OpenAICompatEmbedder(Embedder):
    name = "openai_compat"

    def __init__(self):
        self._dim: int | None = None

    @property
    def max_batch(self) -> int:
        # Sized from a setting: how many texts fit in one call timeout depends on the server's
        # hardware, which only the operator knows.
        return max(1, settings.OPENAI_EMBEDDING_BATCH)

    @property
    def model(self) -> str:
        return settings.OPENAI_EMBEDDING_MODEL

    @property
    def dim(self) -> int:
        # The server decides; known after the first call (0 before: nothing stored yet).
        if self._dim is None:
            self._dim = len(self.embed_query("dimension probe"))
        return self._dim

    def _endpoint(self) -> str:
        base = (settings.OPENAI_BASE_URL or "").strip().rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise EmbeddingError("OPENAI_BASE_URL must be set to an http(s) URL for openai_compat embeddings.")
        if not self.model:
            raise EmbeddingError("OPENAI_EMBEDDING_MODEL is not set (the embedding model the server knows).")
        return base + "/embeddings"

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        url = self._endpoint()
        payload = json.dumps({"model": self.model, "input": list(texts), "encoding_format": "float"}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if settings.OPENAI_API_KEY:
            headers["Authorization"] = f"Bearer {settings.OPENAI_API_KEY}"

        def once():
            request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=settings.MEMORY_LLM_TIMEOUT_SECONDS) as response:
                    return response.read()
            except urllib.error.HTTPError as exc:
                raise http_error(exc, LABEL) from None
            except (TimeoutError, socket.timeout):
                raise Retryable(f"no reply within {settings.MEMORY_LLM_TIMEOUT_SECONDS:g}s") from None
            except urllib.error.URLError as exc:
                raise Retryable(f"could not connect ({scrub_secrets(str(exc.reason))})") from None
            except (http.client.HTTPException, ConnectionError) as exc:
                raise Retryable(f"the connection failed ({type(exc).__name__})") from None

        try:
            raw = call_with_retries(once, max_retries=settings.MEMORY_LLM_MAX_RETRIES, label=LABEL)
        except ProviderError as exc:
            raise EmbeddingError(str(exc)) from None
        try:
            data = sorted(json.loads(raw)["data"], key=lambda d: d.get("index", 0))
            rows = [[float(x) for x in d["embedding"]] for d in data]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EmbeddingError(f"{LABEL} returned something other than embeddings: {raw[:120]!r}") from None
        if len(rows) != len(texts) or len({len(r) for r in rows}) != 1 or not rows[0]:
            raise EmbeddingError(f"{LABEL} returned {len(rows)} embeddings for {len(texts)} texts, or of mixed sizes.")
        if self._dim is None:
            self._dim = len(rows[0])
        return normalised(rows)
