"""Attacks from the live review of the running service (issue 19), each performed here.

Every test does what the attacker did, as an outsider, as a second user of the same
instance or as a local account writing into the inbox, and asserts it no longer works.
"""

from __future__ import annotations

import io
import json
import logging
import logging.config
import os
import signal
import socket
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from memories.llm import ProviderError, circuit
from memories.models import Consolidation, Event, Memory, ProcessedFile
from memories.services import clear_owner, consolidate_owner, delete_memory, extract_memory, ingest_file, ingest_text
from memories.services.inbox import scan_inbox
from memories.services.owners import default_owner
from memories.services.tokens import create_token
from memories.templatetags.memories_ui import markdown_safe
from tests.htmx import hx

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
SECRET = "ZEPHYR-QUOKKA-SECRET"


@contextmanager
def finishes_within(seconds: int):
    """A liveness guard, not a speed assertion: the attacks below took 30-150 s on the
    patterns they target; the fixed code takes well under a second. A hang fails the test
    instead of holding the whole run."""

    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def api_client(user) -> Client:
    token = create_token(owner=user, name="attack")[1]
    return Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {token}")


# --- 1. the owner account cannot be claimed without the one-time link ---------------------------


def test_owner_cannot_be_claimed_by_whoever_reaches_the_port_first():
    owner = default_owner()  # made by the watcher or a command, no password yet
    attacker = Client()
    page = attacker.get(reverse("login"))
    assert b"password1" not in page.content and b"Create owner account" not in page.content
    for path in ("/welcome/first-owner/", "/welcome/password/", "/accounts/password_reset/"):
        reply = attacker.post(
            path,
            {
                "username": "owner",
                "password1": "hijack pass 12345",
                "password2": "hijack pass 12345",
                "new_password1": "hijack pass 12345",
                "new_password2": "hijack pass 12345",
            },
        )
        assert reply.status_code in (302, 400, 403, 404, 405), (path, reply.status_code)
    owner.refresh_from_db()
    assert not owner.has_usable_password()
    assert attacker.get(reverse("memories:ingest")).status_code == 302  # not signed in
    assert not attacker.login(username="owner", password="hijack pass 12345")


# --- 2. the inbox watcher never reads through a link ---------------------------------------------


