"""File formats: what a file is and the text that can be read from it without a model.

Only this package parses file formats. Services ask it two things: is this file type
accepted (by name, at the edge), and what text and metadata does the file hold
(`read_file`, which trusts the content over the name).

One module per family: text.py (plain and structured text, HTML, Word), pdf.py, images.py,
media.py (audio and video); sniff.py tells formats apart by their first bytes, safexml.py
parses untrusted XML, tools.py runs the optional tesseract and ffprobe programs.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from . import images, media, pdf, sniff, text
from .base import FileContent, UnreadableFile, UnsupportedFile
from .text import decode_text

__all__ = [
    "BINARY_TYPES",
    "SUPPORTED_TYPES",
    "TEXT_TYPES",
    "FileContent",
    "UnreadableFile",
    "UnsupportedFile",
    "check_file",
    "decode_text",
    "read_file",
    "supported_extension",
]

log = logging.getLogger(__name__)

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

# The original design's 27 types, plus .html and .docx which people drop all the same.
TEXT_TYPES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".json": "application/json",
    ".csv": "text/csv",
    ".log": "text/plain",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".html": "text/html",
    ".htm": "text/html",
}
BINARY_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".aac": "audio/aac",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mov": "video/quicktime",
    ".avi": "video/x-msvideo",
    ".mkv": "video/x-matroska",
    ".pdf": "application/pdf",
    ".docx": DOCX,
}
SUPPORTED_TYPES = TEXT_TYPES | BINARY_TYPES

# Types that share a container, so either name fits the content (an .m4a is an MP4 file,
# a .webm is Matroska); the reader then tells from the tracks which one it is.
SAME_CONTAINER = [
    {"audio/mp4", "video/mp4", "video/quicktime"},
    {"video/webm", "video/x-matroska"},
    {"audio/ogg", "video/ogg"},
]
KIND_NAMES = {
    "image": "an image",
    "audio": "an audio file",
    "video": "a video",
    "application/pdf": "a PDF document",
    DOCX: "a Word document",
}


def supported_extension(name: str) -> str:
    """The lower-cased extension if this file type is accepted; UnsupportedFile otherwise."""
    ext = Path(name).suffix.lower()
    if ext not in SUPPORTED_TYPES:
        accepted = " ".join(sorted(SUPPORTED_TYPES))
        raise UnsupportedFile(f"{Path(name).name!r}: file type {ext or '(none)'} is not supported. Accepted: {accepted}")
    return ext


def check_file(path: Path, name: str) -> str:
    """The cheap part of reading, done while a file is accepted: the type is supported, the
    file is not empty, and its first bytes agree with its name. Returns the mime type the
    content shows. Parsing the whole file waits for the extraction task (read_file)."""
    ext = supported_extension(name)
    label = Path(name).name
    if path.stat().st_size == 0:
        raise UnsupportedFile(f"{label!r} is empty.")
    mime, _ = _content_type(path, label, ext, SUPPORTED_TYPES[ext])
    return mime


def read_file(path: Path, name: str, *, budget_seconds: float | None = None) -> FileContent:
    """What can be read from a file offline: text led by a sentence saying what the file is,
    and metadata. The content decides the type: a file whose content is another supported
    type is read as that type (and says so); anything else is refused with the reason.
    budget_seconds bounds the readers that can take long on small hostile files (PDF pages)."""
    ext = supported_extension(name)
    label = Path(name).name
    size = path.stat().st_size
    if size == 0:
        raise UnsupportedFile(f"{label!r} is empty.")
    declared = SUPPORTED_TYPES[ext]
    mime, text_ext = _content_type(path, label, ext, declared)
    deadline = time.monotonic() + budget_seconds if budget_seconds else None
    try:
        content = _read(path, mime, text_ext, deadline)
    except UnreadableFile as exc:
        raise UnreadableFile(f"{label!r} could not be read: {exc}.") from None
    except UnsupportedFile as exc:
        raise UnsupportedFile(f"{label!r} is refused: {exc}.") from None
    except Exception as exc:  # a parser bug or a pathological file must not become a server error
        log.exception("extracting %s failed", label)
        raise UnreadableFile(f"{label!r} could not be read ({type(exc).__name__}).") from exc

    content.metadata = {"size": size, **content.metadata}
    if not _compatible(content.mime_type, declared) and not (
        declared.startswith("text/") and content.mime_type.startswith("text/")
    ):
        note = f"The file name ends in {ext}, but its content is {content.description.rstrip('.') or content.mime_type}; it was read by its content."
        content.metadata["declared_type"] = declared
        content.text = f"{note}\n\n{content.text}" if content.text else note
    if content.description:
        content.metadata.setdefault("description", content.description)
    content.metadata["notes_chars"] = notes_length(content)
    if content.body.strip() and mime in READERS:
        content.metadata.setdefault("reader", READERS[mime])
    if content.needs_model:
        content.metadata["needs_model"] = True
    return content


# Which reader produced a file's text, for the card (OCR and transcription set their own).
# The card says "Text read by <reader>.", so each is a reader, not the text it read.
READERS = {
    "application/pdf": "the PDF reader (its text layer)",
    DOCX: "the Word document reader",
    "text/html": "the web page reader (no navigation)",
    "text/markdown": "the Markdown reader",
    "text/csv": "the CSV reader",
    "application/json": "the JSON reader",
}


def notes_length(content: FileContent) -> int:
    """How many leading characters of the text are the reader's notes, not the file's words."""
    body = content.body.strip()
    if body and content.text.endswith(body):
        return len(content.text) - len(body)
    return len(content.text)


def _content_type(path: Path, label: str, ext: str, declared: str) -> tuple[str, str]:
    """(mime type to read the file as, the text extension to read it with if it is text)."""
    head = sniff.read_head(path)
    detected = sniff.sniff(path, head)
    if detected is not None:
        return detected, ".txt"
    if sniff.looks_binary(head):
        what = sniff.known_unsupported(head) or "not a format this service reads"
        expected = KIND_NAMES.get(declared) or KIND_NAMES.get(declared.split("/")[0]) or f"a {ext} file"
        if ext in TEXT_TYPES:
            expected = "text"
        raise UnsupportedFile(f"{label!r} is refused: the name says {expected}, but its content is {what}.")
    if ext in TEXT_TYPES:
        return declared, ext
    if ext == ".svg" or b"<svg" in head.lower():
        return "image/svg+xml", ".txt"
    # Text content under a binary name (notes.pdf that is really notes): read it as text.
    return "text/plain", ".txt"


def _read(path: Path, mime: str, text_ext: str, deadline: float | None = None) -> FileContent:
    if mime == "application/pdf":
        return pdf.read_pdf(path, mime, deadline=deadline)
    if mime == DOCX:
        return text.read_docx(path, mime)
    if mime.startswith("image/"):
        return images.read_image(path, mime)
    if mime.startswith(("audio/", "video/")):
        return media.read_media(path, mime)
    return text.read_text(path, text_ext, mime)


def _compatible(actual: str, declared: str) -> bool:
    if actual == declared:
        return True
    return any(actual in group and declared in group for group in SAME_CONTAINER) or {actual, declared} <= {
        "audio/webm",
        "video/webm",
        "video/x-matroska",
    }
