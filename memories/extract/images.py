"""Images: format, size, EXIF (camera, date taken, GPS), text through OCR; SVG text elements."""

from __future__ import annotations

import struct
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from . import safexml
from .ocr import missing_message, reader_label
from .ocr import read_text as read_ocr
from .base import FileContent, UnreadableFile, UnsupportedFile
from .text import clean, detect_decode, read_limited

# Above this many pixels the picture is described from its header only: decoding it whole
# (for OCR or an integrity check) would cost too much memory. Pillow's own bomb check
# refuses far larger images at open time.
MAX_DECODE_PIXELS = 50_000_000

NEEDS_MODEL = "What the picture shows needs a multimodal provider (set GEMINI_API_KEY) to be described."

EXIF_IFD, GPS_IFD = 0x8769, 0x8825
TAG_MAKE, TAG_MODEL, TAG_SOFTWARE, TAG_DATETIME, TAG_DESCRIPTION, TAG_ARTIST = 0x010F, 0x0110, 0x0131, 0x0132, 0x010E, 0x013B
TAG_DATE_ORIGINAL, TAG_OFFSET_ORIGINAL, TAG_LENS = 0x9003, 0x9011, 0xA434


def read_image(path: Path, mime: str) -> FileContent:
    if mime == "image/svg+xml":
        return read_svg(path, mime)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                return _describe(im, path, mime)
    except Image.DecompressionBombError as exc:
        raise UnreadableFile(f"the image is too large to open safely ({exc})") from None
    except (UnidentifiedImageError, SyntaxError, ValueError, EOFError, OSError, struct.error) as exc:
        raise UnreadableFile(f"the image is damaged or not really an image ({exc})") from None


def _describe(im: Image.Image, path: Path, mime: str) -> FileContent:
    width, height = im.size
    frames = getattr(im, "n_frames", 1) or 1
    meta: dict = {"format": im.format, "width": width, "height": height, "mode": im.mode}
    if frames > 1:
        meta["frames"] = frames
    exif_meta, taken = _exif(im)
    meta.update(exif_meta)

    damaged = False
    ocr = None
    pixels = width * height
    if pixels <= MAX_DECODE_PIXELS:
        try:
            im.load()
        except (OSError, SyntaxError, ValueError) as exc:
            damaged = True
            meta["damaged"] = str(exc)[:200]
        if not damaged:
            ocr = read_ocr(im)
    else:
        meta["too_large_to_decode"] = True

    kind = {"JPEG": "JPEG", "PNG": "PNG", "GIF": "GIF", "WEBP": "WebP", "BMP": "BMP"}.get(im.format or "", im.format or "")
    description = f"{kind} image, {width}×{height} pixels" + (f", {frames} frames (animated)" if frames > 1 else "")
    # What the photo's own record says goes in the first sentence, which summaries keep.
    if exif_meta.get("camera"):
        description += f", taken with a {exif_meta['camera']}"
    if exif_meta.get("date_taken"):
        description += f" on {exif_meta['date_taken']}"
    description += "."
    lines = [description]
    if "gps" in exif_meta:
        lat, lon = exif_meta["gps"]["latitude"], exif_meta["gps"]["longitude"]
        lines.append(f"GPS position {lat:.5f}, {lon:.5f}.")
    if exif_meta.get("image_description"):
        lines.append(f"Caption: {exif_meta['image_description']}.")
    if damaged:
        lines.append("The image data is damaged or truncated; only its header could be read.")
    body = ""
    if ocr is not None:
        meta["ocr"] = ocr.reader
        if ocr.text:
            meta["reader"] = reader_label(ocr.reader)
            body = ocr.text
        else:
            lines.append("OCR found no text in it." if ocr.text == "" else "OCR could not read it.")
            if ocr.text is None:
                meta["ocr"] = "failed"
    elif not damaged and pixels <= MAX_DECODE_PIXELS:
        lines.append(missing_message())
        meta["ocr"] = "unavailable"
        meta["needs_reader"] = lines[-1]
    lines.append(NEEDS_MODEL)
    # The words read in the picture come last: they are the file's own content (body).
    if body:
        lines.append(f"Text in the image, read by {reader_label(ocr.reader)}:\n{body}")
    meta["kind"] = "image"
    return FileContent(
        mime_type=mime,
        text="\n\n".join(lines),
        metadata=meta,
        description=description,
        occurred_at=taken,
        needs_model=True,
        body=body,
    )


