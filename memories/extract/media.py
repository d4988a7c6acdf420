"""Audio and video: duration, codecs, picture size, tags (title, artist, album, recording date).

mutagen reads the audio containers and their tags; small bounded parsers of our own read the
video containers (ISO MP4/MOV boxes, Matroska/WebM EBML, AVI RIFF) so the offline path needs no
external program; ffprobe, when installed, fills in what those miss. What is said in the
recording needs a multimodal model: the text says so.
"""

from __future__ import annotations

import logging
import re
import struct
from datetime import datetime, timedelta, timezone
from pathlib import Path

from . import tools
from .base import FileContent, UnreadableFile

log = logging.getLogger(__name__)

# Container headers we parse ourselves are read at most this far; media data is never read.
MAX_HEADER_BYTES = 16 * 1024 * 1024

NEEDS_MODEL_AUDIO = (
    "Its spoken content is not read yet: a speech-to-text server (MEMORY_TRANSCRIBE_BASE_URL, e.g. whisper.cpp) "
    "or a multimodal provider (GEMINI_API_KEY) would transcribe it."
)
NEEDS_MODEL_VIDEO = (
    "What it shows is not read yet: a multimodal provider (GEMINI_API_KEY) would describe it; "
    "a speech-to-text server (MEMORY_TRANSCRIBE_BASE_URL) would transcribe its sound."
)

FORMAT_NAMES = {
    "audio/mpeg": "MP3 audio",
    "audio/wav": "WAV audio",
    "audio/ogg": "Ogg audio",
    "audio/flac": "FLAC audio",
    "audio/mp4": "M4A audio",
    "audio/aac": "AAC audio",
    "video/mp4": "MP4 video",
    "video/webm": "WebM video",
    "video/quicktime": "QuickTime video",
    "video/x-msvideo": "AVI video",
    "video/x-matroska": "Matroska video",
    "video/ogg": "Ogg video",
}
CODEC_NAMES = {
    "avc1": "H.264",
    "avc3": "H.264",
    "hvc1": "H.265",
    "hev1": "H.265",
    "mp4a": "AAC",
    "vp08": "VP8",
    "vp09": "VP9",
    "av01": "AV1",
    "Opus": "Opus",
    "fLaC": "FLAC",
    "ac-3": "AC-3",
    "ec-3": "E-AC-3",
    "alac": "ALAC",
    "mp4v": "MPEG-4 Visual",
    "jpeg": "Motion JPEG",
    "apcn": "ProRes",
    "apch": "ProRes",
    "twos": "PCM",
    "sowt": "PCM",
    "lpcm": "PCM",
    "V_VP8": "VP8",
    "V_VP9": "VP9",
    "V_AV1": "AV1",
    "V_MPEG4/ISO/AVC": "H.264",
    "V_MPEGH/ISO/HEVC": "H.265",
    "A_OPUS": "Opus",
    "A_VORBIS": "Vorbis",
    "A_AAC": "AAC",
    "A_MPEG/L3": "MP3",
    "A_FLAC": "FLAC",
    "A_PCM/INT/LIT": "PCM",
    "A_AC3": "AC-3",
    "S_TEXT/UTF8": "subtitles",
    "H264": "H.264",
    "h264": "H.264",
    "X264": "H.264",
    "XVID": "Xvid",
    "xvid": "Xvid",
    "DIVX": "DivX",
    "divx": "DivX",
    "MJPG": "Motion JPEG",
    "mjpg": "Motion JPEG",
    "DX50": "DivX",
    "FMP4": "MPEG-4 Visual",
    "h264_ffprobe": "H.264",
    "hevc": "H.265",
    "aac": "AAC",
    "mp3": "MP3",
    "opus": "Opus",
    "vorbis": "Vorbis",
    "vp8": "VP8",
    "vp9": "VP9",
    "av1": "AV1",
    "flac": "FLAC",
    "mjpeg": "Motion JPEG",
    "mpeg4": "MPEG-4 Visual",
}
WAVE_FORMATS = {1: "PCM", 3: "PCM float", 0x55: "MP3", 0xFF: "AAC", 0x2000: "AC-3", 6: "A-law", 7: "µ-law"}
TAG_KEYS = ("title", "artist", "album", "date", "genre", "comment")


