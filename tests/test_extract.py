"""Every accepted file type, made for real in the test, through the real ingest flow offline.

Files are built with Pillow, the stdlib (wave, zipfile), mutagen (to tag audio) or by hand
from the container specs (PDF, MP3 frames, FLAC STREAMINFO, Ogg pages, MP4 boxes, EBML,
RIFF AVI, ADTS): no external program is needed. tesseract and ffprobe are hidden from PATH
unless a test puts a stand-in for one there, so results do not depend on the machine.
"""

from __future__ import annotations

import io
import json
import os
import stat
import struct
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from PIL import Image

from memories import extract
from memories.models import Memory
from memories.services import extract_memory, ingest_file
from memories.services.ingest import IngestError
from tests.samples import wav_bytes


@pytest.fixture(autouse=True)
def no_optional_tools(tmp_path, monkeypatch, settings):
    """A PATH with no tesseract and no ffprobe; tests add stand-ins to this folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    # These tests are about the optional programs: OCR is tesseract's (RapidOCR: test_engine_reads.py).
    settings.MEMORY_OCR = "tesseract"
    return bin_dir


def fake_tool(bin_dir: Path, name: str, script: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def ingest(user, name: str, data: bytes) -> Memory:
    result = ingest_file(owner=user, fileobj=io.BytesIO(data), name=name)
    assert result.created
    memory = extract_memory(result.memory.pk)
    assert memory.status == Memory.Status.READY, memory.error
    assert memory.summary
    return memory


# --- builders ------------------------------------------------------------------------------


def image_bytes(fmt: str, size=(64, 32), color="red", **save) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, fmt, **save)
    return buf.getvalue()


def jpeg_with_exif() -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "Canon"
    exif[0x0110] = "Canon EOS R5"
    exif.get_ifd(0x8769)[0x9003] = "2023:07:14 09:30:00"
    exif.get_ifd(0x8825).update({1: "N", 2: (48.0, 51.0, 29.6), 3: "E", 4: (2.0, 17.0, 40.2)})
    return image_bytes("JPEG", size=(640, 480), exif=exif)


def pdf_bytes(pages: list[str], *, title="Quarterly plan", author="Ada Lovelace", image_only=False) -> bytes:
    """A PDF written by hand from the spec: one Helvetica text line per page (or a JPEG per page)."""
    objects: list[bytes] = []
    kids = []
    font_id = 3
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(b"")  # pages, filled below
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    jpeg = image_bytes("JPEG", size=(40, 20), color="white")
    for text in pages:
        if image_only:
            objects.append(
                b"<< /Type /XObject /Subtype /Image /Width 40 /Height 20 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n"
                % len(jpeg)
                + jpeg
                + b"\nendstream"
            )
            image_id = len(objects)
            stream = b"q 400 0 0 200 100 400 cm /Im1 Do Q"
            resources = b"<< /XObject << /Im1 %d 0 R >> >>" % image_id
        else:
            stream = b"BT /F1 18 Tf 72 720 Td (" + text.encode("latin-1") + b") Tj ET"
            resources = b"<< /Font << /F1 %d 0 R >> >>" % font_id
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content_id = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources %s >>" % (content_id, resources)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids) + b"] /Count %d >>" % len(kids)
    objects.append(b"<< /Title (" + title.encode() + b") /Author (" + author.encode() + b") >>")
    info_id = len(objects)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info_id, xref)
    return bytes(out)


def docx_bytes(paragraphs: list[tuple[str, str]]) -> bytes:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(
        f'<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>'
        if style
        else f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"
        for style, text in paragraphs
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        )
        zf.writestr(
            "word/document.xml",
            f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{w}"><w:body>{body}</w:body></w:document>',
        )
        zf.writestr(
            "docProps/core.xml",
            '<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Offsite agenda</dc:title><dc:creator>Grace Hopper</dc:creator></cp:coreProperties>',
        )
    return buf.getvalue()


def mp3_bytes(tmp_path: Path, frames: int = 40) -> bytes:
    # MPEG-1 Layer III, 128 kbps, 44.1 kHz: 417-byte frames, 1152 samples each.
    frame = b"\xff\xfb\x90\x64" + b"\x00" * 413
    path = tmp_path / "tagged.mp3"
    path.write_bytes(frame * frames)
    from mutagen.id3 import ID3, TALB, TDRC, TIT2, TPE1

    tags = ID3()
    tags.add(TIT2(encoding=3, text="Standup notes"))
    tags.add(TPE1(encoding=3, text="Ada Lovelace"))
    tags.add(TALB(encoding=3, text="Voice memos"))
    tags.add(TDRC(encoding=3, text="2024-05-02T08:15:00"))
    tags.save(path)
    return path.read_bytes()


def flac_bytes(tmp_path: Path, seconds: int = 3, rate: int = 44100) -> bytes:
    packed = (rate << 44) | ((2 - 1) << 41) | ((16 - 1) << 36) | (rate * seconds)
    streaminfo = struct.pack(">HH", 4096, 4096) + b"\x00" * 6 + packed.to_bytes(8, "big") + b"\x00" * 16
    path = tmp_path / "tagged.flac"
    path.write_bytes(b"fLaC" + bytes([0x80]) + len(streaminfo).to_bytes(3, "big") + streaminfo)
    from mutagen.flac import FLAC

    audio = FLAC(path)
    audio.add_tags()
    audio["title"] = "Birdsong at dawn"
    audio["artist"] = "Field recorder"
    audio.save()
    return path.read_bytes()


def ogg_bytes(seconds: int = 4, rate: int = 48000) -> bytes:
    from mutagen.ogg import OggPage

    ident = b"\x01vorbis" + struct.pack("<IBIiiiB", 0, 2, rate, 0, 128000, 0, 0xB8) + b"\x01"
    comments = [b"TITLE=Harbour walk", b"ARTIST=Ada Lovelace", b"DATE=2024-06-01"]
    vendor = b"test"
    comment = b"\x03vorbis" + struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", len(comments))
    comment += b"".join(struct.pack("<I", len(c)) + c for c in comments) + b"\x01"
    out = b""
    for sequence, (packets, position, first, last) in enumerate(
        [
            ([ident], 0, True, False),
            ([comment, b"\x05vorbis" + b"\x00" * 10], 0, False, False),
            ([b"\x00" * 30], seconds * rate, False, True),
        ]
    ):
        page = OggPage()
        page.serial, page.sequence, page.position, page.packets = 1234, sequence, position, packets
        page.first, page.last = first, last
        out += page.write()
    return out


def box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def full_box(kind: bytes, payload: bytes, version: int = 0) -> bytes:
    return box(kind, bytes([version, 0, 0, 0]) + payload)


def iso_track(handler: bytes, codec: bytes, *, seconds: float, width: int = 0, height: int = 0) -> bytes:
    tkhd = full_box(b"tkhd", b"\x00" * 76 + struct.pack(">II", width << 16, height << 16))
    mdhd = full_box(b"mdhd", struct.pack(">IIII", 0, 0, 1000, int(seconds * 1000)) + b"\x00" * 4)
    hdlr = full_box(b"hdlr", b"\x00" * 4 + handler + b"\x00" * 12 + b"\x00")
    if handler == b"soun":
        entry = (
            b"\x00" * 6
            + b"\x00\x01"
            + b"\x00" * 8
            + struct.pack(">HHHH", 2, 16, 0, 0)
            + struct.pack(">I", 44100 << 16)
            + box(b"btrt", b"\x00" * 12)
        )
    else:
        entry = b"\x00" * 6 + b"\x00\x01" + b"\x00" * 16 + struct.pack(">HH", width, height) + b"\x00" * 50
    stsd = full_box(b"stsd", struct.pack(">I", 1) + box(codec, entry))
    stbl = box(b"stbl", stsd)
    return box(b"trak", tkhd + box(b"mdia", mdhd + hdlr + box(b"minf", stbl)))


def iso_bytes(brand: bytes, *, video: bool, seconds: float = 5.0) -> bytes:
    mvhd = full_box(b"mvhd", struct.pack(">IIII", 0, 0, 1000, int(seconds * 1000)) + b"\x00" * 80)
    tracks = iso_track(b"soun", b"mp4a", seconds=seconds)
    if video:
        tracks = iso_track(b"vide", b"avc1", seconds=seconds, width=1280, height=720) + tracks
    return box(b"ftyp", brand + b"\x00\x00\x02\x00" + brand + b"isom") + box(b"moov", mvhd + tracks) + box(b"mdat", b"\x00" * 64)


def m4a_bytes(tmp_path: Path) -> bytes:
    path = tmp_path / "memo.m4a"
    path.write_bytes(iso_bytes(b"M4A ", video=False, seconds=7.5))
    from mutagen.easymp4 import EasyMP4

    audio = EasyMP4(path)
    audio["title"] = "Call with the dentist"
    audio["date"] = "2024-03-05T10:11:12Z"
    audio.save()
    return path.read_bytes()


def adts_bytes(frames: int = 60) -> bytes:
    payload = b"\x00" * 100
    length = 7 + len(payload)
    bits = (0xFFF << 44) | (0 << 43) | (0 << 41) | (1 << 40) | (1 << 38) | (4 << 34) | (0 << 33) | (2 << 30)
    bits |= (length << 13) | (0x7FF << 2)
    return (bits.to_bytes(7, "big") + payload) * frames


def ebml(element_id: int, payload: bytes) -> bytes:
    ident = element_id.to_bytes((element_id.bit_length() + 7) // 8, "big")
    return ident + (0x01 << 56 | len(payload)).to_bytes(8, "big") + payload


def matroska_bytes(
    doctype: str, *, seconds: float = 12.5, width=1920, height=1080, video_codec="V_VP9", audio_codec="A_OPUS"
) -> bytes:
    header = ebml(0x1A45DFA3, ebml(0x4286, b"\x01") + ebml(0x4282, doctype.encode()))
    info = ebml(
        0x1549A966,
        ebml(0x2AD7B1, (1_000_000).to_bytes(3, "big"))
        + ebml(0x4489, struct.pack(">d", seconds * 1000))
        + ebml(0x7BA9, b"Garden tour"),
    )
    video = ebml(
        0xAE,
        ebml(0x83, b"\x01")
        + ebml(0x86, video_codec.encode())
        + ebml(0xE0, ebml(0xB0, width.to_bytes(2, "big")) + ebml(0xBA, height.to_bytes(2, "big"))),
    )
    audio = ebml(
        0xAE,
        ebml(0x83, b"\x02")
        + ebml(0x86, audio_codec.encode())
        + ebml(0xE1, ebml(0xB5, struct.pack(">f", 48000.0)) + ebml(0x9F, b"\x02")),
    )
    cluster = ebml(0x1F43B675, b"\x00" * 32)
    return header + ebml(0x18538067, info + ebml(0x1654AE6B, video + audio) + cluster)


def riff(kind: bytes, payload: bytes) -> bytes:
    return kind + struct.pack("<I", len(payload)) + payload + (b"\x00" if len(payload) % 2 else b"")


def avi_bytes(frames: int = 75, fps: int = 25) -> bytes:
    avih = riff(b"avih", struct.pack("<10I", 1_000_000 // fps, 0, 0, 0, frames, 0, 2, 0, 320, 240) + b"\x00" * 16)
    strh_v = riff(b"strh", b"vids" + b"MJPG" + b"\x00" * 48)
    strh_a = riff(b"strh", b"auds" + b"\x00\x00\x00\x00" + b"\x00" * 48)
    strf_a = riff(b"strf", struct.pack("<HHIIHH", 1, 1, 22050, 44100, 2, 16))
    hdrl = riff(b"LIST", b"hdrl" + avih + riff(b"LIST", b"strl" + strh_v) + riff(b"LIST", b"strl" + strh_a + strf_a))
    info = riff(b"LIST", b"INFO" + riff(b"INAM", b"Kite festival\x00"))
    movi = riff(b"LIST", b"movi" + riff(b"00dc", b"\x00" * 16))
    return riff(b"RIFF", b"AVI " + hdrl + info + movi)


# --- every type ------------------------------------------------------------------------------

CSV = "name,city,amount\nAda,London,120\nGrace,Arlington,80\nAlan,Wilmslow,95\n"


def cases(tmp_path):
    """(file name, bytes, mime type, facts the memory must show: substrings of raw_text, metadata items)."""
    return [
        (
            "note.txt",
            b"Remember to renew the passport before the Lisbon trip in May.",
            "text/plain",
            ["renew the passport"],
            {"encoding": "utf-8"},
        ),
        (
            "plan.md",
            b"# Launch plan\n\nShip the beta on Friday.\n\n## Risks\n\nThe budget is tight.",
            "text/markdown",
            ["Ship the beta"],
            {"headings": ["Launch plan", "Risks"]},
        ),
        (
            "data.json",
            json.dumps({"project": "Atlas", "owners": ["Ada", "Grace"], "budget": 12000}).encode(),
            "application/json",
            ["JSON document: an object with 3 keys: project, owners, budget", "Atlas"],
            {"valid": True},
        ),
        (
            "sales.csv",
            CSV.encode(),
            "text/csv",
            ["CSV table with 3 rows and 3 columns: name, city, amount", "Arlington"],
            {"rows": 3, "columns": ["name", "city", "amount"]},
        ),
        (
            "app.log",
            b"2024-01-01 10:00:00 INFO server started\n2024-01-01 10:05:00 ERROR disk full on /var\n2024-01-01 10:06:00 WARNING retrying\n",
            "text/plain",
            ["Log file with 3 lines from 2024-01-01 10:00:00 to 2024-01-01 10:06:00", "disk full"],
            {"levels": {"INFO": 1, "ERROR": 1, "WARN": 1}},
        ),
        (
            "feed.xml",
            b"<?xml version='1.0'?><notes><note>Buy oat milk</note><note>Call the plumber</note></notes>",
            "application/xml",
            ["XML document with root <notes> and 3 elements", "Call the plumber"],
            {"root": "notes"},
        ),
        (
            "config.yaml",
            b"service: memory\nreplicas: 3\nregions:\n  - eu-west\n  - us-east\n",
            "application/yaml",
            ["YAML document: a mapping with 3 top-level keys: service, replicas, regions", "eu-west"],
            {"top_level_keys": ["service", "replicas", "regions"]},
        ),
        (
            "deploy.yml",
            b"- name: build\n  run: make\n- name: test\n  run: pytest\n",
            "application/yaml",
            ["YAML document: a list of 2 items"],
            {},
        ),
        (
            "trip.html",
            b"<html><head><title>Rome trip</title><style>p{}</style></head><body><h1>Day one</h1><p>Visit the Colosseum on Monday.</p><script>alert(1)</script></body></html>",
            "text/html",
            ["Web page 'Rome trip'", "Visit the Colosseum on Monday."],
            {"title": "Rome trip", "headings": ["Day one"]},
        ),
        (
            "agenda.docx",
            docx_bytes(
                [("Heading1", "Offsite agenda"), ("", "Discuss the hiring plan with Grace."), ("", "Book the venue in Porto.")]
            ),
            extract.DOCX,
            ["Word document 'Offsite agenda' by Grace Hopper", "Book the venue in Porto."],
            {"paragraphs": 3, "headings": ["Offsite agenda"]},
        ),
        (
            "report.pdf",
            pdf_bytes(["Revenue grew in the third quarter.", "Hiring resumes in January."]),
            "application/pdf",
            [
                "PDF document 'Quarterly plan' by Ada Lovelace, 2 pages",
                "Revenue grew in the third quarter.",
                "[Page 2]",
                "Hiring resumes in January.",
            ],
            {"pages": 2, "title": "Quarterly plan", "author": "Ada Lovelace", "pages_with_text": 2},
        ),
        (
            "red.png",
            image_bytes("PNG", size=(120, 80)),
            "image/png",
            ["PNG image, 120×80 pixels", "tesseract"],
            {"width": 120, "height": 80, "ocr": "unavailable"},
        ),
        (
            "photo.jpg",
            jpeg_with_exif(),
            "image/jpeg",
            ["JPEG image, 640×480 pixels", "Canon EOS R5", "2023-07-14 09:30:00", "GPS position 48.85822, 2.29450"],
            {"camera": "Canon EOS R5", "date_taken": "2023-07-14 09:30:00", "gps": {"latitude": 48.858222, "longitude": 2.2945}},
        ),
        ("scan.jpeg", image_bytes("JPEG", size=(30, 40)), "image/jpeg", ["JPEG image, 30×40 pixels"], {"width": 30}),
        ("anim.gif", _gif(), "image/gif", ["GIF image, 16×16 pixels, 3 frames (animated)"], {"frames": 3}),
        ("pic.webp", image_bytes("WEBP", size=(50, 20)), "image/webp", ["WebP image, 50×20 pixels"], {"width": 50}),
        ("old.bmp", image_bytes("BMP", size=(10, 12)), "image/bmp", ["BMP image, 10×12 pixels"], {"height": 12}),
        (
            "logo.svg",
            b'<svg xmlns="http://www.w3.org/2000/svg" width="200" height="80"><title>Acme logo</title><text x="5" y="40">Acme <tspan>Rockets</tspan></text></svg>',
            "image/svg+xml",
            ["SVG image 'Acme logo', 200×80", "Acme Rockets"],
            {"texts": ["Acme Rockets"]},
        ),
        (
            "memo.wav",
            wav_bytes(2.0),
            "audio/wav",
            ["WAV audio, 2.0 seconds, PCM, 8,000 Hz, mono", "multimodal provider"],
            {"duration_seconds": 2.0},
        ),
        (
            "standup.mp3",
            mp3_bytes(tmp_path),
            "audio/mpeg",
            ["MP3 audio, 1.0 seconds", "Title: Standup notes", "Artist: Ada Lovelace", "Album: Voice memos"],
            {"tags": {"title": "Standup notes", "artist": "Ada Lovelace", "album": "Voice memos", "date": "2024-05-02 08:15:00"}},
        ),
        (
            "walk.ogg",
            ogg_bytes(),
            "audio/ogg",
            ["Ogg audio, 4.0 seconds, Vorbis", "Title: Harbour walk"],
            {"duration_seconds": 4.0},
        ),
        (
            "birds.flac",
            flac_bytes(tmp_path),
            "audio/flac",
            ["FLAC audio, 3.0 seconds, FLAC, 44,100 Hz, stereo", "Title: Birdsong at dawn"],
            {"duration_seconds": 3.0},
        ),
        (
            "dentist.m4a",
            m4a_bytes(tmp_path),
            "audio/mp4",
            ["M4A audio, 7.5 seconds", "AAC", "Title: Call with the dentist"],
            {"recorded_at": "2024-03-05 10:11:12+00:00"},
        ),
        (
            "radio.aac",
            adts_bytes(),
            "audio/aac",
            ["AAC audio", "44,100 Hz", "stereo"],
            {"audio": {"codec": "AAC", "sample_rate": 44100, "channels": 2}},
        ),
        (
            "clip.mp4",
            iso_bytes(b"isom", video=True, seconds=5.0),
            "video/mp4",
            ["MP4 video, 5.0 seconds, 1280×720, H.264 video and AAC audio", "multimodal provider"],
            {"video": {"codec": "H.264", "width": 1280, "height": 720}},
        ),
        (
            "garden.webm",
            matroska_bytes("webm"),
            "video/webm",
            ["WebM video, 12.5 seconds, 1920×1080, VP9 video and Opus audio"],
            {"container": "webm"},
        ),
        (
            "phone.mov",
            iso_bytes(b"qt  ", video=True, seconds=3.0),
            "video/quicktime",
            ["QuickTime video, 3.0 seconds, 1280×720"],
            {"duration_seconds": 3.0},
        ),
        (
            "kites.avi",
            avi_bytes(),
            "video/x-msvideo",
            ["AVI video, 3.0 seconds, 320×240, Motion JPEG video and PCM audio", "Title: Kite festival"],
            {"duration_seconds": 3.0},
        ),
        (
            "film.mkv",
            matroska_bytes("matroska", seconds=90, video_codec="V_MPEG4/ISO/AVC", audio_codec="A_AAC"),
            "video/x-matroska",
            ["Matroska video, 1 min 30 s, 1920×1080, H.264 video and AAC audio"],
            {"container": "matroska"},
        ),
    ]


def _gif() -> bytes:
    frames = [Image.new("RGB", (16, 16), color) for color in ("red", "green", "blue")]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:], duration=100)
    return buf.getvalue()


def test_cases_cover_every_accepted_extension(tmp_path):
    covered = {Path(name).suffix for name, *_ in cases(tmp_path)}
    # .htm is the same reader as .html; every other accepted extension has a real file here.
    assert set(extract.SUPPORTED_TYPES) - covered == {".htm"}
    assert len(covered) == 29


@pytest.mark.parametrize("index", range(29))
def test_every_type_becomes_a_ready_memory_that_says_what_it_holds(user, tmp_path, index):
    name, data, mime, facts, expected_meta = cases(tmp_path)[index]
    memory = ingest(user, name, data)
    assert memory.mime_type == mime
    assert memory.source == name
    assert memory.metadata["file_name"] == name
    assert memory.metadata["size"] == len(data)
    for fact in facts:
        assert fact in memory.raw_text, (fact, memory.raw_text[:600])
    for key, value in expected_meta.items():
        if isinstance(value, dict):
            assert value.items() <= memory.metadata[key].items(), (key, memory.metadata)
        else:
            assert memory.metadata[key] == value, (key, memory.metadata)
    if mime not in ("text/plain", "text/markdown") or name.endswith(".log"):
        # Structured and binary files lead with what they are; a plain note stays just the note.
        assert memory.metadata["description"].rstrip(".") in memory.raw_text
    assert memory.original.read() == data  # the file itself is kept
    # The summary is built from what was read, not the generic "needs a multimodal provider" line.
    assert not memory.summary.startswith("File ")


def test_the_card_names_the_reader_that_read_the_file(user, signed_in):
    """ "Text read by the Markdown text." named the text, not what read it."""
    from django.urls import reverse

    pages = {
        name: signed_in.get(reverse("memories:detail", args=[ingest(user, name, data).pk])).content.decode()
        for name, data in [
            ("plan.md", b"# Launch plan\n\nShip the beta on Friday."),
            ("sales.csv", CSV.encode()),
            ("data.json", b'{"project": "Atlas"}'),
        ]
    }
    assert "Text read by the Markdown reader." in pages["plan.md"]
    assert "Text read by the CSV reader." in pages["sales.csv"]
    assert "Text read by the JSON reader." in pages["data.json"]


def test_summaries_say_what_the_file_is(user, tmp_path):
    csv_memory = ingest(user, "sales.csv", CSV.encode())
    assert "CSV table with 3 rows" in csv_memory.summary
    wav_memory = ingest(user, "memo.wav", wav_bytes(2.0))
    assert "WAV audio, 2.0 seconds" in wav_memory.summary
    pdf_memory = ingest(user, "report.pdf", pdf_bytes(["Revenue grew in the third quarter."]))
    assert "Revenue grew" in pdf_memory.summary
    photo = ingest(user, "photo.jpg", jpeg_with_exif())
    assert "taken with a Canon EOS R5 on 2023-07-14 09:30:00" in photo.summary
    page = ingest(user, "trip.html", b"<title>Rome trip</title><h1>Day one</h1><p>Visit the Colosseum on Monday.</p>")
    assert "Visit the Colosseum on Monday." in page.summary


def test_media_says_its_speech_needs_a_model_and_is_marked_for_re_extraction(user, tmp_path):
    for name, data in (
        ("memo.wav", wav_bytes(1.0)),
        ("clip.mp4", iso_bytes(b"isom", video=True)),
        ("red.png", image_bytes("PNG")),
    ):
        memory = ingest(user, name, data)
        assert memory.metadata["needs_model"] is True
        assert "multimodal provider" in memory.raw_text
    text_memory = ingest(user, "note.txt", b"Plain words need no model.")
    assert "needs_model" not in text_memory.metadata


def test_exif_date_gps_and_recording_dates_are_read_as_when_it_happened(tmp_path):
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(jpeg_with_exif())
    content = extract.read_file(photo, "photo.jpg")
    assert content.occurred_at == datetime(2023, 7, 14, 9, 30)
    memo = tmp_path / "dentist.m4a"
    memo.write_bytes(m4a_bytes(tmp_path))
    assert extract.read_file(memo, "dentist.m4a").occurred_at.isoformat() == "2024-03-05T10:11:12+00:00"
    song = tmp_path / "walk.ogg"
    song.write_bytes(ogg_bytes())
    assert extract.read_file(song, "walk.ogg").occurred_at == datetime(2024, 6, 1)
    plain = tmp_path / "red.png"
    plain.write_bytes(image_bytes("PNG"))
    assert extract.read_file(plain, "red.png").occurred_at is None


def test_an_mp4_with_only_sound_is_audio(tmp_path):
    path = tmp_path / "voice.mp4"
    path.write_bytes(iso_bytes(b"isom", video=False, seconds=2.0))
    content = extract.read_file(path, "voice.mp4")
    assert content.mime_type == "audio/mp4"
    assert "M4A audio, 2.0 seconds" in content.text
    assert "declared_type" not in content.metadata  # same container: not a mismatch


# --- content over name -----------------------------------------------------------------------


def test_content_that_contradicts_its_extension_is_read_by_its_content(user):
    memory = ingest(user, "holiday.jpg", image_bytes("PNG", size=(33, 22)))
    assert memory.mime_type == "image/png"
    assert memory.metadata["declared_type"] == "image/jpeg"
    assert "The file name ends in .jpg, but its content is PNG image, 33×22 pixels" in memory.raw_text

    pdf_as_text = ingest(user, "notes.txt", pdf_bytes(["The lease ends in March."]))
    assert pdf_as_text.mime_type == "application/pdf"
    assert "The lease ends in March." in pdf_as_text.raw_text

    text_as_pdf = ingest(user, "minutes.pdf", b"Minutes: we agreed to move the launch to June.")
    assert text_as_pdf.mime_type == "text/plain"
    assert "we agreed to move the launch" in text_as_pdf.raw_text


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("photo.png", b"\x7fELF\x02\x01\x01" + b"\x00" * 200, "its content is a Linux executable"),
        ("notes.txt", b"\x1f\x8b\x08\x00" + b"\x00" * 200, "the name says text, but its content is a gzip archive"),
        ("song.mp3", bytes(range(256)) * 4, "not a format this service reads"),
        (
            "letter.docx",
            (lambda b: (zipfile.ZipFile(b, "w").writestr("a.txt", "hi"), b.getvalue())[1])(io.BytesIO()),
            "a ZIP archive",
        ),
    ],
)
def test_content_that_is_no_supported_type_is_refused_with_the_reason(user, name, data, reason):
    with pytest.raises(IngestError, match=reason):
        ingest_file(owner=user, fileobj=io.BytesIO(data), name=name)
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "could not be read"),
        ("broken.pdf", b"%PDF-1.4\n garbage without objects", "could not be read"),
        ("broken.wav", b"RIFF\x10\x00\x00\x00WAVEjunkjunk", "could not be read"),
        ("broken.mkv", b"\x1a\x45\xdf\xa3" + b"\xff" * 30, "could not be read"),
    ],
)
def test_corrupt_files_are_kept_failed_with_the_reason(user, name, data, reason):
    result = ingest_file(owner=user, fileobj=io.BytesIO(data), name=name)
    # The upload only stores the file; the extraction task reads it and fails with why.
    memory = extract_memory(result.memory.pk)
    assert memory.status == Memory.Status.FAILED and reason in memory.error and name in memory.error
    # The input is kept, so a provider that can read it may retry.
    assert open(memory.original.path, "rb").read() == data


def test_truncated_image_keeps_what_its_header_says(user):
    data = _noisy_png(200, 100)
    memory = ingest(user, "cut.png", data[: len(data) // 2])
    assert "200×100" in memory.raw_text
    assert "damaged or truncated" in memory.raw_text
    assert memory.metadata["damaged"]


def _noisy_png(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(buf, "PNG")
    return buf.getvalue()


def test_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    with pytest.raises(extract.UnsupportedFile, match="is empty"):
        extract.read_file(path, "empty.txt")


# --- text encodings --------------------------------------------------------------------------


def test_invalid_bytes_in_utf8_text_are_replaced_not_fatal(user):
    data = "Café au lait costs 3€ — ".encode() + b"\xff\xfe" + " then the train to Zürich.".encode()
    memory = ingest(user, "diary.txt", data)
    assert "Café au lait costs 3€" in memory.raw_text
    assert "train to Zürich" in memory.raw_text
    assert memory.metadata["encoding"] == "utf-8"
    assert memory.metadata["invalid_bytes_replaced"] == 2


@pytest.mark.parametrize(
    "text, encoding, expected",
    [
        ("Crème brûlée for the naïve café owner.", "cp1252", "cp1252"),
        ("Привет, как дела? Встреча в понедельник в офисе.", "cp1251", "cp1251"),
        ("Meeting moved to Thursday.", "utf-16", "utf-16-le"),
        ("Meeting moved to Thursday.", "utf-8-sig", "utf-8"),
    ],
)
def test_legacy_and_unicode_encodings_are_detected(tmp_path, text, encoding, expected):
    path = tmp_path / "note.txt"
    path.write_bytes(text.encode(encoding))
    content = extract.read_file(path, "note.txt")
    assert content.text == text
    assert content.metadata["encoding"] == expected


def test_invalid_json_and_csv_still_become_memories(user):
    memory = ingest(user, "broken.json", b'{"project": "Atlas", ')
    assert memory.metadata["valid"] is False
    assert "not valid JSON" in memory.raw_text


# --- PDF -------------------------------------------------------------------------------------


def test_scanned_pdf_without_ocr_says_it_has_no_text_layer(user):
    memory = ingest(user, "scan.pdf", pdf_bytes(["", ""], image_only=True))
    assert memory.metadata["scanned"] is True
    assert memory.metadata["pages"] == 2
    assert memory.metadata["ocr"] == "unavailable"
    assert memory.metadata["needs_model"] is True
    assert "It has no text layer" in memory.raw_text
    assert "tesseract" in memory.raw_text


def test_scanned_pdf_is_ocrd_when_tesseract_is_installed(user, no_optional_tools):
    # A stand-in for the tesseract program: the boundary is the process, as with a fake HTTP server.
    fake_tool(no_optional_tools, "tesseract", 'test -f "$1" && echo "INVOICE 4411 total due 300 EUR"\n')
    memory = ingest(user, "scan.pdf", pdf_bytes([""], image_only=True))
    assert memory.metadata["ocr"] == "tesseract"
    assert "INVOICE 4411 total due 300 EUR" in memory.raw_text
    assert "needs_model" not in memory.metadata


def test_image_text_is_read_by_ocr_when_tesseract_is_installed(user, no_optional_tools):
    fake_tool(no_optional_tools, "tesseract", 'test -f "$1" && echo "Platform 9 departs 10:45"\n')
    memory = ingest(user, "sign.png", image_bytes("PNG", size=(90, 30)))
    assert "Text in the image, read by Tesseract OCR:\nPlatform 9 departs 10:45" in memory.raw_text
    assert memory.metadata["reader"] == "Tesseract OCR"
    assert memory.metadata["ocr"] == "tesseract"


def test_ffprobe_fills_in_what_the_container_parsers_miss(tmp_path, no_optional_tools):
    probe = {
        "format": {"duration": "8.25", "tags": {"title": "Probe title"}},
        "streams": [{"codec_type": "video", "codec_name": "hevc", "width": 640, "height": 360}],
    }
    fake_tool(no_optional_tools, "ffprobe", f"echo '{json.dumps(probe)}'\n")
    path = tmp_path / "clip.webm"
    path.write_bytes(matroska_bytes("webm", seconds=2))
    content = extract.read_file(path, "clip.webm")
    assert content.metadata["duration_seconds"] == 8.25
    assert content.metadata["probed_with"] == "ffprobe"
    assert content.metadata["tags"]["title"] == "Garden tour"  # the file's own tag wins


def test_pdf_page_cap_is_respected(tmp_path, monkeypatch):
    from memories.extract import pdf

    monkeypatch.setattr(pdf, "MAX_PAGES", 2)
    path = tmp_path / "long.pdf"
    path.write_bytes(pdf_bytes(["First page words.", "Second page words.", "Third page words."]))
    content = extract.read_file(path, "long.pdf")
    assert content.metadata["pages"] == 3
    assert content.metadata["pages_read"] == 2
    assert "Third page" not in content.text
    assert "Only the first 2 pages were read." in content.text


# --- hostile XML and ZIP ---------------------------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE svg [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<svg xmlns="http://www.w3.org/2000/svg"><text>&lol9;</text></svg>"""