def _exif(im: Image.Image) -> tuple[dict, datetime | None]:
    try:
        exif = im.getexif()
    except Exception:  # a malformed EXIF block must not lose the picture
        return {}, None
    if not exif:
        return {}, None
    out: dict = {}
    try:
        sub = exif.get_ifd(EXIF_IFD)
        gps = exif.get_ifd(GPS_IFD)
    except Exception:
        sub, gps = {}, {}
    make, model = _s(exif.get(TAG_MAKE)), _s(exif.get(TAG_MODEL))
    if make or model:
        # Many cameras repeat the maker in the model name ("Canon" + "Canon EOS R5").
        out["camera"] = (
            model if make and model.lower().startswith(make.lower().split()[0]) else " ".join(x for x in (make, model) if x)
        )
    for key, tag, ifd in (
        ("software", TAG_SOFTWARE, exif),
        ("image_description", TAG_DESCRIPTION, exif),
        ("artist", TAG_ARTIST, exif),
        ("lens", TAG_LENS, sub),
    ):
        if value := _s(ifd.get(tag)):
            out[key] = value[:300]
    raw_date = _s(sub.get(TAG_DATE_ORIGINAL)) or _s(exif.get(TAG_DATETIME))
    taken = _exif_datetime(raw_date, _s(sub.get(TAG_OFFSET_ORIGINAL)))
    if taken:
        out["date_taken"] = taken.isoformat(sep=" ")
    if position := _gps(gps):
        out["gps"] = position
    return out, taken


def _s(value) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return " ".join(str(value).replace("\x00", " ").split()) if value not in (None, "") else ""


def _exif_datetime(value: str, offset: str) -> datetime | None:
    if not value:
        return None
    try:
        when = datetime.strptime(value[:19], "%Y:%m:%d %H:%M:%S")
    except ValueError:
        return None
    if offset and len(offset) == 6 and offset[0] in "+-":
        try:
            hours, minutes = int(offset[1:3]), int(offset[4:6])
        except ValueError:
            return when
        sign = 1 if offset[0] == "+" else -1
        when = when.replace(tzinfo=timezone(sign * timedelta(hours=hours, minutes=minutes)))
    return when


def _gps(gps) -> dict | None:
    def degrees(value):
        d, m, s = (float(x) for x in value)
        return d + m / 60 + s / 3600

    try:
        lat, lon = degrees(gps[2]), degrees(gps[4])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    if _s(gps.get(1)).upper() == "S":
        lat = -lat
    if _s(gps.get(3)).upper() == "W":
        lon = -lon
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        return None
    out = {"latitude": round(lat, 6), "longitude": round(lon, 6)}
    try:
        out["altitude_m"] = round(float(gps[6]) * (-1 if gps.get(5) in (1, b"\x01") else 1), 1)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        pass
    return out


# --- SVG ---------------------------------------------------------------------------------


def read_svg(path: Path, mime: str) -> FileContent:
    data, truncated = read_limited(path)
    text, _, _ = detect_decode(data)
    meta: dict = {"format": "SVG", "kind": "image"}
    try:
        if truncated:
            raise safexml.XMLRefused("it is larger than the part read")
        root = safexml.parse(text.encode("utf-8"))
    except safexml.XMLRefused as exc:
        description = "SVG image."
        meta["refused"] = str(exc)
        body = f"{description}\n\nIts content was not read: {exc}.\n\n{NEEDS_MODEL}"
        return FileContent(mime_type=mime, text=body, metadata=meta, description=description, needs_model=True)
    if safexml.local(root.tag) != "svg":
        raise UnsupportedFile(f"the file is XML with root <{safexml.local(root.tag)}>, not an SVG image")
    width, height, view_box = root.get("width"), root.get("height"), root.get("viewBox")
    size = f", {width}×{height}" if width and height else (f", view box {view_box}" if view_box else "")
    meta.update({k: v for k, v in (("width", width), ("height", height), ("view_box", view_box)) if v})
    title = desc = ""
    texts = []
    for el in root.iter():
        name = safexml.local(el.tag)
        if name == "title" and not title:
            title = _joined(el)
        elif name == "desc" and not desc:
            desc = _joined(el)
        elif name == "text":
            if line := _joined(el):
                texts.append(line)
    description = "SVG image" + (f" {title!r}" if title else "") + size + "."
    lines = [description]
    if desc:
        lines.append(desc)
    if not texts:
        lines.append("The drawing has no text elements.")
    if title:
        meta["title"] = title
    lines.append(NEEDS_MODEL)
    body = ""
    if texts:
        body = clean("\n".join(texts))
        lines.append("Text in the drawing:\n" + body)
        meta["texts"] = texts[:200]
        meta["reader"] = "the SVG reader (its text elements)"
    return FileContent(
        mime_type=mime, text=clean("\n\n".join(lines)), metadata=meta, description=description, needs_model=not texts, body=body
    )


def _joined(el) -> str:
    return " ".join("".join(el.itertext()).split())[:2000]
