"""Start-up checks of the settings whose names are otherwise checked only at first use: a
misspelt provider, embeddings backend or recall strategy is named when any manage.py
command or the web app starts, not when the first memory fails to extract."""

from __future__ import annotations

from django.core import checks


@checks.register(checks.Tags.compatibility)
def check_names(app_configs=None, **kwargs):
    from django.conf import settings

    from .embeddings import CHOICES as EMBEDDINGS
    from .llm import _PROVIDERS
    from .recall import STRATEGIES

    found = []
    for setting, value, allowed, check_id in (
        ("MEMORY_LLM_PROVIDER", settings.MEMORY_LLM_PROVIDER or "auto", ["auto", *_PROVIDERS], "memories.E101"),
        ("MEMORY_EMBEDDINGS", settings.MEMORY_EMBEDDINGS or "auto", list(EMBEDDINGS), "memories.E102"),
        ("MEMORY_RECALL_STRATEGY", settings.MEMORY_RECALL_STRATEGY, list(STRATEGIES), "memories.E103"),
    ):
        if str(value).strip().lower() not in allowed:
            found.append(
                checks.Error(
                    f"{setting}={value!r} is not one of: {', '.join(allowed)}.",
                    hint=f"Set {setting} to one of them.",
                    id=check_id,
                )
            )
    return found
