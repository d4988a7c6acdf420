"""Pick the provider named by MEMORY_LLM_PROVIDER (auto: Gemini with a key, else offline)."""

from django.conf import settings

from .base import Provider, ProviderError

_PROVIDERS = {
    "offline": "memories.llm.offline.OfflineProvider",
    "gemini": "memories.llm.gemini.GeminiProvider",
    "openai_compat": "memories.llm.openai_compat.OpenAICompatProvider",
}


def provider_name() -> str:
    name = (settings.MEMORY_LLM_PROVIDER or "auto").strip().lower()
    if name == "auto":
        return "gemini" if settings.GEMINI_API_KEY else "offline"
    if name not in _PROVIDERS:
        raise ProviderError(f"Unknown MEMORY_LLM_PROVIDER {name!r}; choose auto, {', '.join(_PROVIDERS)}.")
    return name


def get_provider() -> Provider:
    """A fresh provider for one unit of work; callers close() it when done."""
    from django.utils.module_loading import import_string

    return import_string(_PROVIDERS[provider_name()])()


__all__ = ["Provider", "ProviderError", "get_provider", "provider_name"]
