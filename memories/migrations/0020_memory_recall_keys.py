from django.db import migrations, models

FILL_CHUNK = 2000


def fill(apps, schema_editor):
    """Every memory's recall_keys, from its entities and topics as the database hands them
    over (recall/words.py: stored_keys_of)."""
    from memories.recall.words import stored_keys_of

    connection = schema_editor.connection
    last = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT id, entities, topics FROM memories_memory WHERE id > %s ORDER BY id LIMIT %s", [last, FILL_CHUNK]
            )
            rows = cursor.fetchall()
            if not rows:
                break
            cursor.executemany(
                "UPDATE memories_memory SET recall_keys = %s WHERE id = %s",
                [(stored_keys_of(entities, topics), pk) for pk, entities, topics in rows],
            )
            last = rows[-1][0]


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0019_memory_context_cost"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="recall_keys",
            field=models.TextField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
