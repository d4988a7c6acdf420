"""Hostile input through every entry point but the HTML pages: the JSON API (JSON and
multipart), `manage.py ingest` (files, --text, --jsonl) and the inbox watcher.

Each input gets a clear refusal or is stored safely; never a 500 or a traceback; nothing is
written outside the data dir; the memories already there (the caller's and another user's)
are untouched.
"""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time
import zipfile
import zlib
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from memories.models import Memory, ProcessedFile
from memories.services import extract_memory
from memories.services.inbox import scan_inbox
from memories.services.tokens import create_token

pytestmark = pytest.mark.django_db


# --- hostile files ----------------------------------------------------------------------------


def zip_bomb_docx(inflated_mb: int = 64) -> bytes:
    """A .docx whose document.xml inflates from a few hundred KB to `inflated_mb` MB."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        )
        with zf.open("word/document.xml", "w") as member:
            member.write(
                b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>'
            )
            chunk = b"A" * (1024 * 1024)
            for _ in range(inflated_mb):
                member.write(chunk)
            member.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return buffer.getvalue()


def billion_laughs_docx() -> bytes:
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{"&lol%s;" % (i - 1 if i > 1 else "") * 10}">' for i in range(1, 10)
    )
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE lolz [{entities}]>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>'
        "<w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("word/document.xml", xml)
    return buffer.getvalue()


def pdf(objects: list[bytes]) -> bytes:
    """A PDF from numbered object bodies (1 = catalog), with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def pdf_with_huge_page_count() -> bytes:
    """Two billion pages claimed, 100,000 references to one real page."""
    kids = b" ".join([b"3 0 R"] * 100_000)
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count 2000000000 /Kids [" + kids + b"] >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
        ]
    )


def pdf_with_cyclic_page_tree() -> bytes:
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count 3 /Kids [2 0 R 3 0 R] >>",
            b"<< /Type /Pages /Parent 2 0 R /Count 2 /Kids [3 0 R 2 0 R] >>",
        ]
    )


def pdf_with_stream_bomb(inflated_mb: int = 96) -> bytes:
    """One page whose content stream inflates to `inflated_mb` MB of text operators."""
    squeeze = zlib.compressobj(9)
    line = b"BT /F1 12 Tf 72 712 Td (bomb) Tj ET\n" * 28000  # ~1 MB
    packed = b"".join(squeeze.compress(line) for _ in range(inflated_mb)) + squeeze.flush()
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
            f"<< /Length {len(packed)} /Filter /FlateDecode >>\nstream\n".encode() + packed + b"\nendstream",
        ]
    )


BINARY = bytes(range(256)) * 64


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def bystanders(user, other_user, memory_factory):
    """Memories that must come through every test unchanged."""
    mine = memory_factory("The spare key is under the blue flower pot.")
    theirs = memory_factory("Bob's bike lock code is 4711.", owner=other_user)

    def snapshot():
        return [Memory.all_objects.filter(pk=m.pk).values().get() for m in (mine, theirs)]

    before = snapshot()
    yield
    assert snapshot() == before


