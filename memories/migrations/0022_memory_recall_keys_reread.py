from importlib import import_module

from django.db import migrations


def fill_again(apps, schema_editor):
    """Every memory's recall_keys worked out again: on SQLite, keys of letters stored as
    JSON escapes ("Zo\\u00eb") were split as "zo" and "u00eb"; on PostgreSQL, the keys a
    save stored were made of the list, not of the jsonb text recall reads, so none was
    used (recall/words.py: json_words, recall/stored.py: _as_read)."""
    import_module("memories.migrations.0020_memory_recall_keys").fill(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0021_memory_event_dates_reread"),
    ]

    operations = [
        migrations.RunPython(fill_again, migrations.RunPython.noop, elidable=True),
    ]
