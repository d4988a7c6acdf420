"""Progress where work is long: bars in a terminal, silence in pipes, batches seen live."""

import io
import json

import pytest
from django.core.management import call_command

from memories.management.commands._base import progress_bar
from memories.models import Memory

pytestmark = pytest.mark.django_db


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_shows_counts_and_rate_on_a_terminal():
    screen = Terminal()
    with progress_bar(total=3, desc="extracting", unit="memory", stream=screen) as bar:
        for _ in range(3):
            bar.update(1)
        bar.refresh()  # tqdm redraws at most 10 times a second; this test is faster than that
    shown = screen.getvalue()
    assert "extracting" in shown and "3/3" in shown and "memory/s" in shown


def test_a_bar_is_silent_when_not_a_terminal():
    piped = io.StringIO()
    with progress_bar(total=3, desc="extracting", stream=piped) as bar:
        bar.update(3)
    assert piped.getvalue() == ""


def test_commands_print_only_their_results_into_a_pipe(tmp_path, user):
    data = tmp_path / "notes.jsonl"
    data.write_text("\n".join(json.dumps({"text": f"Note {i} about the garden and tomatoes {i}."}) for i in range(5)) + "\n\n")
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest", "--jsonl", str(data), "--user", user.username, stdout=out, stderr=err)
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 5 and all("\tready\t" in line for line in lines)
    assert "\r" not in out.getvalue() + err.getvalue() and "it/s" not in err.getvalue()
    out = io.StringIO()
    call_command("consolidate", "--user", user.username, stdout=out, stderr=io.StringIO())
    assert "consolidation(s) written" in out.getvalue()
    out = io.StringIO()
    call_command("rebuild_index", stdout=out)
    assert "over 5 memories" in out.getvalue()


def test_rebuild_reports_progress_in_chunks(monkeypatch, memory_factory):
    from django.db import connection

    from memories.recall import lexical_index

    for i in range(5):
        memory_factory(f"Chunked note {i} about the harbour and boats {i}.")
    monkeypatch.setattr(lexical_index, "REBUILD_CHUNK", 2)
    seen = []
    lexical_index.rebuild(connection, progress=seen.append)
    assert sum(seen) == Memory.all_objects.count() == 5
    if connection.vendor == "sqlite":
        assert len(seen) >= 3
