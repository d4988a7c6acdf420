"""Recall reads pending memories too (read-your-writes, see recall.READABLE_STATUSES): on
SQLite the index's triggers give a pending memory its owner's scope token now, and the
memories already pending get theirs by a rebuild. PostgreSQL filters by status in the
query; nothing to change there."""

from django.db import migrations


def forwards(apps, schema_editor):
    from memories.recall import search

    if schema_editor.connection.vendor == "sqlite":
        search.install(schema_editor.connection)
        search.rebuild(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0006_search_scope"),
    ]

    operations = [
        migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False),
    ]
