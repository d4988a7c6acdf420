"""Markdown and Obsidian notes: a folder or a zipped vault, each note as one or more parts
(history.py says what the readers share)."""

from __future__ import annotations

import posixpath
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import BinaryIO

import yaml

from .history import MAX_TURN_CHARS, DamagedExport, iso_time
from .text import decode_text

# A note longer than this is split at its headings, each part its own memory.
LONG_NOTE_CHARS = 4000
# A note file larger than this is left out (a pasted log, a data dump, not a note).
MAX_NOTE_BYTES = 2 * 1024 * 1024
NOTE_SUFFIXES = (".md", ".markdown")
# Folders of a vault that hold no notes of the person's: settings, the trash, version control.
SKIPPED_DIRS = {".obsidian", ".trash", ".git", ".github", "node_modules", "__MACOSX"}


@dataclass(frozen=True)
class NotePart:
    path: str  # inside the vault, with forward slashes
    part: int  # 1-based; a note that is not split has one part
    parts: int
    title: str
    section: str  # the heading the part starts under, or ""
    text: str
    occurred_at: datetime | None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # (note named, heading or "") of its [[wikilinks]], as written


@dataclass
class VaultSkips:
    skipped: Counter = field(default_factory=Counter)


_FRONT_END = re.compile(r"^(?:---|\.\.\.)\s*$", re.M)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S.*?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# [[Note]], [[Note|shown]], [[Note#Heading]], ![[picture.png]]
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]|#^\n]*)(?:[#^]([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")


def note_key(name: str) -> str:
    """How a wikilink names a note: its path or file name without .md, any case."""
    name = name.strip().replace("\\", "/").lower()
    for suffix in NOTE_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.strip("/")


def vault_files(root: Path, skips: VaultSkips) -> Iterator[tuple[str, callable, datetime | None]]:
    """(path in the vault, read, modified) of each note file under a folder, in path order."""
    root = root.resolve()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part in SKIPPED_DIRS or part.startswith(".") for part in relative.parts[:-1]):
            continue
        if not path.is_file() or path.is_symlink():
            continue
        if path.suffix.lower() not in NOTE_SUFFIXES:
            if not path.name.startswith("."):
                skips.skipped["not a Markdown note"] += 1
            continue
        if path.stat().st_size > MAX_NOTE_BYTES:
            skips.skipped["note larger than 2 MB"] += 1
            continue
        modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        yield relative.as_posix(), path.read_bytes, modified


@contextmanager
def zipped_vault(fileobj: BinaryIO, name: str, skips: VaultSkips) -> Iterator[Iterator]:
    """The note files of a zipped vault, as vault_files gives them."""
    fileobj.seek(0)
    if not zipfile.is_zipfile(fileobj):
        raise DamagedExport(f"{name} is not a zip file: upload a notes folder as a .zip (or give the folder to the command).")
    fileobj.seek(0)
    try:
        zf = zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DamagedExport(f"{name} is not a readable zip file ({exc}).") from None

    def files():
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            path = posixpath.normpath(info.filename.replace("\\", "/")).lstrip("/")
            parts = PurePosixPath(path).parts
            if info.is_dir() or not parts or ".." in parts:
                continue
            if any(part in SKIPPED_DIRS or part.startswith(".") for part in parts[:-1]):
                continue
            if not path.lower().endswith(NOTE_SUFFIXES):
                if not parts[-1].startswith("."):
                    skips.skipped["not a Markdown note"] += 1
                continue
            if info.file_size > MAX_NOTE_BYTES:
                skips.skipped["note larger than 2 MB"] += 1
                continue

            def read(info=info):
                try:
                    return zf.read(info)
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
                    raise DamagedExport(f"{info.filename} in {name} is damaged: {exc}") from None

            try:
                modified = datetime(*info.date_time)
            except ValueError:
                modified = None
            yield path, read, modified

    with zf:
        yield files()