@pytest.fixture
def outside_secret(tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(f"SECRET_KEY={SECRET}\n")
    return secret


def _nothing_holds_the_secret():
    for memory in Memory.all_objects.all():
        assert SECRET not in memory.raw_text
        if memory.original:
            assert SECRET.encode() not in Path(memory.original.path).read_bytes()


def test_inbox_file_swapped_for_a_symlink_after_the_check_is_not_read(user, other_user, settings, outside_secret, monkeypatch):
    from memories.services import inbox as inbox_service

    folder = Path(settings.MEMORY_INBOX_DIR) / "bob"
    folder.mkdir(parents=True)
    note = folder / "note.txt"
    note.write_text("An ordinary note from bob.")
    real_owner_for = inbox_service._owner_for

    def swap_then_continue(rel, fallback):
        # The attacker's move, between the watcher's lstat() and its open().
        note.unlink()
        note.symlink_to(outside_secret)
        return real_owner_for(rel, fallback)

    monkeypatch.setattr(inbox_service, "_owner_for", swap_then_continue)
    report = scan_inbox(settle_seconds=0)
    assert report.ingested == [] and report.failed == 1
    _nothing_holds_the_secret()
    assert "plain file" in ProcessedFile.objects.get().error


def test_inbox_folder_swapped_for_a_symlink_after_the_check_is_not_read(user, other_user, settings, outside_secret, monkeypatch):
    from memories.services import inbox as inbox_service

    sub = Path(settings.MEMORY_INBOX_DIR) / "bob" / "sub"
    sub.mkdir(parents=True)
    (sub / "secret.txt").write_text("harmless")
    real_owner_for = inbox_service._owner_for

    def swap_folder(rel, fallback):
        (sub / "secret.txt").unlink()
        sub.rmdir()
        sub.symlink_to(outside_secret.parent, target_is_directory=True)
        return real_owner_for(rel, fallback)

    monkeypatch.setattr(inbox_service, "_owner_for", swap_folder)
    scan_inbox(settle_seconds=0)
    _nothing_holds_the_secret()


def test_a_refused_file_is_not_moved_aside_through_a_folder_swapped_for_a_symlink(
    user, other_user, settings, outside_secret, monkeypatch
):
    """The refused file is moved to .refused/; a folder on its way swapped for a link must not
    aim that move at a file elsewhere (the database, another space's originals)."""
    from memories.services import inbox as inbox_service

    sub = Path(settings.MEMORY_INBOX_DIR) / "bob" / "sub"
    sub.mkdir(parents=True)
    (sub / outside_secret.name).write_text("bait with the name of the file to take")
    real_owner_for = inbox_service._owner_for

    def swap_folder(rel, fallback):
        (sub / outside_secret.name).unlink()
        sub.rmdir()
        sub.symlink_to(outside_secret.parent, target_is_directory=True)
        return real_owner_for(rel, fallback)

    monkeypatch.setattr(inbox_service, "_owner_for", swap_folder)
    report = scan_inbox(settle_seconds=0)
    assert report.failed == 1
    assert outside_secret.read_text() == f"SECRET_KEY={SECRET}\n"  # still there, untouched
    assert not list((Path(settings.MEMORY_INBOX_DIR) / ".refused").rglob(outside_secret.name))


def test_a_plain_symlink_in_the_inbox_is_never_followed(user, settings, outside_secret):
    """A guard: the watcher already skipped links it saw; it must go on doing so."""
    settings.MEMORY_INBOX_USER = "alice"
    inbox = Path(settings.MEMORY_INBOX_DIR)
    inbox.mkdir(parents=True)
    (inbox / "link.txt").symlink_to(outside_secret)
    (inbox / "linkdir").symlink_to(outside_secret.parent, target_is_directory=True)
    scan_inbox(settle_seconds=0)
    _nothing_holds_the_secret()


# --- 3. clearing a space never deletes through a link ---------------------------------------------


def test_clearing_a_space_does_not_delete_another_users_file_through_a_symlink(user, other_user, settings):
    inbox = Path(settings.MEMORY_INBOX_DIR)
    bob_file = inbox / "bob" / "keep.txt"
    bob_file.parent.mkdir(parents=True)
    bob_file.write_text("Bob's file, which alice must not be able to delete.")
    alice_file = inbox / "alice" / "mine.txt"
    alice_file.parent.mkdir(parents=True)
    alice_file.write_text("Alice's own note.")
    scan_inbox(settle_seconds=0)
    assert ProcessedFile.objects.filter(owner=user).count() == 1
    # Alice swaps her recorded file for a link to bob's, then clears her space with its files.
    alice_file.unlink()
    alice_file.symlink_to(bob_file)
    reply = api_client(user).post("/api/clear?inbox_files=true")
    assert reply.status_code == 200, reply.content
    assert bob_file.read_text().startswith("Bob's file")
    assert alice_file.is_symlink()  # the link itself is not a regular file of hers either


def test_clearing_removes_only_files_in_the_owners_own_folder(user, other_user, settings):
    inbox = Path(settings.MEMORY_INBOX_DIR)
    bob_file = inbox / "bob" / "keep.txt"
    bob_file.parent.mkdir(parents=True)
    bob_file.write_text("Bob's file.")
    mine = inbox / "alice" / "mine.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("Alice's note to clear.")
    scan_inbox(settle_seconds=0)
    # A record of alice's naming a path in bob's folder (however it came to be) is not acted on.
    ProcessedFile.objects.create(owner=user, path=str(bob_file.resolve()), size=1, mtime=1, sha256="x" * 64)
    counts = clear_owner(owner=user, inbox_files=True)
    assert counts["inbox_files"] == 1 and not mine.exists() and bob_file.exists()


# --- 4. the inbox trust model: folders made owner-only, routing can be turned off ---------------


def test_the_service_makes_owner_only_inbox_folders_per_user(user, other_user, settings):
    scan_inbox(settle_seconds=0)
    inbox = Path(settings.MEMORY_INBOX_DIR)
    for name in ("alice", "bob"):
        assert stat.S_IMODE((inbox / name).stat().st_mode) == 0o700
    assert stat.S_IMODE(inbox.stat().st_mode) == 0o700


def test_an_inbox_others_can_write_is_reported_at_start_up(settings):
    from memories.permissions import check_inbox_permissions

    inbox = Path(settings.MEMORY_INBOX_DIR)
    (inbox / "bob").mkdir(parents=True)
    inbox.chmod(0o700)
    (inbox / "bob").chmod(0o777)
    warnings = check_inbox_permissions()
    assert [w.id for w in warnings] == ["memories.W002"] and str(inbox / "bob") in warnings[0].msg
    (inbox / "bob").chmod(0o700)
    assert check_inbox_permissions() == []


def test_folder_name_routing_can_be_turned_off(user, other_user, settings):
    settings.MEMORY_INBOX_USER = "alice"
    settings.MEMORY_INBOX_USER_FOLDERS = False
    planted = Path(settings.MEMORY_INBOX_DIR) / "bob" / "planted.txt"
    planted.parent.mkdir(parents=True)
    planted.write_text("Someone who can write the inbox wants this in bob's space.")
    scan_inbox(settle_seconds=0)
    memory = Memory.objects.get()
    assert memory.owner == user and not Memory.objects.filter(owner=other_user).exists()


# --- 5. small hostile files stall neither the web server nor the workers --------------------------


def _pdf(pages: int) -> bytes:
    from tests.test_extract import pdf_bytes

    return pdf_bytes([f"Page {i} of the plan." for i in range(pages)])


def test_an_upload_only_stores_the_file_and_parsing_waits_for_the_task(signed_in, user):
    reply = signed_in.post(reverse("memories:ingest_files"), {"files": SimpleUploadedFile("plan.pdf", _pdf(3))})
    assert reply.status_code == 302
    memory = Memory.objects.get()
    # Nothing was parsed inside the request: the text comes from the extraction task.
    assert memory.status == Memory.Status.PENDING and memory.raw_text == ""
    memory = extract_memory(memory.pk)
    assert memory.status == Memory.Status.READY and "Page 2 of the plan." in memory.raw_text


def test_a_pdf_that_outlasts_the_time_budget_fails_with_the_reason(user, settings):
    settings.MEMORY_EXTRACT_TIME_BUDGET_SECONDS = 1e-9
    result = ingest_file(owner=user, fileobj=io.BytesIO(_pdf(40)), name="slow.pdf")
    memory = extract_memory(result.memory.pk)
    assert memory.status == Memory.Status.FAILED and "time budget" in memory.error


@pytest.mark.parametrize("hostile", ["1," * 20_000, "a." * 80_000])
def test_the_offline_extractor_is_linear_on_hostile_text(user, hostile):
    memory = ingest_text(owner=user, text=hostile).memory
    with finishes_within(30):  # 40 KB of "1," took 150 s (AMOUNT_RE), 160 KB of "a." 70 s (EMAIL_RE)
        memory = extract_memory(memory.pk)
    assert memory.status == Memory.Status.READY


def test_a_csv_the_sniffer_chokes_on_is_read_quickly(user):
    with finishes_within(20):  # 64 KB took 33 s in csv.Sniffer
        result = ingest_file(owner=user, fileobj=io.BytesIO(b',"' * 32_000), name="choke.csv")
        memory = extract_memory(result.memory.pk)
    assert memory.status == Memory.Status.READY


def test_one_owners_flood_yields_the_worker_to_another_owner(
    user, other_user, memory_factory, django_capture_on_commit_callbacks
):
    from django.utils import timezone
    from django_q.brokers import get_broker

    from memories import tasks

    running = memory_factory("Alice's hostile file being extracted now.", extract=False)
    Memory.objects.filter(pk=running.pk).update(extracting_since=timezone.now())
    alice_next = memory_factory("Alice's next hostile file.", extract=False)
    bob_note = memory_factory("Bob's note, waiting behind alice's flood.", owner=other_user, extract=False)
    broker = get_broker()
    before = broker.queue_size()

    with django_capture_on_commit_callbacks(execute=True):
        outcome = tasks.extract_memory(alice_next.pk)
    assert "queued again" in outcome
    assert Memory.objects.get(pk=alice_next.pk).status == Memory.Status.PENDING
    assert broker.queue_size() == before + 1  # to the back of the queue, not dropped
    # Bob's note is not held back by alice's running extraction.
    assert "ready" in tasks.extract_memory(bob_note.pk)
    # With nobody else waiting, alice's work runs at full speed.
    assert "ready" in tasks.extract_memory(alice_next.pk)


# --- 7. the data is private to the service's account --------------------------------------------


@pytest.mark.slow
def test_data_dir_database_and_originals_are_private(tmp_path):
    data = tmp_path / "fresh-data"
    env = {
        **os.environ,
        "MEMORY_DATA_DIR": str(data),
        "MEMORY_INBOX_DIR": str(tmp_path / "inbox"),
        "MEMORY_LLM_PROVIDER": "offline",
        "MEMORY_TASKS_SYNC": "1",
    }
    env.pop("DATABASE_URL", None)
    note = tmp_path / "note.txt"
    note.write_text("A private note.")
    old = os.umask(0o022)  # the usual umask: the service must not rely on a stricter one
    try:
        for args in (["migrate", "-v0"], ["ingest", str(note)]):
            subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    finally:
        os.umask(old)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for path in [data / "memory.sqlite3", data / "secret_key", *(data / "files").rglob("*")]:
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    # A file made wider later is reported at start-up, with the fix.
    (data / "memory.sqlite3").chmod(0o644)
    check = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert "memories.W001" in check.stderr + check.stdout and "chmod -R go-rwx" in check.stderr + check.stdout


def test_uploaded_originals_are_owner_only(user):
    result = ingest_file(owner=user, fileobj=io.BytesIO(b"A private upload."), name="private.txt")
    assert stat.S_IMODE(os.stat(result.memory.original.path).st_mode) == 0o600


# --- 8. sign-in is throttled ---------------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch):
    """The sign-in delays' clock, moved by hand: a wait passes without the test sleeping."""
    from memories import ratelimit

    now = [1_900_000_000.0]
    monkeypatch.setattr(ratelimit, "_clock", lambda: now[0])
    return now


def test_guessing_a_password_is_stopped_even_when_the_right_one_comes_next(user, clock):
    attacker = Client()
    for i in range(5):
        reply = attacker.post(reverse("login"), {"username": "alice", "password": f"guess {i}"})
        assert reply.status_code == 200
    # Now each try waits, and one during the wait is refused unchecked, the right password too.
    reply = attacker.post(reverse("login"), {"username": "alice", "password": "correct horse battery staple"})
    assert reply.status_code == 429 and b"Too many failed sign-ins" in reply.content
    assert attacker.get(reverse("memories:ingest")).status_code == 302
    waits = []
    for i in range(8):
        clock[0] += int(reply["Retry-After"])
        assert attacker.post(reverse("login"), {"username": "alice", "password": f"again {i}"}).status_code == 200
        reply = attacker.post(reverse("login"), {"username": "alice", "password": f"again {i}"})
        assert reply.status_code == 429
        waits.append(int(reply["Retry-After"]))
    # The waits grow (15 s, 30 s, ...) up to five minutes: a guesser gets a dozen tries an hour.
    assert waits == sorted(waits) and waits[0] < waits[-1] == 300
    admin = Client()
    assert b"Too many failed sign-ins" in admin.post("/admin/login/", {"username": "alice", "password": "x"}).content


def test_wrong_passwords_from_anywhere_do_not_lock_the_owner_out(user, clock):
    """Issue 27: ten wrong passwords for an account, from anywhere, refused its owner's right
    one for the rest of the hour; on a loopback install everyone shares one address."""
    right = "correct horse battery staple"
    for i in range(10):
        Client(REMOTE_ADDR=f"203.0.113.{i + 1}").post(reverse("login"), {"username": "alice", "password": f"guess {i}"})
    # From her own address the owner waits at most a minute (the account's count), not an hour.
    owner = Client(REMOTE_ADDR="198.51.100.77")
    reply = owner.post(reverse("login"), {"username": "alice", "password": right})
    assert reply.status_code == 429 and int(reply["Retry-After"]) <= 60
    clock[0] += int(reply["Retry-After"])
    assert owner.post(reverse("login"), {"username": "alice", "password": right}).status_code == 302

    # Everyone behind one address: the guesser's own delays are what the owner meets, at most five minutes.
    cache.clear()
    shared = "127.0.0.1"
    for i in range(40):
        Client(REMOTE_ADDR=shared).post(reverse("login"), {"username": "alice", "password": f"guess {i}"})
        clock[0] += 20
    reply = Client(REMOTE_ADDR=shared).post(reverse("login"), {"username": "alice", "password": right})
    assert reply.status_code == 429 and int(reply["Retry-After"]) <= 300
    clock[0] += int(reply["Retry-After"])
    assert Client(REMOTE_ADDR=shared).post(reverse("login"), {"username": "alice", "password": right}).status_code == 302
    clock[0] += 300
    admin = Client(REMOTE_ADDR=shared).post("/admin/login/", {"username": "alice", "password": right})
    assert b"Too many failed sign-ins" not in admin.content


def test_a_borrowed_session_cannot_guess_the_old_password_to_change_it(user, user_factory):
    """Whoever holds a signed-in session (a shared computer left open) needs the old password
    to change it; guessing that is a sign-in guess, counted and stopped the same way."""
    right = "correct horse battery staple"
    for url, who in ((reverse("password_change"), user), ("/admin/password_change/", user_factory("root", is_staff=True))):
        cache.clear()
        session = Client()
        session.force_login(who)
        for i in range(10):
            change = {"old_password": f"guess {i}", "new_password1": "taken over 98765", "new_password2": "taken over 98765"}
            assert session.post(url, change).status_code == 200, url  # the form again, with the error
        change = {"old_password": right, "new_password1": "taken over 98765", "new_password2": "taken over 98765"}
        reply = session.post(url, change)
        assert reply.status_code == 200 and b"Too many failed sign-ins" in reply.content, url
        who.refresh_from_db()
        assert who.check_password(right), url


def test_spraying_many_accounts_from_one_address_is_stopped(user_factory):
    user_factory("carol")
    attacker = Client(REMOTE_ADDR="198.51.100.7")
    for i in range(30):
        attacker.post(reverse("login"), {"username": f"nobody{i}", "password": "password123"})
    reply = attacker.post(reverse("login"), {"username": "carol", "password": "correct horse battery staple"})
    assert reply.status_code == 429
    # Another address is not affected.
    assert (
        Client(REMOTE_ADDR="198.51.100.8")
        .post(reverse("login"), {"username": "carol", "password": "correct horse battery staple"})
        .status_code
        == 302
    )


def test_guessing_welcome_links_is_throttled_and_reset_pages_are_gone(db):
    attacker = Client(REMOTE_ADDR="198.51.100.20")
    for i in range(30):
        assert attacker.get(f"/welcome/forged-token-{i}/").status_code == 400
    assert attacker.get("/welcome/forged-token-x/").status_code == 429
    for path in ("/accounts/password_reset/", "/accounts/reset/x/y/", "/accounts/password_reset/done/"):
        assert Client().get(path).status_code == 404


# --- 9. the model endpoint's address never reaches users -----------------------------------------


@pytest.fixture
def no_backoff(monkeypatch):
    from memories.modelapi import retries

    monkeypatch.setattr(retries, "sleep", lambda s: None)


def test_model_base_url_and_its_credentials_are_never_shown(user, other_user, settings, no_backoff, caplog):
    settings.MEMORY_LLM_PROVIDER = "openai_compat"
    settings.OPENAI_MODEL = "local-model"
    settings.MEMORY_LLM_MAX_RETRIES = 0
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens there now: the connection is refused, as in the attack.
    settings.OPENAI_BASE_URL = f"http://svc:hunter2pass@127.0.0.1:{port}/v1"
    caplog.set_level(logging.INFO)
    memory = extract_memory(ingest_text(owner=user, text="A note the model never sees.").memory.pk)
    assert memory.status == Memory.Status.FAILED
    bob = Client()
    bob.force_login(other_user)
    sidebar = bob.get(reverse("memories:status")).content.decode()
    shown = [memory.error, circuit.state("openai_compat")["last_error"], sidebar, caplog.text]
    for text in shown:
        assert "hunter2pass" not in text and f"127.0.0.1:{port}" not in text and "svc:" not in text


def test_credentials_in_any_url_are_masked_in_provider_errors():
    error = ProviderError("proxy said: see https://admin:s3cr3t@proxy.example/login")
    assert "s3cr3t" not in str(error) and "https://***@proxy.example/login" in str(error)


# --- also: rate limits on every costly route ----------------------------------------------------


def test_every_costly_route_is_rate_limited_per_user(user, other_user, settings, memory_factory):
    # A day's fixed window: the three calls never straddle its end, as they could a minute's
    # on a loaded machine (the third then lands in a fresh window and is let through).
    settings.MEMORY_RATE_LIMIT_INGEST = "2/d"
    settings.MEMORY_RATE_LIMIT_QUERY = "2/m"
    settings.MEMORY_RATE_LIMIT_RECALL = "2/m"
    settings.MEMORY_RATE_LIMIT_CONSOLIDATE = "2/m"
    memory_factory("Tulips bloom in April in the Keukenhof.")
    web = Client()
    web.force_login(user)
    api = api_client(user)
    calls = {
        "web ingest": lambda i: web.post(reverse("memories:ingest_text"), {"text": f"Note number {i} about tulips."}),
        "web query": lambda i: web.get(reverse("memories:query"), {"q": "tulips"}),
        "api recall": lambda i: api.get("/api/recall", {"q": "tulips"}),
        "api consolidate": lambda i: api.post("/api/consolidate"),
        "web consolidate": lambda i: web.post(reverse("memories:consolidate_now")),
    }
    for name, call in calls.items():
        cache.clear()  # web and API share a user's limit per scope: each route from a fresh count
        replies = [call(i).status_code for i in range(3)]
        assert replies[-1] == 429 and 429 not in replies[:1], (name, replies)
    # Another user's own limits are untouched.
    bob = Client()
    bob.force_login(other_user)
    assert bob.get(reverse("memories:query"), {"q": "tulips"}).status_code == 200


# --- also: purge forgets the text everywhere -----------------------------------------------------


def test_purge_removes_the_text_from_insights_and_their_history(user, memory_factory):
    secret = memory_factory(f"Quokka project: the vault code is {SECRET}. Quokka launch in May.")
    memory_factory("Quokka project launch planning with the Quokka team in May.")
    outcome = consolidate_owner(owner=user)
    assert outcome.consolidations

    def everything():
        rows = list(Consolidation.all_objects.values("summary", "insight"))
        rows += list(Event.objects.values("before", "after", "note"))
        return json.dumps(rows, default=str)

    assert SECRET in everything()  # the insight quoted it (the precondition of the attack)
    delete_memory(owner=user, memory_id=secret.pk)
    Client().force_login(user)
    web = Client()
    web.force_login(user)
    reply = web.post(reverse("memories:purge", args=[secret.pk]), {"confirm": "purge"})
    assert reply.status_code in (200, 302), reply.content[:300]
    assert not Memory.all_objects.filter(pk=secret.pk).exists()
    assert SECRET not in everything()


def test_purge_removes_the_text_from_the_update_recorded_on_the_other_memory(user, memory_factory):
    """An update's reason quotes both facts and is recorded on both memories: purging one
    must not leave its words in the other's history."""
    old = memory_factory(f"My home address is 12 {SECRET}straat, Utrecht.")
    memory_factory("I moved: my home address is now 7 Zephyrlaan, Leiden.")
    assert Memory.objects.get(pk=old.pk).outdated_by_id is not None  # judged an update
    delete_memory(owner=user, memory_id=old.pk)
    web = Client()
    web.force_login(user)
    assert web.post(reverse("memories:purge", args=[old.pk]), {"confirm": "purge"}).status_code in (200, 302)
    assert SECRET not in json.dumps(list(Event.objects.values("before", "after", "note")), default=str)


# --- also: citations and memory text in answers --------------------------------------------------


def test_a_citation_inside_a_link_title_cannot_break_out_of_the_attribute():
    html = markdown_safe('[docs](http://example.com "see [Memory 5] x" ) and [Memory 7]')
    assert html.count("<a ") == 2  # the docs link and the real citation, nothing injected
    assert 'title="see [Memory 5] x"' in html
    assert 'hx-get="/memories/7/card/?cited=1"' in html and "/memories/5/" not in html


def test_memory_html_shows_as_text_in_the_answer(signed_in, memory_factory):
    memory_factory("Tulip order: <b>forty</b> bulbs <img src=x onerror=alert(1)> for the garden.")
    page = hx(signed_in, "get", reverse("memories:query"), {"q": "tulip order bulbs"}).content.decode()
    answer = page.split('id="answer-text"', 1)[1].split("</div>", 1)[0]
    assert "&lt;b&gt;forty&lt;/b&gt;" in answer and "<b>" not in answer and "<img" not in answer


# --- also: impossible dates are refused, not 500s ------------------------------------------------


def test_a_question_ten_thousand_years_back_is_a_clear_400(user, memory_factory):
    memory_factory("We went to Rome three years ago.")
    web = Client(raise_request_exception=False)
    web.force_login(user)
    api = api_client(user)
    question = "What happened 10000 years ago?"
    for reply in (
        web.get(reverse("memories:query"), {"q": question}),
        api.get("/api/query", {"q": question}),
        api.get("/api/recall", {"q": question}),
    ):
        assert reply.status_code == 400, reply.content[:200]
        assert b"date" in reply.content


@pytest.mark.parametrize("when", ["0001-01-01", "0001-01-01T00:00", "9999-12-31T23:59", "9999-12-31"])
@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/New_York"])
def test_occurred_at_at_the_edge_of_the_calendar_is_a_clear_400(user, settings, when, zone):
    settings.TIME_ZONE = zone
    web = Client(raise_request_exception=False)
    web.force_login(user)
    reply = hx(web, "post", reverse("memories:ingest_text"), {"text": f"A note dated {when}.", "occurred_at": when})
    assert reply.status_code == 400 and b"between the years" in reply.content
    reply = api_client(user).post("/api/ingest", {"text": "Another note.", "occurred_at": when}, content_type="application/json")
    assert reply.status_code in (400, 422) and "between the years" in reply.json()["detail"]
    assert not Memory.objects.exists()


# --- also: headers, hosts, logs, CSP, JSON errors ------------------------------------------------


def test_forwarded_proto_is_believed_only_from_a_configured_proxy(user, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.MEMORY_TRUSTED_PROXIES = ["10.0.0.5"]
    spoofed = Client(REMOTE_ADDR="198.51.100.1").get(reverse("login"), HTTP_X_FORWARDED_PROTO="https")
    assert spoofed.status_code == 301 and spoofed["Location"].startswith("https://")
    proxied = Client(REMOTE_ADDR="10.0.0.5").get(reverse("login"), HTTP_X_FORWARDED_PROTO="https")
    assert proxied.status_code == 200


def test_default_allowed_hosts_do_not_include_testserver():
    env = {k: v for k, v in os.environ.items() if k != "ALLOWED_HOSTS"}
    env["DJANGO_SETTINGS_MODULE"] = "memoryagent.settings"
    out = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.ALLOWED_HOSTS)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "testserver" not in out and "localhost" in out


def test_welcome_tokens_never_reach_the_logs(capsys):
    from memories.gunicorn_logging import RedactingLogger

    token = "eyJ1Ijo1fQ:1tSECRETtoken:signature"
    logging.config.dictConfig(django_settings.LOGGING)  # the console handler, on captured stderr
    try:
        Client().get(f"/welcome/{token}/")
        logged = capsys.readouterr().err
    finally:
        logging.config.dictConfig(django_settings.LOGGING)
    assert "/welcome/" in logged and token not in logged

    class Config:
        access_log_format = '%(h)s "%(r)s" %(s)s "%(f)s"'
        errorlog = "-"
        accesslog = None
        loglevel = "info"
        syslog = False
        disable_redirect_access_to_syslog = True
        capture_output = False
        logconfig = logconfig_dict = logconfig_json = None
        user, group, umask = os.getuid(), os.getgid(), 0

    logger = RedactingLogger.__new__(RedactingLogger)
    logger.cfg = Config()

    class Response:
        status, sent, headers = "200 OK", 10, []

    from datetime import timedelta

    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/welcome/{token}/",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "PATH_INFO": f"/welcome/{token}/",
        "QUERY_STRING": "",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_REFERER": f"http://localhost/welcome/{token}/",
    }
    atoms = logger.atoms(Response(), {}, environ, timedelta(seconds=0))
    assert all(token not in str(value) for value in atoms.values())


