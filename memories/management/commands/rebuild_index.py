from django.core.management.base import BaseCommand
from django.db import connection, transaction

from ...recall import lexical_index
from ...models import Memory
from ._base import progress_bar


class Command(BaseCommand):
    help = "Re-create the full-text index recall searches, from the stored memories."

    def handle(self, *args, **options):
        if connection.vendor not in ("sqlite", "postgresql"):
            self.stdout.write(f"{connection.vendor}: no full-text index here; recall scans memories instead.")
            return
        count = Memory.all_objects.count()
        with progress_bar(total=count, desc="indexing", unit="memory") as bar, transaction.atomic():
            lexical_index.rebuild(connection, progress=bar.update)
        self.stdout.write(f"Rebuilt the {connection.vendor} full-text index over {count} memories.")