def read_media(path: Path, mime: str) -> FileContent:
    meta: dict = {"kind": "video" if mime.startswith("video/") else "audio"}
    errors = []
    try:
        _mutagen(path, mime, meta)
    except Exception as exc:  # mutagen raises its own error per format; any of them means "not readable by it"
        errors.append(f"{type(exc).__name__}: {exc}")
    try:
        with open(path, "rb") as fh:
            if mime in ("video/mp4", "video/quicktime", "audio/mp4"):
                _iso(fh, meta)
            elif mime in ("video/webm", "video/x-matroska"):
                _ebml(fh, meta)
            elif mime == "video/x-msvideo":
                _avi(fh, meta)
    except Exception as exc:  # a malformed header: whatever was read so far still counts
        errors.append(f"{type(exc).__name__}: {exc}")
    if probe := tools.ffprobe(path):
        _from_ffprobe(probe, meta)
        meta["probed_with"] = "ffprobe"
    if not meta.get("duration_seconds") and not meta.get("video") and not meta.get("audio"):
        detail = f" ({errors[0]})" if errors else ""
        raise UnreadableFile(f"the {FORMAT_NAMES.get(mime, mime)} file is damaged or truncated: no stream could be read{detail}")

    # A container with no video track is audio, whatever its brand or extension said.
    if mime in ("video/mp4", "video/quicktime") and meta.get("tracks") and not meta.get("video"):
        mime, meta["kind"] = "audio/mp4", "audio"
    elif mime == "audio/mp4" and meta.get("video"):
        mime, meta["kind"] = "video/mp4", "video"
    elif mime == "video/webm" and meta.get("tracks") and not meta.get("video"):
        mime, meta["kind"] = "audio/webm", "audio"

    occurred_at = _recording_date(meta)
    if occurred_at:
        meta["recorded_at"] = occurred_at.isoformat(sep=" ")
    description = _description(mime, meta)
    lines = [description]
    tags = meta.get("tags", {})
    tag_line = "; ".join(f"{key.capitalize()}: {tags[key]}" for key in TAG_KEYS if tags.get(key))
    if tag_line:
        lines.append(tag_line + ".")
    lines.append(NEEDS_MODEL_VIDEO if meta["kind"] == "video" else NEEDS_MODEL_AUDIO)
    meta["needs_reader"] = lines[-1]
    return FileContent(
        mime_type=mime, text="\n\n".join(lines), metadata=meta, description=description, occurred_at=occurred_at, needs_model=True
    )


def _description(mime: str, meta: dict) -> str:
    parts = [FORMAT_NAMES.get(mime, "Audio" if meta["kind"] == "audio" else "Video")]
    if seconds := meta.get("duration_seconds"):
        parts.append(format_duration(seconds))
    video, audio = meta.get("video") or {}, meta.get("audio") or {}
    if video.get("width") and video.get("height"):
        parts.append(f"{video['width']}×{video['height']}")
    codecs = []
    if video.get("codec"):
        codecs.append(f"{video['codec']} video")
    if audio.get("codec"):
        codecs.append(f"{audio['codec']} audio" if meta["kind"] == "video" else audio["codec"])
    if codecs:
        parts.append(" and ".join(codecs))
    if audio.get("bitrate_kbps") and meta["kind"] == "audio":
        parts.append(f"{audio['bitrate_kbps']} kbps")
    if audio.get("sample_rate"):
        parts.append(f"{audio['sample_rate']:,} Hz")
    if channels := audio.get("channels"):
        parts.append({1: "mono", 2: "stereo"}.get(channels, f"{channels} channels"))
    if meta["kind"] == "audio" and not audio and meta.get("video") is None and not codecs and not meta.get("duration_seconds"):
        parts.append("no stream details")
    return ", ".join(parts) + "."


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} seconds"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours} h {minutes:02d} min {secs:02d} s" if hours else f"{minutes} min {secs:02d} s"


# --- mutagen -------------------------------------------------------------------------------