def test_inbox_names_with_newlines_cannot_forge_log_lines(user, settings, caplog):
    settings.MEMORY_INBOX_USER = "alice"
    inbox = Path(settings.MEMORY_INBOX_DIR)
    inbox.mkdir(parents=True)
    (inbox / "x.exe\n2026-01-01 INFO memories: admin signed in").write_bytes(b"MZ\x90\x00")
    caplog.set_level(logging.INFO)
    scan_inbox(settle_seconds=0)
    lines = [r.getMessage() for r in caplog.records if "inbox file" in r.getMessage()]
    assert lines and all("\n" not in line for line in lines)


def test_pages_carry_a_content_security_policy(signed_in):
    for name in ("memories:ingest", "memories:query", "memories:list"):
        policy = signed_in.get(reverse(name))["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy


def test_api_refuses_oversized_multipart_bodies_in_json(user):
    api = api_client(user)
    files = {f"file{i}": SimpleUploadedFile(f"a{i}.txt", b"hi") for i in range(120)}
    reply = api.post("/api/ingest", files)
    assert reply.status_code == 413 and reply["Content-Type"].startswith("application/json")
    assert "files" in reply.json()["detail"]
    reply = api.post("/api/ingest", {f"field{i}": "x" for i in range(1200)})
    assert reply.status_code == 413 and reply.json()["detail"]


# --- issue 27: an import never trusts the file ---------------------------------------------------


def _export_lines(owner) -> list[bytes]:
    from memories.services.export import export_space

    return b"".join(export_space(owner=owner)).splitlines(keepends=True)


def _resealed(lines: list[bytes]) -> io.BytesIO:
    """The end line recomputed for the edited lines, as the attacker did."""
    import hashlib

    body = lines[:-1]
    counts: dict[str, int] = {}
    for line in body:
        kind = json.loads(line)["type"]
        counts[kind] = counts.get(kind, 0) + 1
    end = {"type": "end", "counts": counts, "sha256": hashlib.sha256(b"".join(body)).hexdigest()}
    return io.BytesIO(b"".join(body) + json.dumps(end).encode() + b"\n")


def _edited(lines: list[bytes], kind: str, change) -> io.BytesIO:
    out, done = [], False
    for line in lines:
        record = json.loads(line)
        if record["type"] == kind and not done:
            change(record)
            done = True
            line = json.dumps(record, allow_nan=True).encode() + b"\n"
        out.append(line)
    return _resealed(out)


def test_an_edited_text_with_a_recomputed_checksum_does_not_keep_the_old_hash(user, other_user, memory_factory):
    from memories.services.importer import import_space

    original = "The vault code is 4711 and only Alice knows it."
    memory_factory(original)
    edited = _edited(_export_lines(user), "memory", lambda r: r.update(raw_text="Bob wrote this text instead."))
    import_space(owner=other_user, lines=edited)
    imported = Memory.objects.get(owner=other_user)
    assert imported.raw_text == "Bob wrote this text instead."
    # The original text is new to bob's space: stored, not "already stored as" the edited memory.
    result = ingest_text(owner=other_user, text=original)
    assert result.created and result.memory.pk != imported.pk


@pytest.mark.parametrize(
    "change",
    [
        {"entities": [None, 5]},
        {"topics": [{"x": 1}, 7]},
        {"importance": float("inf")},
        {"importance": float("nan")},
        {"importance": "1e309"},
        {"metadata": ["not", "an", "object"]},
        {"occurred_at": "9999-12-31T23:59:59+00:00"},
        {"status": "owned"},
        {"raw_text": "lone \ud800 surrogate"},
    ],
    ids=lambda c: next(iter(c)),
)
def test_field_types_the_app_never_writes_are_refused_and_nothing_is_imported(user, other_user, memory_factory, change):
    from memories.services.import_check import ImportRefused
    from memories.services.importer import import_space

    memory_factory("An ordinary note about the garden.")
    with pytest.raises(ImportRefused) as refused:
        import_space(owner=other_user, lines=_edited(_export_lines(user), "memory", lambda r: r.update(change)))
    assert "Nothing was imported" in str(refused.value)
    assert not Memory.all_objects.filter(owner=other_user).exists() and not Event.objects.filter(owner=other_user).exists()
    # bob's pages and the scheduled consolidation still work.
    bob = api_client(other_user)
    assert bob.get("/api/memories").status_code == 200 and bob.get("/api/graph").status_code == 200
    consolidate_owner(owner=other_user)


def test_imported_history_is_marked_imported_and_never_credited_to_the_importer(user, other_user):
    from memories.services.importer import import_space

    token = api_client(user)
    assert token.post("/api/ingest", {"text": "Alice's note via her token."}, content_type="application/json").status_code == 201
    import_space(owner=other_user, lines=io.BytesIO(b"".join(_export_lines(user))))
    events = Event.objects.filter(owner=other_user)
    assert events.exists()
    assert all(e.actor.startswith("imported: ") and e.actor_user_id is None for e in events)


def test_a_file_name_with_windows_parent_folders_is_imported_as_a_plain_name(user, other_user, settings):
    from memories.services.importer import import_space

    ingest_file(owner=user, fileobj=io.BytesIO(b"plain notes " * 10), name="notes.txt")

    def rename(record):
        record["original"]["name"] = record["metadata"]["file_name"] = "x\\..\\..\\win.txt"

    result = import_space(owner=other_user, lines=_edited(_export_lines(user), "memory", rename))
    memory = Memory.objects.get(owner=other_user)
    assert result.files == 1 and memory.file_name == memory.metadata["file_name"] == "win.txt"
    assert Path(memory.original.path).resolve().is_relative_to(Path(settings.MEDIA_ROOT).resolve())


def test_vectors_are_made_after_an_import(user, other_user, memory_factory, settings, fake_openai, sync_tasks):
    from memories.models import MemoryVector
    from memories.services.importer import import_space

    settings.MEMORY_LLM_PROVIDER, settings.OPENAI_MODEL = "offline", ""
    for text in ("The boat is moored at pier 4.", "The sails were repaired in May.", "Winter storage is in Hamble."):
        memory_factory(text)  # made with embeddings off: the export carries no vectors anyway
    data = io.BytesIO(b"".join(_export_lines(user)))
    settings.MEMORY_EMBEDDINGS, settings.OPENAI_EMBEDDING_MODEL = "openai_compat", "embed-a"
    import_space(owner=other_user, lines=data)
    assert MemoryVector.objects.filter(owner=other_user).count() == 3


def test_an_import_writes_in_short_transactions_and_a_late_failure_says_what_was_stored(
    user, other_user, memory_factory, monkeypatch
):
    from memories.services import importer

    monkeypatch.setattr(importer, "MEMORY_BATCH", 2)
    for i in range(5):
        memory_factory(f"Note number {i} about the allotment.")
    data = b"".join(_export_lines(user))
    opened = []
    real_atomic = importer.transaction.atomic

    @contextmanager
    def counted(*args, **kwargs):
        with real_atomic(*args, **kwargs):
            opened.append(1)
            yield

    def disk_full(self, records):
        raise OSError("disk full")

    monkeypatch.setattr(importer.transaction, "atomic", counted)
    monkeypatch.setattr(importer._Writer, "_event_batch", disk_full)
    with pytest.raises(importer.ImportStopped) as stopped:
        importer.import_space(owner=other_user, lines=io.BytesIO(data))
    assert "Stored before it: 5 memories" in str(stopped.value) and "disk full" in str(stopped.value)
    assert Memory.objects.filter(owner=other_user).count() == 5
    assert len(opened) >= 3  # five memories in batches of two: three transactions at least


# --- issue 27: a far date is never a 500 ---------------------------------------------------------


@pytest.mark.parametrize("dates", [{"date_to": "9999-12-31"}, {"date_from": "0001-01-01"}, {"date_from": "9999-12-31"}])
def test_a_date_at_the_end_of_the_calendar_is_no_500(user, memory_factory, dates):
    memory_factory("A note about the harbour, written today.")
    api = api_client(user)
    web = Client(raise_request_exception=False)
    web.force_login(user)
    for reply in (
        api.get("/api/timeline", dates),
        api.get("/api/timeline", {**dates, "zoom": "day"}),
        api.get("/api/graph", dates),
        web.get("/timeline/", dates),
        web.get("/memories/", dates),
        web.get("/graph/", dates),
    ):
        assert reply.status_code == 200, (reply.request["PATH_INFO"], reply.content[:300])
    found = api.get("/api/graph", dates).json()
    assert len(found["nodes"]) == (0 if dates.get("date_from") == "9999-12-31" else 1)


# --- issue 27: strict agent tools ----------------------------------------------------------------


def _mcp(client: Client, method: str, params: dict | None = None, **headers):
    body = {"jsonrpc": "2.0", "id": 7, "method": method, **({"params": params} if params is not None else {})}
    reply = client.post(
        "/mcp", json.dumps(body), content_type="application/json", HTTP_ACCEPT="application/json, text/event-stream", **headers
    )
    return reply, json.loads(reply.content)


def _mcp_client(user, **token) -> Client:
    return Client(
        raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {create_token(owner=user, name='agent', **token)[1]}"
    )


def test_a_misspelled_tool_argument_is_refused_not_ignored(user):
    agent = _mcp_client(user)
    _, listed = _mcp(agent, "tools/list")
    assert all(tool["inputSchema"]["additionalProperties"] is False for tool in listed["result"]["tools"])
    _, called = _mcp(
        agent, "tools/call", {"name": "add_memory", "arguments": {"text": "Dentist on Friday.", "occured_at": "2020-01-01"}}
    )
    assert called["result"]["isError"] and "occured_at" in called["result"]["content"][0]["text"]
    assert not Memory.objects.filter(owner=user).exists()


def test_a_bad_token_is_a_401_mcp_clients_can_read(db):
    reply, body = _mcp(Client(raise_request_exception=False, HTTP_AUTHORIZATION="Bearer mem_made-up"), "tools/list")
    assert reply.status_code == 401 and body["id"] == 7 and "revoked API token" in body["error"]["message"]
    challenge = reply["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge and "error_description=" in challenge


def test_the_server_says_its_version(user):
    from memories import __version__

    _, body = _mcp(
        _mcp_client(user),
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
    )
    assert body["result"]["serverInfo"]["version"] == __version__ != ""


def test_a_web_page_from_another_site_cannot_drive_the_tools(user, settings):
    agent = _mcp_client(user)
    reply, body = _mcp(
        agent, "tools/call", {"name": "add_memory", "arguments": {"text": "x"}}, HTTP_ORIGIN="https://evil.example"
    )
    assert reply.status_code == 403 and "evil.example" in body["error"]["message"]
    assert not Memory.objects.exists()
    assert _mcp(agent, "tools/list", HTTP_ORIGIN="http://testserver")[0].status_code == 200  # its own pages
    assert _mcp(agent, "tools/list")[0].status_code == 200  # agents send no Origin


# --- issue 27: token scopes, expiry and a storage quota -----------------------------------------


def test_a_read_token_reads_and_changes_nothing(user, memory_factory):
    memory = memory_factory("The spare key is under the blue pot.")
    reader = Client(
        raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {create_token(owner=user, name='r', scope='read')[1]}"
    )
    assert reader.get("/api/memories").status_code == 200 and reader.get("/api/export").status_code == 200
    for reply in (
        reader.post("/api/ingest", {"text": "A new note."}, content_type="application/json"),
        reader.patch(f"/api/memories/{memory.pk}", {"importance": 1}, content_type="application/json"),
        reader.post("/api/clear"),
    ):
        assert reply.status_code == 403 and "read scope" in reply.json()["detail"]
    agent = _mcp_client(user, scope="read")
    _, found = _mcp(agent, "tools/call", {"name": "search_memories", "arguments": {"query": "spare key"}})
    assert not found["result"]["isError"]
    _, added = _mcp(agent, "tools/call", {"name": "add_memory", "arguments": {"text": "Sneaked in."}})
    assert added["result"]["isError"] and "needs write" in added["result"]["content"][0]["text"]
    assert list(Memory.objects.filter(owner=user)) == [memory]


def test_only_an_admin_token_clears_or_deletes(user, memory_factory):
    memory = memory_factory("The boiler was serviced in March.")
    writer = Client(
        raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {create_token(owner=user, name='w', scope='write')[1]}"
    )
    assert writer.post("/api/ingest", {"text": "A note the agent may add."}, content_type="application/json").status_code == 201
    assert writer.post("/api/clear").status_code == 403
    assert writer.delete(f"/api/memories/{memory.pk}").status_code == 403
    assert writer.post("/api/delete", {"memory_id": memory.pk}, content_type="application/json").status_code == 403
    _, deleted = _mcp(
        _mcp_client(user, scope="write"), "tools/call", {"name": "delete_memory", "arguments": {"memory_id": memory.pk}}
    )
    assert deleted["result"]["isError"] and "needs admin" in deleted["result"]["content"][0]["text"]
    assert Memory.objects.filter(pk=memory.pk).exists()
    admin = Client(
        raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {create_token(owner=user, name='a', scope='admin')[1]}"
    )
    assert admin.post("/api/clear").status_code == 200 and not Memory.objects.filter(owner=user).exists()


def test_an_expired_token_is_refused(user):
    from datetime import timedelta

    from memories.models import ApiToken

    token, plaintext = create_token(owner=user, name="short", expires_in=timedelta(days=30))
    api = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert api.get("/api/memories").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=token.created_at)  # the thirty days have passed
    assert api.get("/api/memories").status_code == 401
    assert _mcp(api, "tools/list")[0].status_code == 401


def test_create_token_command_takes_a_scope_and_an_expiry(user):
    from django.core.management import call_command

    from memories.models import ApiToken

    out, said = io.StringIO(), io.StringIO()
    call_command("create_token", "alice", "--name", "reader", "--scope", "read", "--expires", "30d", stdout=out, stderr=said)
    token = ApiToken.objects.get(name="reader")
    assert token.scope == "read" and 29 <= (token.expires_at - token.created_at).days <= 30
    assert "read" in said.getvalue() and out.getvalue().strip().startswith("mem_")


def test_the_tokens_page_makes_scoped_tokens(signed_in, user):
    from memories.models import ApiToken

    reply = signed_in.post("/settings/tokens/", {"name": "phone agent", "scope": "write", "expires": "7d"})
    assert reply.status_code in (200, 302)
    token = ApiToken.objects.get(owner=user, name="phone agent")
    assert token.scope == "write" and token.expires_at is not None
    page = signed_in.get("/settings/tokens/").content.decode()
    assert "phone agent" in page and "write" in page


def test_a_storage_quota_stops_uploads_that_would_fill_the_disk(user, settings):
    from memories.services import IngestError

    settings.MEMORY_MAX_STORAGE_MB = 1
    ingest_file(owner=user, fileobj=io.BytesIO(b"a" * 700_000), name="first.txt")
    with pytest.raises(IngestError, match="storage"):
        ingest_file(owner=user, fileobj=io.BytesIO(b"b" * 700_000), name="second.txt")
    reply = api_client(user).post("/api/ingest", {"file": SimpleUploadedFile("third.txt", b"c" * 700_000)})
    assert reply.status_code == 400 and "storage" in reply.json()["detail"]
    assert Memory.objects.filter(owner=user).count() == 1


def test_records_out_of_the_exports_order_are_refused(user, other_user, memory_factory):
    from memories.services.import_check import ImportRefused
    from memories.services.importer import import_space

    memory_factory("A note that will come last.")
    lines = _export_lines(user)
    memory_line = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "memory")
    shuffled = lines[:memory_line] + lines[memory_line + 1 : -1] + [lines[memory_line], lines[-1]]
    with pytest.raises(ImportRefused, match="out of order"):
        import_space(owner=other_user, lines=_resealed(shuffled))
    assert not Memory.all_objects.filter(owner=other_user).exists()


