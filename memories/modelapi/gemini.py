"""The Gemini API client as this installation configures it, and its errors read the one
way both the chat provider (llm/gemini.py) and the embeddings (embeddings/gemini.py) need:
worth another try (Retryable) or not (ProviderError)."""

from __future__ import annotations

from django.conf import settings
from google import genai
from google.genai import errors, types

from .errors import ProviderError
from .redact import scrub_secrets
from .retries import Retryable

try:  # google-genai's transport; its timeouts and dropped connections are worth a retry
    import httpx2

    TRANSIENT_ERRORS: tuple[type[Exception], ...] = (httpx2.TransportError,)
except ImportError:  # pragma: no cover - a google-genai that moved transports
    TRANSIENT_ERRORS = ()

# Structured output, system instructions and the Files API all live in v1beta.
API_VERSION = "v1beta"
RETRYABLE_STATUS = {408, 429}


def client() -> genai.Client:
    """A client for GEMINI_API_KEY at GEMINI_BASE_URL. The SDK's own retries stay off:
    ours (retries.py) honour Retry-After and MEMORY_LLM_MAX_RETRIES."""
    if not settings.GEMINI_API_KEY:
        raise ProviderError("Gemini is selected but GEMINI_API_KEY (or GOOGLE_API_KEY) is not set.")
    return genai.Client(
        api_key=settings.GEMINI_API_KEY,
        http_options=types.HttpOptions(
            base_url=settings.GEMINI_BASE_URL or None,
            api_version=API_VERSION,
            timeout=int(settings.MEMORY_LLM_TIMEOUT_SECONDS * 1000),
        ),
    )


def translate(exc: Exception) -> Exception:
    """An SDK or transport error as Retryable (try again) or ProviderError (give up)."""
    if isinstance(exc, errors.APIError):
        code = exc.code or 0
        detail = scrub_secrets(exc.message or exc.status or "no message")
        if code in RETRYABLE_STATUS or code >= 500:
            headers = getattr(exc.response, "headers", None) or {}
            return Retryable(f"HTTP {code}: {detail}", retry_after=headers.get("retry-after"))
        status = f" {exc.status}" if exc.status else ""
        return ProviderError(f"Gemini refused the request (HTTP {code}{status}): {detail}")
    if isinstance(exc, TRANSIENT_ERRORS):
        kind = "timed out" if "Timeout" in type(exc).__name__ else "connection failed"
        return Retryable(f"the request {kind} ({type(exc).__name__})")
    if isinstance(exc, ProviderError):
        return exc
    return ProviderError(f"Gemini call failed: {type(exc).__name__}: {scrub_secrets(str(exc))}")
