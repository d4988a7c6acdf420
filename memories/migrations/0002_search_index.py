"""The lexical index recall ranks with (see memories/recall/search.py): an FTS5 table kept in step
by triggers on SQLite, a generated tsvector column with a GIN index on PostgreSQL. Other
databases get nothing and recall falls back to a slow scan."""

from django.db import migrations


def forwards(apps, schema_editor):
    from memories.recall import search

    search.install(schema_editor.connection)
    # Memories stored before this migration are indexed too.
    search.rebuild(schema_editor.connection)


def backwards(apps, schema_editor):
    from memories.recall import search

    search.uninstall(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
