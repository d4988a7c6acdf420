"""Talking to a model API over HTTP: the part the chat providers (memories/llm/) and the
embedding backends (memories/embeddings/) share, so neither reaches into the other. The
error people see (ProviderError, with secrets masked), retries with backoff, the Gemini
client as this installation configures it, and reading an OpenAI-compatible server's
error reply. It sits below both: it imports nothing else of the app. Which provider is configured is
answered here too, since the embeddings' `auto` follows it.
"""

from django.conf import settings

from .errors import ProviderError
from .retries import Retryable, call_with_retries

PROVIDERS = ("offline", "gemini", "openai_compat")


def provider_name() -> str:
    """The provider MEMORY_LLM_PROVIDER names (auto: Gemini with a key, else offline). Here,
    below both, because the embeddings' `auto` follows it too."""
    name = (settings.MEMORY_LLM_PROVIDER or "auto").strip().lower()
    if name == "auto":
        return "gemini" if settings.GEMINI_API_KEY else "offline"
    if name not in PROVIDERS:
        raise ProviderError(f"Unknown MEMORY_LLM_PROVIDER {name!r}; choose auto, {', '.join(PROVIDERS)}.")
    return name


__all__ = ["PROVIDERS", "ProviderError", "Retryable", "call_with_retries", "provider_name"]