# --- issue 27: an insight's sources and a memory's links stay in one space -----------------------


def _quokka_space(user, other_user, memory_factory):
    """Alice's insight over two of her memories, and Bob's memory that shares its words."""
    mine = [
        memory_factory("Quokka project launch planning with the Quokka team in May."),
        memory_factory("Quokka project budget review with the Quokka team in May."),
    ]
    outcome = consolidate_owner(owner=user)
    assert len(outcome.consolidations) == 1
    theirs = memory_factory(f"Quokka project launch planning with the Quokka team in May: vault code {SECRET}.", owner=other_user)
    return outcome.consolidations[0], mine, theirs


def _everything_alice_reads(user, memory_ids: list[int], consolidation_id: int) -> str:
    """What Alice's API, pages and agent tools show about her memories and her insight."""
    api = api_client(user)
    web = Client()
    web.force_login(user)
    agent = _mcp_client(user)
    shown = [api.get("/api/consolidations").content.decode(), api.get("/api/memories").content.decode()]
    for pk in memory_ids:
        shown += [
            api.get(f"/api/memories/{pk}").content.decode(),
            api.get(f"/api/memories/{pk}/consolidations").content.decode(),
            api.get(f"/api/memories/{pk}/links").content.decode(),
            web.get(reverse("memories:detail", args=[pk])).content.decode(),
            json.dumps(_mcp(agent, "tools/call", {"name": "get_memory", "arguments": {"memory_id": pk}})[1]),
            json.dumps(_mcp(agent, "resources/read", {"uri": f"memory://memories/{pk}"})[1]),
        ]
    shown += [
        web.get(reverse("memories:consolidations")).content.decode(),
        web.get(reverse("memories:list")).content.decode(),
        json.dumps(_mcp(agent, "tools/call", {"name": "list_memories", "arguments": {}})[1]),
        json.dumps(_mcp(agent, "resources/read", {"uri": f"memory://insights/{consolidation_id}"})[1]),
        b"".join(api.get("/api/export").streaming_content).decode(),
    ]
    return "\n".join(shown)


