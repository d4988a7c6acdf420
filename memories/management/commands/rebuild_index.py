from django.core.management.base import BaseCommand
from django.db import connection, transaction

from ... import search
from ...models import Memory


class Command(BaseCommand):
    help = "Re-create the full-text index recall searches, from the stored memories."

    def handle(self, *args, **options):
        if connection.vendor not in ("sqlite", "postgresql"):
            self.stdout.write(f"{connection.vendor}: no full-text index here; recall scans memories instead.")
            return
        with transaction.atomic():
            search.rebuild(connection)
        count = Memory.all_objects.count()
        self.stdout.write(f"Rebuilt the {connection.vendor} full-text index over {count} memories.")