def test_svg_entity_bomb_is_not_expanded(user):
    memory = ingest(user, "bomb.svg", BILLION_LAUGHS)
    assert memory.mime_type == "image/svg+xml"
    assert "entity declarations are refused" in memory.raw_text
    assert "lollollol" not in memory.raw_text
    assert len(memory.raw_text) < 2000
    assert memory.metadata["refused"]


def test_xml_external_entity_is_never_read(user, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    data = f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]><r>&x;</r>'.encode()
    memory = ingest(user, "evil.xml", data)
    assert memory.metadata["valid"] is False
    assert "TOP-SECRET-VALUE" not in memory.raw_text


def test_plain_svg_doctype_without_entities_is_fine(tmp_path):
    path = tmp_path / "exported.svg"
    path.write_bytes(
        b'<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">'
        b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><text>Exit</text></svg>'
    )
    content = extract.read_file(path, "exported.svg")
    assert content.metadata["texts"] == ["Exit"]
    assert "view box 0 0 10 10" in content.text


def test_docx_zip_bomb_is_refused(tmp_path, monkeypatch):
    from memories.extract import text

    monkeypatch.setattr(text, "MAX_DOCX_XML_BYTES", 100_000)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("word/document.xml", b"<w:document>" + b" " * 5_000_000 + b"</w:document>")
    path = tmp_path / "bomb.docx"
    path.write_bytes(buf.getvalue())
    assert path.stat().st_size < 50_000
    with pytest.raises(extract.UnreadableFile, match="inflates"):
        extract.read_file(path, "bomb.docx")


