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


def install_search_index(using="default", **kwargs):
    from django.db import connections

    from . import search

    search.install(connections[using])