def _shown_ids(user, memory_ids: list[int], consolidation_id: int) -> set[int]:
    """Every memory id Alice's API and agent tools name as a source or a connection."""
    api = api_client(user)
    agent = _mcp_client(user)
    ids = {i for c in api.get("/api/consolidations").json()["consolidations"] for i in c["source_ids"]}
    ids |= {c["linked_to"] for m in api.get("/api/memories").json()["memories"] for c in m["connections"]}
    for pk in memory_ids:
        ids |= {c["linked_to"] for c in api.get(f"/api/memories/{pk}").json()["connections"]}
        ids |= {i for c in api.get(f"/api/memories/{pk}/consolidations").json() for i in c["source_ids"]}
        got = _mcp(agent, "tools/call", {"name": "get_memory", "arguments": {"memory_id": pk}})[1]["result"]
        ids |= {c["linked_to"] for c in got["structuredContent"]["connections"]}
    listed = _mcp(agent, "tools/call", {"name": "list_memories", "arguments": {}})[1]["result"]["structuredContent"]
    ids |= {c["linked_to"] for m in listed["memories"] for c in m["connections"]}
    insight = _mcp(agent, "resources/read", {"uri": f"memory://insights/{consolidation_id}"})[1]["result"]
    ids |= set(json.loads(insight["contents"][0]["text"])["source_ids"])
    return ids


