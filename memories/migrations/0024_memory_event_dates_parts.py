from importlib import import_module

from django.db import migrations


def fill_again(apps, schema_editor):
    """Every memory's event_dates again: the reading of dates now reads a part of a year or
    of a month ("the summer of 2022", "early 2023", "late May") as that part, not as the
    whole year or month, so values stored by the earlier reading no longer agree with it
    (dates.EVENT_READING)."""
    import_module("memories.migrations.0021_memory_event_dates_reread").fill(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0023_memory_event_dates_durations"),
    ]

    operations = [
        migrations.RunPython(fill_again, migrations.RunPython.noop, elidable=True),
    ]