@pytest.fixture
def scratch(tmp_path):
    """Where a test makes its hostile files before handing them in (not watched by `outside`)."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


# Names the hostile uploads point at; the repository (the server's working dir) must not gain any.
TRAVERSAL_TARGETS = {"passwd.txt", "win.ini.txt", "evil.txt", "b.txt", "escaped.txt"}


@pytest.fixture
def outside(tmp_path, isolated_storage):
    """Every file under the test's folder that is not in the data dir, the inbox or the
    scratch folder must stay as it was; and no traversal target appears in the repository
    (which other people edit meanwhile, so only those names are looked for there)."""
    root = Path(__file__).resolve().parent.parent
    skip = {isolated_storage, tmp_path / "inbox", tmp_path / "scratch"}
    pruned = {".venv", ".git", "node_modules", "__pycache__", ".pytest_cache"}

    def listing():
        found = set()
        for dirpath, dirnames, filenames in os.walk(tmp_path):
            here = Path(dirpath)
            if here in skip or skip & set(here.parents):
                continue
            found.update(str(here / f) for f in filenames)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in pruned]
            found.update(str(Path(dirpath) / f) for f in filenames if f in TRAVERSAL_TARGETS)
        return found

    before = listing()
    yield
    new = listing() - before
    assert not new, f"files written outside the data dir: {sorted(new)[:10]}"


@pytest.fixture
def api(user, settings):
    token = create_token(owner=user, name="hostile")[1]
    # A 500 must show up as a status here, not as an exception the test framework raises.
    client = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def assert_clear_refusal(reply, status, fragment=""):
    assert reply.status_code == status, (reply.status_code, reply.content[:300])
    detail = reply.json()["detail"]
    assert detail and fragment.lower() in detail.lower(), detail


def assert_within(path: str, root: Path):
    assert Path(path).resolve().is_relative_to(Path(root).resolve()), path


# --- the JSON API, JSON bodies -------------------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000

JSON_CASES = [
    ("empty body", b"", 422, "JSON object"),
    ("null", b"null", 422, "JSON object"),
    ("array", b"[1, 2]", 422, "JSON object"),
    ("no text", b"{}", 422, "text"),
    ("empty text", b'{"text": ""}', 422, "text"),
    ("whitespace text", b'{"text": "   \\n\\t "}', 400, "no text"),
    ("text not a string", b'{"text": {"a": 1}}', 422, "text"),
    ("binary body", BINARY, 400, "not valid JSON"),
    ("latin-1 body", '{"text": "café au lait"}'.encode("latin-1"), 400, "not valid JSON"),
    ("lone surrogate", b'{"text": "half a pair \\ud800 here"}', 422, "valid string"),
    ("over the text limit", json.dumps({"text": "x" * 1_000_001}).encode(), 400, "limit"),
    ("source too long", json.dumps({"text": "fine", "source": "s" * 501}).encode(), 422, "source"),
    ("bad date", b'{"text": "fine", "occurred_at": "31/31/31"}', 422, "occurred_at"),
    ("date out of range", b'{"text": "fine", "occurred_at": "0001-01-01"}', 422, "out of range"),
    ("truncated", b'{"text": "cut off in the mid', 400, "not valid JSON"),
]


@pytest.mark.parametrize("body,status,fragment", [c[1:] for c in JSON_CASES], ids=[c[0] for c in JSON_CASES])
def test_api_json_refusals_are_clear(api, bystanders, outside, body, status, fragment):
    reply = api.post("/api/ingest", data=body, content_type="application/json")
    assert_clear_refusal(reply, status, fragment)
    assert Memory.objects.count() == 2


@pytest.mark.parametrize(
    "body",
    [DEEP, b'{"text": "x", "metadata": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_001],
    ids=["nested arrays", "nested objects"],
)
def test_api_deeply_nested_json_is_a_clear_refusal(api, bystanders, body):
    reply = api.post("/api/ingest", data=body, content_type="application/json")
    assert_clear_refusal(reply, 400, "JSON")


@pytest.mark.parametrize("path,method", [("/api/delete", "post"), ("/api/memories/1", "patch")])
def test_deeply_nested_json_elsewhere_in_the_api_is_refused(api, bystanders, path, method):
    reply = getattr(api, method)(path, data=DEEP, content_type="application/json")
    assert_clear_refusal(reply, 400, "JSON")


def test_api_body_over_the_upload_limit_is_413(api, bystanders, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
    reply = api.post("/api/ingest", data=json.dumps({"text": "y" * (2 * 1024 * 1024)}), content_type="application/json")
    assert_clear_refusal(reply, 413, "larger than")


def test_api_wrong_content_type_is_415(api, bystanders):
    assert_clear_refusal(api.post("/api/ingest", data=b"just text", content_type="text/plain"), 415, "application/json")


def test_control_characters_and_nul_are_stored_clean(api, bystanders):
    reply = api.post(
        "/api/ingest",
        data=json.dumps({"text": "bell\x07 nul\x00 escape\x1b[31m red\r\nnext line"}),
        content_type="application/json",
    )
    assert reply.status_code == 201, reply.content
    memory = Memory.objects.get(pk=reply.json()["memory_id"])
    assert memory.raw_text == "bell nul escape[31m red\nnext line"
    assert extract_memory(memory.pk).status == "ready"


def test_utf16_json_body_is_read(api, bystanders):
    # RFC 8259 allows only UTF-8 on the wire, but json.loads detects UTF-16/32: decoded, not garbled.
    reply = api.post("/api/ingest", data=json.dumps({"text": "Grüße aus Köln"}).encode("utf-16"), content_type="application/json")
    assert reply.status_code == 201
    assert Memory.objects.get(pk=reply.json()["memory_id"]).raw_text == "Grüße aus Köln"


# --- the JSON API, multipart uploads -------------------------------------------------------------


def upload(api, name: str, data: bytes, **fields):
    return api.post("/api/ingest", data={"file": _named(name, data), **fields})


def _named(name, data):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


REFUSED_FILES = [
    ("empty file", "empty.txt", b"", "empty"),
    ("binary as text", "notes.txt", BINARY, "refused"),
    ("executable under a text name", "readme.md", b"MZ\x90\x00\x03" + BINARY, "refused"),
    ("unsupported type", "setup.exe", b"MZ\x90\x00", "not supported"),
    ("RTL override hides .exe", "invoice\u202etxt.exe", b"MZ\x90\x00", "not supported"),
    ("no extension", "README", b"plain words", "not supported"),
]


@pytest.mark.parametrize("name,data,fragment", [c[1:] for c in REFUSED_FILES], ids=[c[0] for c in REFUSED_FILES])
def test_api_refused_files_are_clear(api, bystanders, outside, settings, name, data, fragment):
    reply = upload(api, name, data)
    assert_clear_refusal(reply, 400, fragment)
    assert Memory.objects.count() == 2
    originals = Path(settings.MEDIA_ROOT) / "originals"
    assert not originals.exists() or not any(p.is_file() for p in originals.rglob("*"))


STORED_NAMES = [
    ("path traversal", "../../etc/passwd.txt", "passwd.txt"),
    ("windows traversal", "..\\..\\Windows\\win.ini.txt", "win.ini.txt"),
    ("absolute path", "/etc/cron.d/evil.txt", "evil.txt"),
    ("RTL and emoji", "\u202eelif\u202c 🧠 notes.txt", "elif__notes.txt"),
    ("300-character name", "n" * 296 + ".txt", None),
    ("dot dot only", "...txt", "...txt"),
]


@pytest.mark.parametrize("name,expected", [c[1:] for c in STORED_NAMES], ids=[c[0] for c in STORED_NAMES])
def test_api_hostile_file_names_stay_in_media_root(api, bystanders, outside, settings, name, expected):
    content = f"Contents of a file called {name!r}.".encode()
    reply = upload(api, name, content)
    assert reply.status_code == 201, reply.content
    memory = Memory.objects.get(pk=reply.json()["memory_id"])
    assert_within(memory.original.path, settings.MEDIA_ROOT)
    assert Path(memory.original.path).read_bytes() == content
    assert "/" not in memory.file_name and "\\" not in memory.file_name and ".." != memory.file_name
    if expected:
        assert memory.file_name == expected
    assert len(memory.file_name) <= 150 and memory.file_name.endswith(".txt")
    assert not any(ch in memory.file_name for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\x00\n")
    assert extract_memory(memory.pk).status == "ready"


def test_api_file_name_with_nul_is_refused_or_cleaned(api, bystanders, outside, settings):
    body = (
        b'--BOUND\r\nContent-Disposition: form-data; name="file"; filename="a\x00../../b.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\nhello nul name\r\n--BOUND--\r\n"
    )
    reply = api.post("/api/ingest", data=body, content_type="multipart/form-data; boundary=BOUND")
    assert reply.status_code < 500
    if reply.status_code == 201:
        memory = Memory.objects.get(pk=reply.json()["memory_id"])
        assert "\x00" not in memory.original.name
        assert_within(memory.original.path, settings.MEDIA_ROOT)


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16", "cp1252", "utf-8-sig"])
def test_api_text_files_in_other_encodings_are_decoded(api, bystanders, encoding):
    text = "Café crème for Zoë — 12 €" if encoding != "latin-1" else "Café crème for Zoë at 12 francs"
    reply = upload(api, f"note-{encoding}.txt", text.encode(encoding))
    assert reply.status_code == 201, reply.content
    # The upload only stores the file; the extraction task reads it.
    memory = extract_memory(reply.json()["memory_id"])
    assert text in memory.raw_text


BOMBS = [
    ("zip bomb named .docx", "report.docx", zip_bomb_docx),
    ("billion laughs .docx", "laughs.docx", billion_laughs_docx),
    ("PDF with two billion pages", "pages.pdf", pdf_with_huge_page_count),
    ("PDF with a cyclic page tree", "cycle.pdf", pdf_with_cyclic_page_tree),
    ("PDF stream bomb", "stream.pdf", pdf_with_stream_bomb),
]


@pytest.mark.parametrize("name,make", [c[1:] for c in BOMBS], ids=[c[0] for c in BOMBS])
def test_api_bombs_are_kept_but_never_blow_up(api, bystanders, outside, settings, name, make):
    """Accepted types are stored (the original is kept for a better reader later), and
    reading them ends in bounded time as ready or failed with the reason."""
    started = time.monotonic()
    reply = upload(api, name, make())
    assert reply.status_code in (201, 400), reply.content
    if reply.status_code == 400:
        assert reply.json()["detail"]
        return
    memory = extract_memory(reply.json()["memory_id"])
    assert memory.status in ("ready", "failed")
    if memory.status == "failed":
        assert memory.error
    assert len(memory.raw_text) <= 2_100_000
    assert time.monotonic() - started < 120  # a guard against a hang, not a benchmark


def test_api_upload_over_the_size_limit_is_413(api, bystanders, outside, settings):
    settings.MEMORY_MAX_UPLOAD_MB = 1
    reply = upload(api, "big.txt", b"words and more words\n" * 60_000)
    assert_clear_refusal(reply, 413, "limit")
    assert not any(Path(settings.MEMORY_DATA_DIR).glob(".upload-*"))


def test_api_broken_multipart_is_400(api, bystanders):
    body = b'--BOUND\r\nContent-Disposition: form-data; name="file"; filename="x.txt"\r\n\r\nno closing boundary'
    reply = api.post("/api/ingest", data=body, content_type="multipart/form-data; boundary=BOUND")
    assert reply.status_code in (400, 422)
    assert reply.json()["detail"]
    assert_clear_refusal(api.post("/api/ingest", data=b"x", content_type="multipart/form-data"), 400, "multipart")


# --- manage.py ingest --------------------------------------------------------------------------


def run_ingest(*args):
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("ingest", *args, "--user", "alice", stdout=out, stderr=err)
        failed = None
    except CommandError as exc:
        failed = str(exc)
    return out.getvalue(), err.getvalue(), failed


def test_command_text_edge_cases(bystanders, outside):
    _, _, failed = run_ingest("--text", "")
    assert failed and "Give file paths" in failed
    _, err, failed = run_ingest("--text", "   ")
    assert failed and "no text" in err
    _, err, failed = run_ingest("--text", "z" * 1_000_001)
    assert failed and "limit" in err
    out, _, failed = run_ingest("--text", "tab\tbell\x07 nul\x00 done")
    assert failed is None and "\tready\t" in out
    assert Memory.objects.filter(raw_text="tab\tbell nul done").exists()


def test_command_hostile_paths_are_reported_one_by_one(bystanders, outside, scratch):
    tmp_path = scratch
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    binary = tmp_path / "binary.txt"
    binary.write_bytes(BINARY)
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(zip_bomb_docx(32))
    good = tmp_path / "good.md"
    good.write_text("# Plumber\nCalled on Monday; comes Thursday.")
    out, err, failed = run_ingest(str(fifo), str(folder), str(tmp_path / "missing.txt"), str(binary), str(bomb), str(good))
    assert failed  # some inputs failed: the exit status says so
    assert f"{fifo}: no such file" in err and f"{folder}: no such file" in err
    assert "refused" in err  # the binary .txt
    assert Memory.objects.filter(source="good.md", status="ready").exists()
    assert Memory.objects.count() == 2 + 1 + (1 if Memory.objects.filter(source="bomb.docx").exists() else 0)


def test_command_jsonl_bad_lines_are_reported_and_good_lines_kept(bystanders, outside, scratch):
    tmp_path = scratch
    lines = [
        "not json",
        "[1, 2, 3]",
        '{"text": "fine line one"}',
        '{"text": "meta not an object", "metadata": [1]}',
        '{"source": "no text"}',
        '{"text": "bad date", "occurred_at": "yesterday-ish"}',
        json.dumps({"text": "fine line two \x00 with nul", "metadata": {"deep": {"er": {"est": [1, 2]}}}}),
        "",
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines))
    out, err, failed = run_ingest("--jsonl", str(path))
    assert failed
    for number in (1, 2, 4, 5, 6):
        assert f"{path}:{number}:" in err
    assert set(Memory.objects.exclude(owner__username="bob").values_list("raw_text", flat=True)) == {
        "The spare key is under the blue flower pot.",
        "fine line one",
        "fine line two  with nul",
    }


def test_command_jsonl_that_is_not_utf8_is_refused(bystanders, tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes('{"text": "café"}'.encode("latin-1") + b"\n" + BINARY)
    _, _, failed = run_ingest("--jsonl", str(path))
    assert failed and str(path) in failed


def test_command_jsonl_deeply_nested_line_is_reported(bystanders, tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(DEEP + b'\n{"text": "after the deep line"}\n')
    _, err, failed = run_ingest("--jsonl", str(path))
    assert failed and f"{path}:1:" in err
    assert Memory.objects.filter(raw_text="after the deep line").exists()


# --- the inbox ---------------------------------------------------------------------------------


@pytest.fixture
def inbox(settings, user):
    settings.MEMORY_INBOX_USER = "alice"
    folder = Path(settings.MEMORY_INBOX_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def scan():
    return scan_inbox(settle_seconds=0)


def test_inbox_symlinks_fifos_and_odd_names(inbox, bystanders, outside, scratch, settings):
    tmp_path = scratch
    secret = tmp_path / "secret.txt"
    secret.write_text("Outside the inbox: must never be read.")
    secret_dir = tmp_path / "secrets"
    secret_dir.mkdir()
    (secret_dir / "inner.txt").write_text("Also outside: reached through a linked folder.")
    (inbox / "link.txt").symlink_to(secret)
    (inbox / "linked-folder").symlink_to(secret_dir, target_is_directory=True)
    (inbox / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    os.mkfifo(inbox / "pipe.txt")  # opening it would block the watcher forever
    names = [
        "\u202eelif\u202c notes.txt",
        "🧠 brain dump.md",
        "line\nbreak.txt",
        "n" * 251 + ".txt",
        "-rf .txt",
        "e\u0301-nfd-accents.txt",
    ]
    for i, name in enumerate(names):
        (inbox / name).write_text(f"Note number {i} with an odd file name.")

    def blocked(*args):
        raise AssertionError("the scan blocked (opening the FIFO?)")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(60)
    try:
        report = scan()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)

    assert len(report.ingested) == len(names) and report.failed == 0
    texts = set(Memory.objects.filter(owner__username="alice").values_list("raw_text", flat=True))
    assert not any("Outside the inbox" in t or "Also outside" in t for t in texts)
    for memory in Memory.objects.filter(pk__in=report.ingested):
        assert_within(memory.original.path, settings.MEDIA_ROOT)
        assert memory.status == "ready"
    assert (inbox / "pipe.txt").exists()  # left alone, not consumed


def test_inbox_hostile_files_fail_with_a_reason_and_others_go_through(inbox, bystanders, outside, settings):
    (inbox / "empty.txt").write_bytes(b"")
    (inbox / "binary.txt").write_bytes(BINARY)
    (inbox / "setup.exe").write_bytes(b"MZ\x90\x00")
    (inbox / "bomb.docx").write_bytes(zip_bomb_docx(32))
    (inbox / "pages.pdf").write_bytes(pdf_with_huge_page_count())
    (inbox / "latin.txt").write_bytes("Crème brûlée recipe from Zoë.".encode("latin-1"))
    (inbox / "good.md").write_text("# Garden\nPlant the tulips in October.")
    report = scan()
    files = {Path(f.path).name: f for f in ProcessedFile.objects.all()}
    for name in ("empty.txt", "binary.txt", "setup.exe"):
        assert files[name].status == "failed" and files[name].error, name
    assert files["good.md"].status == "ingested" and files["latin.txt"].status == "ingested"
    assert "Crème brûlée recipe from Zoë." in files["latin.txt"].memory.raw_text
    for name in ("bomb.docx", "pages.pdf"):
        memory = files[name].memory
        assert memory is not None and memory.status in ("ready", "failed"), name
    # A second pass does nothing new: failures are remembered, not retried in a loop.
    again = scan()
    assert not again.found_work
    assert report.failed == 3


def test_inbox_file_that_changes_while_being_read(inbox, bystanders, outside):
    """A writer keeps rewriting the file while the watcher scans. Whatever the interleaving,
    nothing crashes, and once the writer is done the next pass holds its final text."""
    target = inbox / "growing.txt"
    target.write_text("version 0\n")
    stop = threading.Event()

    def writer():
        n = 0
        while not stop.is_set():
            n += 1
            with open(target, "a") as fh:
                fh.write(f"line {n} " + "x" * 500 + "\n")
            if n % 50 == 0:
                target.write_text(f"rewritten at {n}\n")

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        for _ in range(10):
            scan()
    finally:
        stop.set()
        thread.join()
    target.write_text("the final version of the growing file\n")
    scan()
    live = Memory.objects.filter(owner__username="alice", source="growing.txt")
    assert [m.raw_text.strip() for m in live] == ["the final version of the growing file"]
    assert not ProcessedFile.objects.filter(status="failed").exclude(error__icontains="empty").exists()


def test_inbox_folder_named_after_nobody_or_traversal(inbox, bystanders, outside, user):
    (inbox / "..hidden").mkdir()
    (inbox / "..hidden" / "x.txt").write_text("in a dot folder")
    (inbox / "nobody").mkdir()
    (inbox / "nobody" / "y.txt").write_text("for a user that does not exist")
    report = scan()
    assert report.ingested == [] and report.failed == 1
    assert "No user named 'nobody'" in ProcessedFile.objects.get().error