def test_the_admin_refuses_an_insight_over_another_owners_memory(user, other_user, user_factory, memory_factory):
    consolidation, mine, theirs = _quokka_space(user, other_user, memory_factory)
    staff = Client()
    staff.force_login(user_factory("root", is_staff=True, is_superuser=True))
    url = reverse("admin:memories_consolidation_change", args=[consolidation.pk])
    form = staff.get(url).content.decode()
    # The sources' lookup lists only Alice's memories.
    assert f"owner__id__exact={user.pk}" in form
    lookup = staff.get(reverse("admin:memories_memory_changelist"), {"owner__id__exact": user.pk, "_popup": 1, "_to_field": "id"})
    assert lookup.status_code == 200 and "Quokka project budget" in lookup.content.decode()
    assert SECRET not in lookup.content.decode()
    fields = {"owner": user.pk, "summary": "Quokka planning.", "insight": "The Quokka team meets in May.", "_save": "Save"}
    sources = ",".join(str(m.pk) for m in [*mine, theirs])
    reply = staff.post(url, {**fields, "sources": sources})
    assert reply.status_code == 200 and "errornote" in reply.content.decode()
    assert set(consolidation.sources.values_list("pk", flat=True)) == {m.pk for m in mine}
    # A new insight too, where the form cannot know the owner until it is posted.
    add = staff.post(reverse("admin:memories_consolidation_add"), {**fields, "sources": sources})
    assert add.status_code == 200 and "belong to a different owner" in add.content.decode()
    assert Consolidation.all_objects.count() == 1
    # The form itself is sound: the same insight over Alice's memories alone is saved.
    ok = staff.post(reverse("admin:memories_consolidation_add"), {**fields, "sources": ",".join(str(m.pk) for m in mine)})
    assert ok.status_code == 302 and Consolidation.all_objects.count() == 2
    assert SECRET not in _everything_alice_reads(user, [m.pk for m in mine], consolidation.pk)
    assert Memory.objects.get(pk=theirs.pk).summary == theirs.summary and theirs.pk not in _shown_ids(
        user, [m.pk for m in mine], consolidation.pk
    )


