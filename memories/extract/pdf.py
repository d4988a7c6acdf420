"""PDF: text per page (pypdf), page count, title and author; scans say so and get OCR when it exists."""

from __future__ import annotations

import io
import logging
import time
from datetime import datetime
from pathlib import Path

from . import ocr
from .base import FileContent, UnreadableFile

log = logging.getLogger(__name__)

# Caps against hostile or merely enormous PDFs: pages read for text, characters kept,
# scanned pages sent to OCR, and pixels of one embedded image decoded for it.
MAX_PAGES = 500
MAX_TEXT_CHARS = 2_000_000
MAX_OCR_PAGES = 20
MAX_OCR_PIXELS = 40_000_000


def _out_of_time(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() > deadline


def read_pdf(path: Path, mime: str, *, deadline: float | None = None) -> FileContent:
    """deadline (time.monotonic()): pages are read until it passes. A small PDF can take a
    second a page (one of 29 KB with 150 pages held a web worker past its 120 s timeout)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile("the PDF is password-protected")
        page_count = len(reader.pages)
        info = _info(reader)
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError, OSError) as exc:
        raise UnreadableFile(f"the PDF is damaged and could not be read ({type(exc).__name__}: {exc})") from None

    pages: list[str] = []
    chars = 0
    failed_pages = 0
    timed_out = False
    for index in range(min(page_count, MAX_PAGES)):
        if _out_of_time(deadline):
            timed_out = True
            break
        try:
            text = reader.pages[index].extract_text() or ""
        except Exception as exc:  # one bad page must not lose the rest of the document
            log.info("pdf page %s unreadable: %s", index + 1, exc)
            failed_pages += 1
            text = ""
        text = _tidy(text)
        pages.append(text[: max(0, MAX_TEXT_CHARS - chars)])
        chars += len(pages[-1])
        if chars >= MAX_TEXT_CHARS:
            break

    if timed_out and not any(p.strip() for p in pages):
        raise UnreadableFile(
            f"reading it stopped at the time budget after {len(pages)} of {page_count} pages, with no text found"
            " (MEMORY_EXTRACT_TIME_BUDGET_SECONDS)"
        )
    meta: dict = {"kind": "document", "pages": page_count, **info}
    with_text = [i for i, t in enumerate(pages) if t.strip()]
    meta["pages_with_text"] = len(with_text)
    if failed_pages:
        meta["pages_unreadable"] = failed_pages

    description = (
        "PDF document"
        + (f" {info['title']!r}" if info.get("title") else "")
        + (f" by {info['author']}" if info.get("author") else "")
    )
    description += f", {page_count} page{'s' if page_count != 1 else ''}."
    notes: list[str] = []
    ocr_pages: list[str] = []
    needs_model = False
    if timed_out:
        notes.append(f"Only the first {len(pages)} pages were read: reading stopped at the time budget.")
        meta["pages_read"] = len(pages)
        meta["time_budget_reached"] = True
    elif not with_text:
        meta["scanned"] = True
        notes.append("It has no text layer (probably a scan or images only).")
        reader_name = ocr.available_reader()
        if not reader_name:
            meta["ocr"] = "unavailable"
            notes.append(ocr.missing_message() + " A multimodal provider (set GEMINI_API_KEY) can read it.")
            needs_model = True
        elif any(p.strip() for p in _ocr_pages(reader, page_count, into=ocr_pages, deadline=deadline)):
            meta["ocr"] = reader_name
            meta["reader"] = f"{ocr.reader_label(reader_name)}, from the scanned pages"
            pages = ocr_pages
            with_text = [i for i, t in enumerate(pages) if t.strip()]
            notes.append(f"Its text was read by OCR from {len(with_text)} page{'s' if len(with_text) != 1 else ''}.")
        else:
            meta["ocr"] = "no text found"
            notes.append("OCR found no text in its images; a multimodal provider (set GEMINI_API_KEY) can look at it.")
            needs_model = True
    if not timed_out and (page_count > MAX_PAGES or chars >= MAX_TEXT_CHARS):
        notes.append(f"Only the first {len(pages)} pages were read.")
        meta["pages_read"] = len(pages)

    body = _join_pages(pages)
    text = " ".join([description, *notes]) + (f"\n\n{body}" if body else "")
    return FileContent(mime_type=mime, text=text, metadata=meta, description=description, needs_model=needs_model, body=body)


def _join_pages(pages: list[str]) -> str:
    if sum(1 for p in pages if p.strip()) <= 1:
        return "\n\n".join(p for p in pages if p.strip())
    # The marker stands alone between blank lines: a model can cite pages, and the offline
    # summariser, which splits on blank lines, never mistakes it for part of a sentence.
    return "\n\n".join(f"[Page {i + 1}]\n\n{p}" for i, p in enumerate(pages) if p.strip())


def _tidy(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.replace("\r", "\n").split("\n")]
    return "\n".join(line for line in lines if line).strip().replace("\x00", "")


def _info(reader) -> dict:
    try:
        info = reader.metadata
    except Exception:
        return {}
    if not info:
        return {}
    out = {}
    for key, attr in (("title", "title"), ("author", "author"), ("subject", "subject"), ("producer", "producer")):
        try:
            value = getattr(info, attr)
        except Exception:
            continue
        if value and str(value).strip():
            out[key] = " ".join(str(value).split())[:300]
    try:
        created = info.creation_date
    except Exception:
        created = None
    if isinstance(created, datetime):
        out["created"] = created.isoformat()
    return out


def _ocr_pages(reader, page_count: int, *, into: list[str], deadline: float | None = None) -> list[str]:
    """OCR of the images on the first pages of a scan: a scanner puts one image per page."""
    from PIL import Image

    out = into
    for index in range(min(page_count, MAX_OCR_PAGES)):
        if _out_of_time(deadline):
            break
        texts = []
        try:
            images = list(reader.pages[index].images)
        except Exception:
            images = []
        for image_file in images[:4]:
            try:
                with Image.open(io.BytesIO(image_file.data)) as im:
                    if im.width * im.height > MAX_OCR_PIXELS:
                        continue
                    result = ocr.read_text(im.convert("RGB"))
                    if result and result.text:
                        texts.append(result.text)
            except Exception as exc:  # an unreadable image is skipped, not fatal
                log.info("pdf page %s image not OCR'd: %s", index + 1, exc)
        out.append("\n".join(texts))
    return out
