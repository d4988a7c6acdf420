import threading
from collections import OrderedDict

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self):
        from . import configchecks, permissions  # noqa: F401 (register the start-up checks)
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
        # The same for the triggers that keep hidden memories without vectors; and on
        # PostgreSQL pgvector, once the extension can be had (migration 0013 says why not).
        post_migrate.connect(install_vector_store, sender=self)


def install_search_index(using="default", **kwargs):
    from django.db import connections

    from . import search

    search.install(connections[using])


SENTENCE_CACHE_SIZE = 20_000  # 384 floats a sentence with the local model: about 30 MB
_sentence_vectors: OrderedDict = OrderedDict()
_sentence_lock = threading.Lock()


class _EmbedderMeaning:
    """The embedding layer as the offline engine sees it (llm.extractive.similarity.Meaning)."""

    def __init__(self, embedder):
        self.embedder = embedder

    def documents(self, texts):
        import numpy as np

        # An answer embeds the sentences of every memory it reads, and the same memories
        # are read for question after question: each sentence's vector is kept.
        key = f"{self.embedder.name}:{self.embedder.model}"
        with _sentence_lock:
            missing = list(dict.fromkeys(t for t in texts if (key, t) not in _sentence_vectors))
        if missing:
            fresh = self.embedder.embed_documents(missing)
            with _sentence_lock:
                for text, vector in zip(missing, fresh, strict=True):
                    _sentence_vectors[(key, text)] = vector
                    _sentence_vectors.move_to_end((key, text))
                while len(_sentence_vectors) > SENTENCE_CACHE_SIZE:
                    _sentence_vectors.popitem(last=False)
        found = dict(zip(missing, fresh, strict=True)) if missing else {}
        with _sentence_lock:
            for text in texts:
                if text not in found and (key, text) in _sentence_vectors:
                    found[text] = _sentence_vectors[(key, text)]
        gone = [t for t in dict.fromkeys(texts) if t not in found]  # pushed out by another thread meanwhile
        if gone:
            found.update(zip(gone, self.embedder.embed_documents(gone), strict=True))
        rows = [found[t] for t in texts]
        return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, self.embedder.dim), dtype=np.float32)

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


def install_vector_store(using="default", **kwargs):
    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    from .embeddings import pgvector, store

    connection = connections[using]
    if not MigrationRecorder(connection).migration_qs.filter(app="memories", name__endswith="_vectors_pgvector").exists():
        return  # migrated back below the vector store, or not there yet
    store.install(connection)
    if connection.vendor == "postgresql":
        pgvector.install(connection)
