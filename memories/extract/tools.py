"""Optional programs (tesseract, ffprobe): found at run time, never required.

Each runs with a timeout and bounded output; when one is missing or fails the
extractor says so plainly instead of failing the file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

OCR_TIMEOUT = 120
PROBE_TIMEOUT = 30
MAX_OUTPUT = 2 * 1024 * 1024

OCR_MISSING = (
    "OCR is not available: the tesseract program (Debian package tesseract-ocr) is not installed, so text in it was not read."
)


def find(program: str) -> str | None:
    return shutil.which(program)


def ocr(image_path: Path) -> str | None:
    """The text Tesseract reads in an image file; None when tesseract is absent or fails."""
    exe = find("tesseract")
    if not exe:
        return None
    try:
        done = subprocess.run(
            [exe, str(image_path), "stdout"], capture_output=True, timeout=OCR_TIMEOUT, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    text = done.stdout[:MAX_OUTPUT].decode("utf-8", errors="replace")
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip()).strip()


def ffprobe(path: Path) -> dict | None:
    """ffprobe's JSON description of a media file; None when absent or it cannot read it."""
    exe = find("ffprobe")
    if not exe:
        return None
    try:
        done = subprocess.run(
            [exe, "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)],
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            return None
        return json.loads(done.stdout[:MAX_OUTPUT])
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