def test_other_users_memories_are_untouched_by_a_refused_file(user, other_user):
    kept = ingest(other_user, "note.txt", b"Bob's note about the garden.")
    with pytest.raises(IngestError):
        ingest_file(owner=user, fileobj=io.BytesIO(b"\x7fELF" + b"\x00" * 64), name="x.png")
    assert list(Memory.objects.values_list("pk", flat=True)) == [kept.pk]


def test_retrying_a_damaged_file_fails_again_with_the_same_reason_and_counts(user):
    """A truncated PDF is not turned into a "ready" memory that says it needs a model."""
    from memories.models import Event
    from memories.services import extract_memory, retry_memory

    data = pdf_bytes(["Revenue grew in the third quarter."])[:60]
    # The upload only stores the file; the extraction task reads it.
    memory = extract_memory(ingest_file(owner=user, fileobj=io.BytesIO(data), name="cut.pdf").memory.pk)
    reason = memory.error
    assert memory.status == Memory.Status.FAILED and "could not be read" in reason
    assert memory.attempts == 1
    failures = Event.objects.filter(subject_id=memory.pk, action=Event.Action.FAILED)
    assert failures.count() == 1
    retry_memory(owner=user, memory_id=memory.pk)
    memory = extract_memory(memory.pk)
    assert memory.status == Memory.Status.FAILED
    assert memory.error == reason
    assert memory.attempts == 2
    assert failures.count() == 2
    assert memory.summary == ""