def _mutagen(path: Path, mime: str, meta: dict) -> None:
    import mutagen

    if mime == "audio/mpeg":
        from mutagen.mp3 import EasyMP3 as kind
    elif mime == "audio/wav":
        from mutagen.wave import WAVE as kind
    elif mime == "audio/flac":
        from mutagen.flac import FLAC as kind
    elif mime == "audio/aac":
        from mutagen.aac import AAC as kind
    elif mime in ("audio/mp4", "video/mp4", "video/quicktime"):
        from mutagen.easymp4 import EasyMP4 as kind
    elif mime in ("audio/ogg", "video/ogg"):
        kind = None
    else:
        return
    if kind is None:
        from mutagen.oggflac import OggFLAC
        from mutagen.oggopus import OggOpus
        from mutagen.oggspeex import OggSpeex
        from mutagen.oggtheora import OggTheora
        from mutagen.oggvorbis import OggVorbis

        found = mutagen.File(path, options=[OggVorbis, OggOpus, OggFLAC, OggSpeex, OggTheora])
        if found is None:
            raise ValueError("no Ogg stream mutagen knows")
    else:
        found = kind(path)
    info = found.info
    if length := getattr(info, "length", 0):
        meta["duration_seconds"] = round(float(length), 3)
    audio = {}
    codec = {
        "MP3": "MPEG-1 Layer 3",
        "WAVE": WAVE_FORMATS.get(getattr(info, "_format_tag", 1), "PCM"),
        "FLAC": "FLAC",
        "OggVorbis": "Vorbis",
        "OggOpus": "Opus",
        "OggFLAC": "FLAC",
        "OggSpeex": "Speex",
        "AAC": "AAC",
    }.get(type(found).__name__.removeprefix("Easy"))
    if type(found).__name__ == "EasyMP3" and getattr(info, "version", 1) != 1:
        codec = f"MPEG-{info.version:g} Layer 3"
    if type(found).__name__ == "EasyMP4":
        codec = CODEC_NAMES.get(getattr(info, "codec", "") or "", getattr(info, "codec_description", "") or None)
    if codec:
        audio["codec"] = codec
    for key, attr in (("sample_rate", "sample_rate"), ("channels", "channels"), ("bits_per_sample", "bits_per_sample")):
        if value := getattr(info, attr, 0):
            audio[key] = int(value)
    if (bitrate := getattr(info, "bitrate", 0)) and type(found).__name__ not in ("WAVE",):
        audio["bitrate_kbps"] = round(bitrate / 1000)
    if audio and type(found).__name__ != "OggTheora":
        meta["audio"] = audio
    tags = {}
    for key in TAG_KEYS:
        try:
            value = found.tags.get(key) if found.tags is not None else None
        except (KeyError, ValueError, AttributeError):
            value = None
        if value:
            text = value[0] if isinstance(value, list) else value
            if text := " ".join(str(text).split())[:300]:
                tags[key] = text
    if tags:
        meta["tags"] = tags


# --- ISO base media (MP4, MOV, M4A) ----------------------------------------------------------

ISO_CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"udta", b"edts", b"dinf"}
MAC_EPOCH = datetime(1904, 1, 1, tzinfo=timezone.utc)


def _iso(fh, meta: dict) -> None:
    fh.seek(0, 2)
    end = fh.tell()
    offset = 0
    while offset + 8 <= end:
        fh.seek(offset)
        size, kind, header = _box_header(fh.read(16), end - offset)
        if size < header:
            break
        if kind == b"moov":
            if size > MAX_HEADER_BYTES:
                raise ValueError(f"moov box of {size:,} bytes is larger than allowed")
            fh.seek(offset + header)
            _iso_boxes(fh.read(size - header), meta, None)
        offset += size


def _box_header(data: bytes, remaining: int) -> tuple[int, bytes, int]:
    if len(data) < 8:
        return 0, b"", 8
    size, kind = struct.unpack(">I4s", data[:8])
    if size == 1 and len(data) >= 16:
        return struct.unpack(">Q", data[8:16])[0], kind, 16
    if size == 0:
        return remaining, kind, 8
    return size, kind, 8


