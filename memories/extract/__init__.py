"""File formats: what a file is and the text that can be read from it without a model.

Only this package parses file formats. Services ask it two things: is this file type
accepted, and what text and metadata does the file hold.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from pathlib import Path

# The original design's 27 types, plus .html and .docx which people drop all the same.
TEXT_TYPES = {
    ".txt": "text/plain", ".md": "text/markdown", ".json": "application/json", ".csv": "text/csv",
    ".log": "text/plain", ".xml": "application/xml", ".yaml": "application/yaml", ".yml": "application/yaml",
    ".html": "text/html", ".htm": "text/html",
}
BINARY_TYPES = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
    ".bmp": "image/bmp", ".svg": "image/svg+xml",
    ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4",
    ".aac": "audio/aac",
    ".mp4": "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime", ".avi": "video/x-msvideo",
    ".mkv": "video/x-matroska",
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
SUPPORTED_TYPES = TEXT_TYPES | BINARY_TYPES


class UnsupportedFile(ValueError):
    pass


@dataclass
class FileContent:
    mime_type: str
    text: str = ""
    metadata: dict = field(default_factory=dict)

    @property
    def is_text(self) -> bool:
        return bool(self.text)


def supported_extension(name: str) -> str:
    """The lower-cased extension if this file type is accepted; UnsupportedFile otherwise."""
    ext = Path(name).suffix.lower()
    if ext not in SUPPORTED_TYPES:
        accepted = " ".join(sorted(SUPPORTED_TYPES))
        raise UnsupportedFile(f"{Path(name).name!r}: file type {ext or '(none)'} is not supported. Accepted: {accepted}")
    return ext


def decode_text(data: bytes) -> str:
    """Bytes to text: UTF-8 (with or without BOM), UTF-16 by BOM, else Windows-1252 as a
    last resort that never fails; control characters other than whitespace are dropped."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    return "".join(ch for ch in text if ch >= " " or ch in "\n\r\t")


def read_file(path: Path, name: str) -> FileContent:
    """What can be read from a file offline. Text formats become text; other formats
    are described by their metadata until a richer extractor or a model reads them."""
    ext = supported_extension(name)
    mime = SUPPORTED_TYPES[ext] or mimetypes.guess_type(name)[0] or "application/octet-stream"
    size = path.stat().st_size
    if ext in TEXT_TYPES:
        return FileContent(mime_type=mime, text=decode_text(path.read_bytes()), metadata={"size": size})
    return FileContent(mime_type=mime, metadata={"size": size})
