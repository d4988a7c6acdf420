"""The command-line entry points do their work in-process, offline."""

import json

import pytest
from django.core.management import CommandError, call_command

from memories.models import Consolidation, Memory

pytestmark = pytest.mark.django_db


def run(*args):
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_ingest_text_extracts_before_returning_and_prints_id(user):
    out, err = run("ingest", "--text", "Dentist appointment with Dr Lopez on May 3.", "--user", "alice")
    memory = Memory.objects.get()
    assert out.split("\t")[:2] == [str(memory.pk), "ready"]
    assert memory.owner == user and memory.source == "cli"
    assert "extractive engine, not a language model" in err


def test_ingest_files_and_jsonl(user, tmp_path):
    note = tmp_path / "note.md"
    note.write_text("Lisbon trip: flights booked for 12 June 2025.")
    lines = tmp_path / "items.jsonl"
    lines.write_text(
        json.dumps({"text": "Bought a red bike", "source": "diary", "occurred_at": "2023-05-01", "metadata": {"k": 1}})
        + "\n\n"
        + json.dumps({"text": "Maria's birthday is 9 October", "source": "diary"})
        + "\n"
    )
    out, _ = run("ingest", str(note), "--jsonl", str(lines), "--user", "alice")
    assert len(out.strip().splitlines()) == 3
    bike = Memory.objects.get(raw_text="Bought a red bike")
    assert bike.source == "diary" and bike.metadata["k"] == 1 and bike.occurred_at.year == 2023
    assert Memory.objects.get(source="note.md").status == "ready"


def test_ingest_reports_bad_lines_and_fails(user, tmp_path):
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"text": "fine line"}\nnot json\n["a list"]\n{"text": ""}\n')
    with pytest.raises(CommandError, match="3 input"):
        run("ingest", "--jsonl", str(lines), "--user", "alice")
    assert Memory.objects.count() == 1


def test_ingest_without_user_goes_to_created_owner(db, django_user_model):
    run("ingest", "--text", "first ever memory")
    owner = django_user_model.objects.get()
    assert owner.username == "owner" and owner.is_superuser and not owner.has_usable_password()
    assert Memory.objects.get().owner == owner


def test_unknown_user_is_a_clear_error(db):
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        run("ingest", "--text", "x", "--user", "nobody")


def test_consolidate_query_and_recall_commands(user, memory_factory):
    a = memory_factory("Project Falcon launches in March; Sarah Chen leads.")
    memory_factory("Sarah Chen booked the Falcon launch venue in Berlin.")
    out, _ = run("consolidate", "--user", "alice")
    assert "1 consolidation(s) written." in out and Consolidation.objects.count() == 1

    out, _ = run("query", "When does Project Falcon launch?", "--user", "alice")
    assert f"[Memory {a.pk}]" in out and "March" in out

    out, _ = run("query", "When does Project Falcon launch?", "--user", "alice", "--json")
    data = json.loads(out)
    assert a.pk in data["cited"] and set(data["cited"]) <= set(data["context"])

    out, _ = run("recall", "Falcon", "--user", "alice", "--json", "--k", "1", "--strategy", "recent")
    data = json.loads(out)
    assert len(data["memories"]) == 1 and data["consolidations"]


def test_query_of_another_user_sees_nothing(user, other_user, memory_factory):
    memory_factory("Project Falcon launches in March.")
    out, _ = run("query", "When does Project Falcon launch?", "--user", "bob", "--json")
    assert json.loads(out)["context"] == []


@pytest.mark.django_db
def test_create_token_for_the_owner_right_after_migrate_makes_the_owner_like_welcome():
    """The README's first API step works on a fresh install, before `welcome` has run."""
    import io

    from django.contrib.auth import get_user_model

    from memories.services.tokens import authenticate

    out = io.StringIO()
    call_command("create_token", "owner", "--name", "laptop", stdout=out, stderr=io.StringIO())
    owner = get_user_model().objects.get(username="owner")
    assert owner.is_superuser and not owner.has_usable_password()
    assert authenticate(out.getvalue().strip().splitlines()[-1]) == owner
    # The same account the other commands and welcome use: no second owner appears.
    welcome = io.StringIO()
    call_command("welcome", stdout=welcome)
    assert "'owner'" in welcome.getvalue() and get_user_model().objects.count() == 1
    with pytest.raises(CommandError, match="No user named 'someone'"):
        call_command("create_token", "someone", stdout=io.StringIO(), stderr=io.StringIO())


@pytest.mark.django_db
def test_only_problems_are_coloured_on_a_terminal(user, tmp_path):
    import io

    from memories.management.commands import ingest, query

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    # As on a terminal: Django styles the command's stderr as errors.
    info, problem = Terminal(), Terminal()
    call_command(query.Command(stderr=info, force_color=True), "anything", "--user", "alice", stdout=io.StringIO())
    assert "Provider: offline" in info.getvalue() and "\x1b[" not in info.getvalue()
    with pytest.raises(CommandError):
        call_command(
            ingest.Command(stderr=problem, force_color=True),
            str(tmp_path / "missing.txt"),
            "--user",
            "alice",
            stdout=io.StringIO(),
        )
    assert "no such file" in problem.getvalue() and "\x1b[" in problem.getvalue()