def _iso_boxes(data: bytes, meta: dict, track: dict | None) -> None:
    pos = 0
    while pos + 8 <= len(data):
        size, kind, header = _box_header(data[pos : pos + 16], len(data) - pos)
        if size < header or pos + size > len(data):
            break
        body = data[pos + header : pos + size]
        if kind == b"trak":
            new = {}
            _iso_boxes(body, meta, new)
            _add_track(meta, new)
        elif kind in ISO_CONTAINERS:
            _iso_boxes(body, meta, track)
        elif kind == b"mvhd":
            created, timescale, duration = _time_fields(body)
            if timescale and duration and duration != 0xFFFFFFFF:
                meta.setdefault("duration_seconds", round(duration / timescale, 3))
            if created > 3_124_137_600:  # later than 1999: zero or junk otherwise
                meta["created"] = (MAC_EPOCH + timedelta(seconds=created)).isoformat()
        elif kind == b"tkhd" and track is not None and len(body) >= 84:
            width, height = struct.unpack(">II", body[-8:])
            track["width"], track["height"] = width >> 16, height >> 16
        elif kind == b"mdhd" and track is not None:
            _, timescale, duration = _time_fields(body)
            if timescale:
                track["duration"] = duration / timescale
        elif kind == b"hdlr" and track is not None and len(body) >= 12:
            track["handler"] = body[8:12].decode("latin-1")
        elif kind == b"stsd" and track is not None and len(body) >= 16:
            entry = body[8:]
            track["codec"] = entry[4:8].decode("latin-1", errors="replace")
            if len(entry) >= 36 and track.get("handler") == "soun":
                (track["channels"],) = struct.unpack(">H", entry[24:26])
                track["sample_rate"] = struct.unpack(">I", entry[32:36])[0] >> 16
        pos += size


def _time_fields(body: bytes) -> tuple[int, int, int]:
    """(creation time, timescale, duration) from an mvhd or mdhd full box."""
    if not body:
        return 0, 0, 0
    if body[0] == 1 and len(body) >= 32:
        created, _, timescale, duration = struct.unpack(">QQIQ", body[4:32])
    elif len(body) >= 20:
        created, _, timescale, duration = struct.unpack(">IIII", body[4:20])
    else:
        return 0, 0, 0
    return created, timescale, duration


def _add_track(meta: dict, track: dict) -> None:
    handler = track.get("handler")
    meta.setdefault("tracks", []).append({k: v for k, v in track.items() if isinstance(v, (int, str, float))})
    codec = CODEC_NAMES.get(track.get("codec", ""), track.get("codec"))
    if handler == "vide" and "video" not in meta:
        meta["video"] = {k: v for k, v in (("codec", codec), ("width", track.get("width")), ("height", track.get("height"))) if v}
    elif handler == "soun":
        audio = meta.setdefault("audio", {})
        audio.setdefault("codec", codec)
        for key in ("channels", "sample_rate"):
            if track.get(key):
                audio.setdefault(key, track[key])


# --- Matroska / WebM (EBML) ------------------------------------------------------------------

EBML_HEADER, DOCTYPE = 0x1A45DFA3, 0x4282
SEGMENT, INFO, TRACKS, CLUSTER = 0x18538067, 0x1549A966, 0x1654AE6B, 0x1F43B675
TIMESCALE, DURATION, TITLE, DATE_UTC = 0x2AD7B1, 0x4489, 0x7BA9, 0x4461
TRACK_ENTRY, TRACK_TYPE, CODEC_ID, VIDEO, AUDIO = 0xAE, 0x83, 0x86, 0xE0, 0xE1
PIXEL_WIDTH, PIXEL_HEIGHT, SAMPLING_FREQ, CHANNELS = 0xB0, 0xBA, 0xB5, 0x9F
MKV_EPOCH = datetime(2001, 1, 1, tzinfo=timezone.utc)


def _vint(data: bytes, pos: int, *, keep_marker: bool) -> tuple[int, int]:
    first = data[pos]
    length = 8 - first.bit_length() + 1
    if length > 8 or pos + length > len(data):
        raise ValueError("bad EBML number")
    value = first if keep_marker else first & ((1 << (8 - length)) - 1)
    for byte in data[pos + 1 : pos + length]:
        value = (value << 8) | byte
    if not keep_marker and value == (1 << (7 * length)) - 1:
        value = -1  # "unknown size": runs to the end of the parent
    return value, pos + length


