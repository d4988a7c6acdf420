"""Vectors at team scale (embeddings/store.py, embeddings/pgvector.py):

- hidden memories keep no vector: triggers drop the vector of a memory as it is deleted,
  superseded or found a near-duplicate, and the vectors such memories hold now go;
- on PostgreSQL, pgvector when it can be had: the extension (created when this database
  user may), a halfvec copy of every vector and an HNSW index per dimension. When it
  cannot, it says why and recall by meaning keeps searching in numpy; any later
  `migrate` finishes the job once the extension is there (apps.py runs the same step).
"""

import sys

from django.db import migrations


def forwards(apps, schema_editor):
    from memories.embeddings import pgvector, store

    connection = schema_editor.connection
    store.install(connection)
    store.drop_hidden(connection)
    if connection.vendor == "postgresql":
        pgvector.install(connection, say=lambda message: sys.stderr.write(f"  {message}\n"))


def backwards(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("DROP TRIGGER IF EXISTS memories_vector_hidden")
            cursor.execute("DROP TRIGGER IF EXISTS memories_vector_of_hidden")
        elif connection.vendor == "postgresql":
            cursor.execute("DROP TRIGGER IF EXISTS memories_vector_hidden ON memories_memory")
            cursor.execute("DROP TRIGGER IF EXISTS memories_vector_of_hidden ON memories_memoryvector")
            cursor.execute("DROP FUNCTION IF EXISTS memories_vector_hidden()")
            cursor.execute("DROP FUNCTION IF EXISTS memories_vector_of_hidden()")
            cursor.execute("ALTER TABLE memories_memoryvector DROP COLUMN IF EXISTS embedding")


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0012_history_retry_reextract"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
