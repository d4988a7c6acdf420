"""What a file is, from its first bytes rather than its name.

A name can lie (a PNG saved as .jpg, a PDF renamed .txt); the magic bytes at the start of a
file rarely do. `sniff()` returns the mime type the content shows, or None when the content
is no binary format we know, which for our purposes means "maybe text".
"""

from __future__ import annotations

import zipfile
from pathlib import Path

HEAD_BYTES = 4096

# Formats people drop that we do not read; named so the refusal can say what the file is.
KNOWN_UNSUPPORTED = (
    (b"\x7fELF", "a Linux executable"),
    (b"MZ", "a Windows executable"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document (.doc/.xls/.ppt)"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"wOFF", "a web font"),
    (b"wOF2", "a web font"),
)

ISO_AUDIO_BRANDS = {b"M4A ", b"M4B ", b"M4P ", b"F4A ", b"F4B "}
ISO_QUICKTIME_BRANDS = {b"qt  "}
ISO_UNSUPPORTED_BRANDS = {b"heic": "a HEIC image", b"heix": "a HEIC image", b"mif1": "a HEIF image", b"avif": "an AVIF image"}


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(size)


def sniff(path: Path, head: bytes | None = None) -> str | None:
    """The mime type the content shows, or None for "no binary format we know"."""
    head = read_head(path) if head is None else head
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"BM") and len(head) >= 26 and int.from_bytes(head[14:18], "little") in (12, 40, 52, 56, 64, 108, 124):
        return "image/bmp"
    if head.startswith(b"%PDF-") or b"%PDF-" in head[:1024]:
        return "application/pdf"
    if head[:4] == b"RIFF" and len(head) >= 12:
        return {b"WEBP": "image/webp", b"WAVE": "audio/wav", b"AVI ": "video/x-msvideo"}.get(head[8:12])
    if head.startswith(b"OggS"):
        # The first packet names the codec; Theora is video, everything else here is audio.
        return "video/ogg" if b"\x80theora" in head[:200] else "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head.startswith(b"ID3"):
        return _after_id3(head)
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in ISO_AUDIO_BRANDS:
            return "audio/mp4"
        if brand in ISO_QUICKTIME_BRANDS:
            return "video/quicktime"
        if brand in ISO_UNSUPPORTED_BRANDS:
            return None
        return "video/mp4"  # refined to audio/mp4 by the media reader when there is no video track
    if head[4:8] in (b"moov", b"mdat", b"wide", b"free", b"skip") and _looks_like_atoms(head):
        return "video/quicktime"  # old QuickTime files start without ftyp
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm" if b"webm" in head[:64] else "video/x-matroska"
    if head.startswith(b"PK\x03\x04"):
        return _zip_kind(path)
    if _is_adts(head):
        return "audio/aac"
    if _is_mpeg_audio(head):
        return "audio/mpeg"
    return None


def known_unsupported(head: bytes) -> str | None:
    """A plain-words name for a format we recognise but do not read."""
    for magic, what in KNOWN_UNSUPPORTED:
        if head.startswith(magic):
            return what
    if head[4:8] == b"ftyp" and head[8:12] in ISO_UNSUPPORTED_BRANDS:
        return ISO_UNSUPPORTED_BRANDS[head[8:12]]
    if head.startswith(b"PK\x03\x04"):
        return "a ZIP archive"
    return None


def looks_binary(head: bytes) -> bool:
    """Text has no NUL bytes (UTF-16 and UTF-32 aside, which announce or betray themselves)
    and few control characters."""
    if not head:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")) or _utf16_without_bom(head):
        return False
    if b"\x00" in head:
        return True
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27))
    return controls > len(head) * 0.05


def _utf16_without_bom(head: bytes) -> bool:
    sample = head[:512]
    if len(sample) < 8:
        return False
    even, odd = sample[0::2], sample[1::2]
    # ASCII-range text in UTF-16 has a NUL in every other byte and almost none in the rest.
    return (even.count(0) > len(even) * 0.8 and odd.count(0) < len(odd) * 0.1) or (
        odd.count(0) > len(odd) * 0.8 and even.count(0) < len(even) * 0.1
    )


def _after_id3(head: bytes) -> str:
    # An ID3v2 tag can front any MPEG audio and also ADTS AAC; look at what follows it.
    if len(head) >= 10:
        size = (head[6] << 21) | (head[7] << 14) | (head[8] << 7) | head[9]
        rest = head[10 + size : 10 + size + 8]
        if rest and _is_adts(rest):
            return "audio/aac"
    return "audio/mpeg"


def _is_adts(head: bytes) -> bool:
    # Sync word 0xFFF, layer bits 00 (MPEG audio frames use non-zero layer bits).
    return len(head) >= 7 and head[0] == 0xFF and (head[1] & 0xF6) == 0xF0 and ((head[2] >> 2) & 0xF) < 13


def _is_mpeg_audio(head: bytes) -> bool:
    """A bare MPEG audio frame header (an MP3 without an ID3 tag), checked twice in a row
    so random bytes starting with 0xFF are not taken for audio."""
    length = _mpeg_frame_length(head)
    if not length:
        return False
    return len(head) < length + 4 or _mpeg_frame_length(head[length:]) is not None


_BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
_BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
_RATES = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}


def _mpeg_frame_length(head: bytes) -> int | None:
    if len(head) < 4 or head[0] != 0xFF or (head[1] & 0xE0) != 0xE0:
        return None
    version, layer = (head[1] >> 3) & 3, (head[1] >> 1) & 3
    bitrate_index, rate_index, padding = head[2] >> 4, (head[2] >> 2) & 3, (head[2] >> 1) & 1
    if version == 1 or layer != 1 or bitrate_index in (0, 15) or rate_index == 3:
        return None  # only Layer III (MP3) is accepted as .mp3
    table = _BITRATES_V1_L3 if version == 3 else _BITRATES_V2_L3
    rate = _RATES[version][rate_index]
    factor = 144 if version == 3 else 72
    return factor * table[bitrate_index] * 1000 // rate + padding


def _looks_like_atoms(head: bytes) -> bool:
    size = int.from_bytes(head[:4], "big")
    return size >= 8 or size in (0, 1)


def _zip_kind(path: Path) -> str | None:
    """A Word document is a ZIP with word/document.xml; other ZIPs are not ours to read."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist()[:10_000])
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    if "word/document.xml" in names:
        return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    return None
