from importlib import import_module

from django.db import migrations


def fill_again(apps, schema_editor):
    """Every memory's event_dates again: the reading of dates now reads a weekday as people
    shorten it in a chat ("last Fri", "since Tues") and a length told on its own ("seven
    years now", "it's been two years since ..."), so values stored by the earlier reading
    no longer agree with it (dates.EVENT_READING)."""
    import_module("memories.migrations.0021_memory_event_dates_reread").fill(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0024_memory_event_dates_parts"),
    ]

    operations = [
        migrations.RunPython(fill_again, migrations.RunPython.noop, elidable=True),
    ]
