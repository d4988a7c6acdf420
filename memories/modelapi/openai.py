"""An OpenAI-compatible server's error reply, read the one way the chat provider
(llm/openai_compat.py) and the embeddings (embeddings/openai_compat.py) both need."""

from __future__ import annotations

import json
import urllib.error

from .errors import ProviderError
from .redact import scrub_secrets
from .retries import Retryable

RETRYABLE_STATUS = {408, 409, 425, 429}


def http_error(exc: urllib.error.HTTPError, label: str) -> Exception:
    """Retryable for a status worth another try (with the server's Retry-After), else a
    ProviderError with the server's own message, secrets masked."""
    try:
        detail = exc.read()[:4000].decode("utf-8", errors="replace")
    except Exception:
        detail = ""
    try:
        parsed = json.loads(detail)
        error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
        message = error.get("message", detail) if isinstance(error, dict) else str(error)
    except ValueError:
        message = detail
    message = scrub_secrets(" ".join(str(message).split())[:500]) or exc.reason or "no message"
    if exc.code in RETRYABLE_STATUS or exc.code >= 500:
        return Retryable(f"HTTP {exc.code}: {message}", retry_after=exc.headers.get("Retry-After"))
    return ProviderError(f"{label} refused the request (HTTP {exc.code}): {message}")
