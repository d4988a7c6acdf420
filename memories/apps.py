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
        # The same for the triggers that keep hidden memories without vectors; and on
        # PostgreSQL pgvector, once the extension can be had (migration 0013 says why not).
        post_migrate.connect(install_vector_store, sender=self)
        # The offline engine reads by meaning through whatever embedding layer is active;
        # it is handed one here, as it may not import that layer itself.
        from .embeddings import vocabulary
        from .embeddings.sentences import active_meaning
        from .llm.extractive import entities, similarity

        similarity.use_meaning(active_meaning)
        entities.use_casing(vocabulary.lower_case_preference, vocabulary.pieces)
        # What recall stores of a memory when it is written (models may not import recall).
        from . import models
        from .recall import stored

        models.store_recall_figures = stored.store
        # What the update check's grammar keeps apart, for recall's newer-first ordering.
        from .llm.extractive.changes.kept_apart import not_a_change
        from .recall import newer

        newer.use_kept_apart(not_a_change)


def install_search_index(using="default", **kwargs):
    from django.db import connections

    from .recall import lexical_index

    lexical_index.install(connections[using])


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
