from django.db import migrations

FILL_CHUNK = 2000


def fill(apps, schema_editor):
    """Every memory's event_dates again, from its text and its day (recall/dates.py), as 0018 did."""
    from memories.recall.dates import EVENT_TEXT_CHARS, local_day, stored_event_dates
    from django.utils import timezone

    connection = schema_editor.connection
    tz = timezone.get_current_timezone()
    last = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                f"SELECT id, substr(raw_text, 1, {EVENT_TEXT_CHARS}), occurred_at FROM memories_memory "
                "WHERE id > %s ORDER BY id LIMIT %s",
                [last, FILL_CHUNK],
            )
            rows = cursor.fetchall()
            if not rows:
                break
            cursor.executemany(
                "UPDATE memories_memory SET event_dates = %s WHERE id = %s",
                [
                    (stored_event_dates(text or "", local_day(occurred_at, tz)) if occurred_at is not None else None, pk)
                    for pk, text, occurred_at in rows
                ],
            )
            last = rows[-1][0]


class Migration(migrations.Migration):
    """The reading of dates knows more phrases ("the other day", "a couple of weeks ago",
    "Christmas Eve", "on the 22nd"); values stored by the earlier reading no longer agree
    with it (dates.EVENT_READING) and are stored again."""

    dependencies = [
        ("memories", "0020_memory_recall_keys"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
