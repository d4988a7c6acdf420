"""The inbox watcher: once per file, no duplicates, bad files recorded, loop survives."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from memories.models import Memory, ProcessedFile
from memories.services.inbox import scan_inbox

pytestmark = pytest.mark.django_db


@pytest.fixture
def inbox(settings):
    path = Path(settings.MEMORY_INBOX_DIR)
    path.mkdir(parents=True)
    return path


def scan():
    return scan_inbox(settle_seconds=0)


def test_new_file_is_ingested_once(inbox, user, settings):
    settings.MEMORY_INBOX_USER = "alice"
    (inbox / "trip.txt").write_text("Flights to Lisbon booked for 12 June 2025 with TAP.")
    report = scan()
    memory = Memory.objects.get()
    assert report.ingested == [memory.pk] and memory.status == "ready" and memory.owner == user
    assert memory.source == "trip.txt"
    assert not scan().found_work
    assert Memory.objects.count() == 1 and ProcessedFile.objects.get().status == "ingested"


def test_same_bytes_under_new_name_is_not_duplicated(inbox, user, settings):
    settings.MEMORY_INBOX_USER = "alice"
    (inbox / "a.txt").write_text("The same note.")
    scan()
    (inbox / "copy of a.txt").write_text("The same note.")
    report = scan()
    assert report.duplicates == 1 and Memory.objects.count() == 1
    assert ProcessedFile.objects.get(path__endswith="copy of a.txt").status == "duplicate"


def test_bad_file_is_recorded_and_others_still_ingested(inbox, user, settings):
    settings.MEMORY_INBOX_USER = "alice"
    (inbox / "virus.exe").write_bytes(b"MZ\x90\x00")
    (inbox / "empty.txt").write_bytes(b"")
    (inbox / "good.md").write_text("Good note about the quarterly budget.")
    report = scan()
    assert report.failed == 2 and len(report.ingested) == 1
    failed = ProcessedFile.objects.filter(status="failed").order_by("path")
    assert ["not supported" in f.error or "empty" in f.error for f in failed] == [True, True]
    # Recorded failures are not retried every pass while the file is unchanged.
    assert not scan().found_work


def test_hidden_files_symlinks_and_fifos_are_skipped(inbox, user, settings, tmp_path):
    settings.MEMORY_INBOX_USER = "alice"
    (inbox / ".DS_Store").write_text("junk")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the inbox")
    (inbox / "link.txt").symlink_to(secret)
    os.mkfifo(inbox / "pipe.txt")
    assert scan().seen == 0 and not Memory.objects.exists()


def test_changed_file_at_same_path_is_ingested_again(inbox, user, settings):
    settings.MEMORY_INBOX_USER = "alice"
    note = inbox / "todo.txt"
    note.write_text("Buy milk.")
    scan()
    note.write_text("Buy milk and eggs.")
    os.utime(note, (time.time() - 100, time.time() - 100))
    assert len(scan().ingested) == 1 and Memory.all_objects.count() == 2


def test_files_belong_to_default_owner_created_when_none(inbox, db, django_user_model):
    (inbox / "n.txt").write_text("First note.")
    call_command("watch_inbox", "--once")
    assert Memory.objects.get().owner.username == "owner"


def test_user_subfolder_routes_to_that_user(inbox, user, other_user, settings):
    settings.MEMORY_INBOX_USER = "alice"
    (inbox / "bob").mkdir()
    (inbox / "bob" / "b.txt").write_text("Bob's private note.")
    (inbox / "nobody").mkdir()
    (inbox / "nobody" / "x.txt").write_text("Whose is this?")
    report = scan()
    assert Memory.objects.get().owner == other_user
    assert report.failed == 1 and "No user named 'nobody'" in ProcessedFile.objects.get(status="failed").error


def test_heartbeat_is_private_like_the_rest_of_the_data_dir(inbox, user, settings):
    """The start-up check warns about data-dir files other accounts can read: the watcher's
    own heartbeat must not be one (it was 0644 under the usual umask on a fresh `make run`)."""
    from memories.permissions import too_open
    from memories.services.inbox import heartbeat_path

    old = os.umask(0o022)
    try:
        scan()
    finally:
        os.umask(old)
    assert heartbeat_path().stat().st_mode & 0o777 == 0o600
    assert str(heartbeat_path()) not in " ".join(too_open(Path(settings.MEMORY_DATA_DIR)))


@pytest.mark.slow
def test_watcher_process_stops_on_sigterm(tmp_path):
    env = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path / "d"), "MEMORY_INBOX_DIR": str(tmp_path / "in")}
    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=root, env=env, check=True)
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "watch_inbox", "--interval", "0.5"], cwd=root, env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        (tmp_path / "in").mkdir(exist_ok=True)
        (tmp_path / "in" / "hello.txt").write_text("hello from the inbox")
        heartbeat = tmp_path / "d" / "inbox-watcher.heartbeat"
        deadline = time.monotonic() + 60
        while not heartbeat.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()


def test_refused_files_move_to_refused_with_the_reason_and_show_on_the_pages(inbox, user, settings, client):
    from memories.services import delete_memory

    settings.MEMORY_INBOX_USER = "alice"
    (inbox / "kept.txt").write_text("The boiler was serviced on Monday.")
    scan()
    delete_memory(owner=user, memory_id=Memory.objects.get().pk)
    (inbox / "again.txt").write_text("The boiler was serviced on Monday.")  # deleted content
    (inbox / "empty.txt").write_bytes(b"")
    report = scan()
    assert report.failed == 2
    refused = inbox / ".refused"
    assert not (inbox / "again.txt").exists() and not (inbox / "empty.txt").exists()
    assert (refused / "again.txt").read_text() == "The boiler was serviced on Monday."
    assert "deleted" in (refused / "again.txt.reason.txt").read_text()
    assert "empty" in (refused / "empty.txt.reason.txt").read_text()
    assert not scan().found_work  # the refused folder is not read again
    # Dropped again, refused again, kept beside the first copy.
    (inbox / "empty.txt").write_bytes(b"")
    scan()
    assert len(list(refused.glob("empty*.reason.txt"))) == 2 and len(list(refused.glob("empty*.txt"))) == 4

    client.force_login(user)
    ingest_page = client.get("/").content.decode()
    assert 'id="inbox-refusals"' in ingest_page and "again.txt" in ingest_page and "Moved to .refused/again.txt" in ingest_page
    status = client.get("/status/").content.decode()
    assert 'id="inbox-refused"' in status and "empty.txt" in status
