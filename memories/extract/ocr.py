"""Text in pictures, offline: RapidOCR (PP-OCRv4 models inside the rapidocr-onnxruntime
wheel, run by onnxruntime) by default, the tesseract program as the alternative.

MEMORY_OCR picks the reader: "auto" (RapidOCR when installed, else tesseract when
installed), "rapidocr", "tesseract" or "off". Nothing is downloaded at run time.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from PIL import Image

from . import tools

log = logging.getLogger(__name__)

# Recognitions the model itself doubts are noise (specks, textures read as letters).
MIN_CONFIDENCE = 0.5
READER_NAMES = {"rapidocr": "RapidOCR (PP-OCRv4, offline)", "tesseract": "Tesseract OCR"}

_lock = threading.Lock()
_rapid = None


@dataclass
class OCRResult:
    text: str | None  # None: the reader failed; "": it found no text
    reader: str  # "rapidocr" or "tesseract"


def rapidocr_installed() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def available_reader() -> str | None:
    """The reader MEMORY_OCR asks for, if it is installed; None when there is none."""
    choice = (settings.MEMORY_OCR or "auto").lower()
    if choice == "off":
        return None
    if choice in ("auto", "rapidocr") and rapidocr_installed():
        return "rapidocr"
    if choice in ("auto", "tesseract") and tools.find("tesseract"):
        return "tesseract"
    return None


def missing_message() -> str:
    choice = (settings.MEMORY_OCR or "auto").lower()
    if choice == "off":
        return "OCR is turned off (MEMORY_OCR=off), so text in it was not read."
    if choice == "tesseract":
        return tools.OCR_MISSING
    return (
        "OCR is not available: install the rapidocr-onnxruntime package (or the tesseract program), so text in it was not read."
    )


def read_text(im: Image.Image) -> OCRResult | None:
    """The text in a decoded picture, by the configured reader; None when there is none."""
    reader = available_reader()
    if reader == "rapidocr":
        return OCRResult(_rapidocr(im), reader)
    if reader == "tesseract":
        frame = im.convert("RGB") if im.mode not in ("RGB", "L") else im
        with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
            frame.save(tmp.name, "PNG")
            return OCRResult(tools.ocr(Path(tmp.name)), reader)
    return None


def _engine():
    global _rapid
    with _lock:
        if _rapid is None:
            from rapidocr_onnxruntime import RapidOCR

            _rapid = RapidOCR()
        return _rapid


def _rapidocr(im: Image.Image) -> str | None:
    try:
        engine = _engine()
        with _lock:  # one picture at a time per process: onnxruntime already uses every core
            result, _ = engine(im.convert("RGB"))
    except Exception:  # a model or decoding failure must not lose the picture
        log.exception("RapidOCR failed")
        return None
    boxes = [(box, text, score) for box, text, score in result or [] if text and text.strip() and score >= MIN_CONFIDENCE]
    return join_lines(boxes)


def join_lines(boxes) -> str:
    """Boxes (four corner points, text, score) -> lines of text, top to bottom, each line
    left to right. Two boxes are on one line when their vertical middles are closer than
    half a box height; where two boxes overlap, a word cut at the first one's edge and read
    whole by the next is dropped ("billing n" + "migration")."""
    items = []
    for box, text, _ in boxes:
        ys = [p[1] for p in box]
        xs = [p[0] for p in box]
        items.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), max(xs), text.strip()))
    items.sort(key=lambda i: (i[0], i[2]))
    lines: list[list] = []
    for item in items:
        if lines and abs(item[0] - lines[-1][0][0]) < max(item[1], lines[-1][0][1]) / 2:
            lines[-1].append(item)
        else:
            lines.append([item])
    out = []
    for line in lines:
        line.sort(key=lambda i: i[2])
        words: list[str] = []
        right = None
        for _, _, x0, x1, text in line:
            pieces = text.split()
            if (
                words
                and right is not None
                and x0 < right
                and pieces
                and pieces[0].startswith(words[-1])
                and len(words[-1]) < len(pieces[0])
            ):
                words.pop()
            words.extend(pieces)
            right = x1
        out.append(" ".join(words))
    return "\n".join(out).strip()


def reader_label(reader: str) -> str:
    return READER_NAMES.get(reader, reader)