def read_note(path: str, data: bytes, modified: datetime | None, skips: VaultSkips) -> list[NotePart]:
    """One note as its parts: the whole note, or its sections when it is long."""
    text = decode_text(data)
    meta, body = _front_matter(text, skips)
    given = meta.get("title")
    title = (given if isinstance(given, str) and given.strip() else PurePosixPath(path).stem).strip()[:300]
    when = iso_time(meta.get("date") or meta.get("created")) or modified
    tags = _names(meta.get("tags") or meta.get("tag"))
    aliases = _names(meta.get("aliases") or meta.get("alias"))
    if not body.strip():
        skips.skipped["empty note"] += 1
        return []
    sections = split_note(body)
    parts = []
    for number, (section, chunk) in enumerate(sections, 1):
        links = tuple(
            dict.fromkeys((m.group(2).strip(), (m.group(3) or "").strip()) for m in _WIKILINK.finditer(chunk) if _is_note_link(m))
        )
        plain = _WIKILINK.sub(_link_text, chunk).strip()
        if not plain:
            continue
        first_line = plain.split("\n", 1)[0].lstrip("# ").strip()
        if first_line.lower() != title.lower():
            # The title is the note's name: what it is about, often in no sentence of it.
            heading = f"{title} › {section}" if section and section.lower() != first_line.lower() else title
            plain = f"{heading}\n\n{plain}"
        parts.append(
            NotePart(
                path=path,
                part=number,
                parts=len(sections),
                title=title,
                section=section,
                text=plain[:MAX_TURN_CHARS],
                occurred_at=when,
                tags=tags,
                aliases=aliases,
                links=links,
            )
        )
    return parts


def _is_note_link(m: re.Match) -> bool:
    """[[Note]] and [[Note.md]] name notes; [[picture.png]] and ![[talk.pdf]] name files."""
    target = m.group(2).strip()
    suffix = PurePosixPath(target).suffix.lower()
    return bool(target) and (suffix in NOTE_SUFFIXES or not re.fullmatch(r"\.[a-z0-9]{1,5}", suffix))


def _link_text(m: re.Match) -> str:
    if m.group(4):
        return m.group(4).strip()
    target = m.group(2).strip()
    return f"{target} › {m.group(3).strip()}" if m.group(3) and target else target or (m.group(3) or "").strip()


def _front_matter(text: str, skips: VaultSkips) -> tuple[dict, str]:
    if not text.startswith("---"):
        return {}, text
    first = text.find("\n")
    if first < 0 or text[:first].strip() != "---":
        return {}, text
    end = _FRONT_END.search(text, first + 1)
    if end is None:
        return {}, text
    raw, body = text[first + 1 : end.start()], text[end.end() :]
    try:
        meta = yaml.safe_load(raw)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):  # a date like 2024-13-45 is a ValueError
        skips.skipped["front matter that could not be read (the note was kept)"] += 1
        return {}, body
    return (meta if isinstance(meta, dict) else {}), body


def _names(value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    if not isinstance(value, list | tuple):
        return ()
    out = (" ".join(str(v).split()).lstrip("#") for v in value if v is not None)
    return tuple(dict.fromkeys(v for v in out if v))[:30]


def split_note(body: str, limit: int = LONG_NOTE_CHARS) -> list[tuple[str, str]]:
    """(heading, text) parts of a note: the whole of it when it is short; else its sections
    (at headings outside code blocks), neighbours merged while they fit, and a section
    still too long cut at blank lines."""
    body = body.strip("\n")
    if len(body) <= limit:
        return [(_first_heading(body), body)]
    sections: list[list[str]] = [[]]
    fenced = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and _HEADING.match(line) and any(s.strip() for s in sections[-1]):
            sections.append([])
        sections[-1].append(line)
    pieces: list[str] = []
    for lines in sections:
        text = "\n".join(lines).strip("\n")
        pieces.extend(_cut(text, limit) if len(text) > limit else [text])
    merged: list[str] = []
    for piece in pieces:
        if merged and len(merged[-1]) + len(piece) + 2 <= limit:
            merged[-1] = f"{merged[-1]}\n\n{piece}"
        else:
            merged.append(piece)
    return [(_first_heading(p), p) for p in merged if p.strip()]


def _cut(text: str, limit: int) -> list[str]:
    out, current = [], ""
    for paragraph in re.split(r"\n\s*\n", text):
        while len(paragraph) > limit:
            out.extend([current] if current else [])
            current = ""
            out.append(paragraph[:limit])
            paragraph = paragraph[limit:]
        if current and len(current) + len(paragraph) + 2 > limit:
            out.append(current)
            current = paragraph
        else:
            current = f"{current}\n\n{paragraph}" if current else paragraph
    return [*out, current] if current else out


def _first_heading(text: str) -> str:
    for line in text.split("\n")[:50]:
        if m := _HEADING.match(line):
            return m.group(2).strip()[:200]
    return ""