def _elements(data: bytes, start: int = 0, end: int | None = None):
    pos, end = start, len(data) if end is None else end
    while pos < end:
        element, pos = _vint(data, pos, keep_marker=True)
        size, pos = _vint(data, pos, keep_marker=False)
        stop = end if size < 0 else min(end, pos + size)
        yield element, pos, stop
        if element == CLUSTER:
            return  # media data from here on
        pos = stop


def _ebml(fh, meta: dict) -> None:
    data = fh.read(MAX_HEADER_BYTES)
    timescale, duration = 1_000_000, None
    for element, start, stop in _elements(data):
        if element == EBML_HEADER:
            for child, s, e in _elements(data, start, stop):
                if child == DOCTYPE:
                    meta["container"] = data[s:e].decode("ascii", errors="replace")
        elif element == SEGMENT:
            for child, s, e in _elements(data, start, stop):
                if child == INFO:
                    for item, a, b in _elements(data, s, e):
                        if item == TIMESCALE:
                            timescale = int.from_bytes(data[a:b], "big") or timescale
                        elif item == DURATION:
                            duration = struct.unpack(">f" if b - a == 4 else ">d", data[a:b])[0]
                        elif item == TITLE:
                            meta.setdefault("tags", {})["title"] = data[a:b].decode("utf-8", errors="replace")[:300]
                        elif item == DATE_UTC and b - a == 8:
                            nanos = struct.unpack(">q", data[a:b])[0]
                            meta["created"] = (MKV_EPOCH + timedelta(microseconds=nanos // 1000)).isoformat()
                elif child == TRACKS:
                    for entry, a, b in _elements(data, s, e):
                        if entry == TRACK_ENTRY:
                            _mkv_track(data, a, b, meta)
                elif child == CLUSTER:
                    break
    if duration:
        meta.setdefault("duration_seconds", round(duration * timescale / 1e9, 3))


def _mkv_track(data: bytes, start: int, stop: int, meta: dict) -> None:
    track: dict = {}
    for item, a, b in _elements(data, start, stop):
        if item == TRACK_TYPE:
            track["type"] = {1: "video", 2: "audio", 17: "subtitle"}.get(int.from_bytes(data[a:b], "big"), "other")
        elif item == CODEC_ID:
            track["codec_id"] = data[a:b].decode("ascii", errors="replace").rstrip("\x00")
        elif item in (VIDEO, AUDIO):
            for sub, c, d in _elements(data, a, b):
                if sub == PIXEL_WIDTH:
                    track["width"] = int.from_bytes(data[c:d], "big")
                elif sub == PIXEL_HEIGHT:
                    track["height"] = int.from_bytes(data[c:d], "big")
                elif sub == SAMPLING_FREQ:
                    track["sample_rate"] = int(struct.unpack(">f" if d - c == 4 else ">d", data[c:d])[0])
                elif sub == CHANNELS:
                    track["channels"] = int.from_bytes(data[c:d], "big")
    meta.setdefault("tracks", []).append(track)
    codec = CODEC_NAMES.get(track.get("codec_id", ""), track.get("codec_id"))
    if track.get("type") == "video" and "video" not in meta:
        meta["video"] = {k: v for k, v in (("codec", codec), ("width", track.get("width")), ("height", track.get("height"))) if v}
    elif track.get("type") == "audio" and "audio" not in meta:
        meta["audio"] = {
            k: v
            for k, v in (("codec", codec), ("sample_rate", track.get("sample_rate")), ("channels", track.get("channels")))
            if v
        }


# --- AVI (RIFF) ------------------------------------------------------------------------------


def _riff_chunks(data: bytes, start: int, end: int):
    pos = start
    while pos + 8 <= end:
        kind, size = data[pos : pos + 4], struct.unpack("<I", data[pos + 4 : pos + 8])[0]
        body_end = min(end, pos + 8 + size)
        yield kind, pos + 8, body_end
        pos = pos + 8 + size + (size & 1)


def _avi(fh, meta: dict) -> None:
    data = fh.read(min(MAX_HEADER_BYTES, 1024 * 1024))
    if data[:4] != b"RIFF" or data[8:12] != b"AVI ":
        raise ValueError("not an AVI file")
    frames = us_per_frame = 0
    for kind, start, stop in _riff_chunks(data, 12, len(data)):
        if kind != b"LIST":
            continue
        list_type = data[start : start + 4]
        if list_type == b"hdrl":
            for sub, a, b in _riff_chunks(data, start + 4, stop):
                if sub == b"avih" and b - a >= 40:
                    us_per_frame, _, _, _, frames, _, _, _, width, height = struct.unpack("<10I", data[a : a + 40])
                    meta["video"] = {"width": width, "height": height}
                elif sub == b"LIST" and data[a : a + 4] == b"strl":
                    _avi_stream(data, a + 4, b, meta)
        elif list_type == b"INFO":
            names = {b"INAM": "title", b"IART": "artist", b"ICRD": "date", b"ICMT": "comment"}
            for sub, a, b in _riff_chunks(data, start + 4, stop):
                if sub in names:
                    meta.setdefault("tags", {})[names[sub]] = data[a:b].rstrip(b"\x00").decode("latin-1")[:300]
        elif list_type == b"movi":
            break
    if frames and us_per_frame:
        meta.setdefault("duration_seconds", round(frames * us_per_frame / 1e6, 3))


def _avi_stream(data: bytes, start: int, stop: int, meta: dict) -> None:
    kind = None
    for sub, a, b in _riff_chunks(data, start, stop):
        if sub == b"strh" and b - a >= 8:
            kind, handler = data[a : a + 4], data[a + 4 : a + 8].decode("latin-1").strip("\x00 ")
            if kind == b"vids" and handler:
                meta.setdefault("video", {})["codec"] = CODEC_NAMES.get(handler, handler)
        elif sub == b"strf" and kind == b"auds" and b - a >= 8:
            tag, channels, rate = struct.unpack("<HHI", data[a : a + 8])
            meta["audio"] = {"codec": WAVE_FORMATS.get(tag, f"format 0x{tag:04x}"), "channels": channels, "sample_rate": rate}


# --- ffprobe and dates -----------------------------------------------------------------------


def _from_ffprobe(probe: dict, meta: dict) -> None:
    fmt = probe.get("format") or {}
    try:
        if duration := float(fmt.get("duration") or 0):
            meta["duration_seconds"] = round(duration, 3)
    except ValueError:
        pass
    for stream in probe.get("streams") or []:
        codec = CODEC_NAMES.get(stream.get("codec_name", ""), stream.get("codec_name"))
        if stream.get("codec_type") == "video" and stream.get("disposition", {}).get("attached_pic") != 1:
            video = meta.setdefault("video", {})
            video.update(
                {k: v for k, v in (("codec", codec), ("width", stream.get("width")), ("height", stream.get("height"))) if v}
            )
        elif stream.get("codec_type") == "audio":
            audio = meta.setdefault("audio", {})
            audio.setdefault("codec", codec)
            if stream.get("channels"):
                audio.setdefault("channels", int(stream["channels"]))
            if stream.get("sample_rate"):
                audio.setdefault("sample_rate", int(stream["sample_rate"]))
    tags = {k.lower(): v for k, v in (fmt.get("tags") or {}).items()}
    for key in TAG_KEYS:
        if tags.get(key):
            meta.setdefault("tags", {}).setdefault(key, str(tags[key])[:300])
    if tags.get("creation_time"):
        meta.setdefault("created", str(tags["creation_time"]))


DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?(Z|[+-]\d{2}:?\d{2})?")


def parse_date(value: str) -> datetime | None:
    """A tag date with at least a day in it; a bare year ("2019") says too little to date a memory."""
    match = DATE_RE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        when = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
    except ValueError:
        return None
    if zone == "Z":
        when = when.replace(tzinfo=timezone.utc)
    elif zone:
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        when = when.replace(tzinfo=timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))))
    return when


def _recording_date(meta: dict) -> datetime | None:
    for value in ((meta.get("tags") or {}).get("date"), meta.get("created")):
        if value and (when := parse_date(str(value))):
            return when
    return None
