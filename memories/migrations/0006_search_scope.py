"""Recall's lexical index, version 2 (see memories/recall/search.py): on SQLite a contentless FTS5
table that also indexes a scope token (the owner, while the memory is readable), so a
search filters by owner and ranks inside FTS instead of joining every match to
memories_memory. Its triggers now also follow status, owner and the soft-delete columns.
PostgreSQL keeps its generated tsvector column; nothing changes there."""

from django.db import migrations


def forwards(apps, schema_editor):
    from memories.recall import search

    # Replace the old layout and fill the new one from the stored memories.
    if schema_editor.connection.vendor == "sqlite":
        search.uninstall(schema_editor.connection)
    search.install(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0005_bank_indexes"),
    ]

    operations = [
        # Backwards leaves the new index in place: the older search code reads it as well.
        migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False),
    ]
