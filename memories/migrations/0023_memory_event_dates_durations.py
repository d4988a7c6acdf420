from importlib import import_module

from django.db import migrations


def fill_again(apps, schema_editor):
    """Every memory's event_dates again: the reading of dates now dates a state told with
    how long it has lasted ("I've been surfing for five years"), so values stored by the
    earlier reading no longer agree with it (dates.EVENT_READING)."""
    import_module("memories.migrations.0021_memory_event_dates_reread").fill(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0022_memory_recall_keys_reread"),
    ]

    operations = [
        migrations.RunPython(fill_again, migrations.RunPython.noop, elidable=True),
    ]
