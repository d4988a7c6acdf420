from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self):
        from . import permissions  # noqa: F401 (registers the start-up check on file permissions)
        from .schedule import ensure_consolidation_schedule

        # Like contrib.auth's permissions: rows the app needs are made after migrate,
        # so "migrate" alone leaves a working schedule and follows the current setting.
        post_migrate.connect(ensure_consolidation_schedule, sender=self)
        # On SQLite a migration that rebuilds the memory table drops the search triggers;
        # installing them again after every migrate keeps the index in step (idempotent).
        post_migrate.connect(install_search_index, sender=self)
        # The offline engine reads by meaning through whatever embedding layer is active;
        # it is handed one here, as it may not import that layer itself.
        from .llm.extractive import similarity

        similarity.use_meaning(active_meaning)


def install_search_index(using="default", **kwargs):
    from django.db import connections

    from . import search

    search.install(connections[using])


class _EmbedderMeaning:
    """The embedding layer as the offline engine sees it (llm.extractive.similarity.Meaning)."""

    def __init__(self, embedder):
        self.embedder = embedder

    def documents(self, texts):
        return self.embedder.embed_documents(texts)

    def questions(self, texts):
        import numpy as np

        from . import embeddings

        return np.vstack([embeddings.embed_question(self.embedder, text) for text in texts])

    def shifted_question(self, question, documents):
        from .embeddings import hubness

        content_free = hubness.content_free_direction(self.embedder)
        return hubness.shifted_question(question, typical=hubness.typical_memory(documents), content_free=content_free)

    def content_free(self):
        import numpy as np

        from .embeddings import hubness

        direction = hubness.content_free_direction(self.embedder)
        return direction / (np.linalg.norm(direction) or 1.0)


def active_meaning():
    """The active embedding backend for the offline engine, or None when it is off."""
    from . import embeddings

    embedder = embeddings.get_embedder()
    return None if embedder is None else _EmbedderMeaning(embedder)
