"""Pick the provider named by MEMORY_LLM_PROVIDER (auto: Gemini with a key, else offline)."""

from ..modelapi import provider_name
from .base import Provider, ProviderError

_PROVIDERS = {
    "offline": "memories.llm.offline.OfflineProvider",
    "gemini": "memories.llm.gemini.GeminiProvider",
    "openai_compat": "memories.llm.openai_compat.OpenAICompatProvider",
}


def get_provider() -> Provider:
    """A fresh provider for one unit of work; callers close() it when done."""
    from django.utils.module_loading import import_string

    return import_string(_PROVIDERS[provider_name()])()


__all__ = ["Provider", "ProviderError", "get_provider", "provider_name"]