def test_a_cross_owner_source_or_link_written_by_hand_never_shows(user, other_user, memory_factory):
    """Rows the admin now refuses, as an old database or hand-written SQL could hold them."""
    from memories.models import MemoryLink

    consolidation, mine, theirs = _quokka_space(user, other_user, memory_factory)
    consolidation.sources.add(theirs)
    MemoryLink.objects.create(from_memory=mine[0], to_memory=theirs, relationship=f"same vault as {SECRET}")
    MemoryLink.objects.create(from_memory=theirs, to_memory=mine[1], relationship=f"vault {SECRET} again")
    ids = [m.pk for m in mine]
    assert SECRET not in _everything_alice_reads(user, ids, consolidation.pk)
    assert theirs.pk not in _shown_ids(user, ids, consolidation.pk)
    # Bob's memory and its rows are left as they were: nothing is "fixed" by reading.
    assert consolidation.sources.filter(pk=theirs.pk).exists() and MemoryLink.objects.filter(to_memory=theirs).exists()


def test_re_deriving_an_insight_never_reads_another_owners_source(user, other_user, memory_factory):
    from django.utils import timezone

    from memories.models import MemoryLink

    consolidation, mine, theirs = _quokka_space(user, other_user, memory_factory)
    consolidation.sources.add(theirs)
    Consolidation.objects.filter(pk=consolidation.pk).update(stale_at=timezone.now())
    consolidate_owner(owner=user)
    consolidation.refresh_from_db()
    assert consolidation.stale_at is None  # re-derived, from Alice's memories alone
    assert SECRET not in consolidation.summary + consolidation.insight
    through = Consolidation.sources.through.objects.filter(consolidation=consolidation)
    assert set(through.values_list("memory_id", flat=True)) == {m.pk for m in mine}
    # _store and _rederive write links with bulk_create, which runs no clean(): none joins Bob's memory.
    assert not MemoryLink.objects.filter(from_memory=theirs).exists()
    assert not MemoryLink.objects.filter(to_memory=theirs).exists()
    assert SECRET not in json.dumps(list(Event.objects.filter(owner=user).values("before", "after", "note")), default=str)
    untouched = Memory.objects.get(pk=theirs.pk)
    assert untouched.summary == theirs.summary and untouched.consolidated_at is None


def test_purging_a_memory_reaches_another_owners_insight_that_cites_it(user, other_user, memory_factory):
    from memories.services import purge_memory
    from memories.services.history import Actor, record

    consolidation, mine, theirs = _quokka_space(user, other_user, memory_factory)
    # What the old code left behind: Bob's memory among Alice's sources, its text re-derived
    # into her insight and into the insight's history.
    consolidation.sources.add(theirs)
    copied = {"summary": "Quokka vault.", "insight": f"The Quokka vault code is {SECRET}."}
    Consolidation.objects.filter(pk=consolidation.pk).update(**copied)
    record(
        consolidation,
        Event.Action.REDERIVED,
        Actor.for_user(user),
        after={**copied, "sources": sorted([*(m.pk for m in mine), theirs.pk])},
    )
    delete_memory(owner=other_user, memory_id=theirs.pk)
    assert purge_memory(owner=other_user, memory_id=theirs.pk)
    consolidation.refresh_from_db()
    assert consolidation.is_stale and SECRET not in consolidation.summary + consolidation.insight
    assert not consolidation.sources.filter(pk=theirs.pk).exists()
    assert SECRET not in json.dumps(list(Event.objects.values("before", "after", "note")), default=str)
    # Alice's own memories stay as they were.
    assert [Memory.objects.get(pk=m.pk).summary for m in mine] == [m.summary for m in mine]
