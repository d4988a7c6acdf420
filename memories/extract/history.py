"""People's existing history: ChatGPT and Claude data exports, Markdown and Obsidian folders.

Parsing only, no database: each reader yields plain records (a Conversation with its
Turns, a Note part) that services/history_import.py stores. An export is read as a stream,
one conversation at a time (ijson), so a 200 MB export needs the memory of its largest
conversation, not of the file. Anything the reader cannot make sense of raises
DamagedExport saying where; what it understands but leaves out (system and tool messages,
images, branches the person did not keep) is counted in `skipped`, by reason.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path, PurePosixPath
from typing import BinaryIO

import ijson
import yaml

from .text import decode_text

KINDS = ("chatgpt", "claude", "markdown")
ASSISTANT_NAMES = {"chatgpt": "ChatGPT", "claude": "Claude"}

# A note longer than this is split at its headings, each part its own memory.
LONG_NOTE_CHARS = 4000
# A note file larger than this is left out (a pasted log, a data dump, not a note).
MAX_NOTE_BYTES = 2 * 1024 * 1024
# A conversations.json larger than this (unpacked, as the zip declares it) is refused: it is
# read twice, and a zip bomb declares far more than any export holds.
MAX_MEMBER_BYTES = 2 * 1024**3
# One message longer than this is cut: the text limit of a memory (services/ingest.py).
MAX_TURN_CHARS = 1_000_000
NOTE_SUFFIXES = (".md", ".markdown")
# Folders of a vault that hold no notes of the person's: settings, the trash, version control.
SKIPPED_DIRS = {".obsidian", ".trash", ".git", ".github", "node_modules", "__MACOSX"}


class DamagedExport(ValueError):
    """The export cannot be read as what it claims to be; the message says where."""


@dataclass(frozen=True)
class Turn:
    message_id: str
    role: str  # "user" or "assistant"
    text: str
    occurred_at: datetime | None
    position: int  # 1-based, along the kept branch


@dataclass
class Conversation:
    kind: str
    id: str
    title: str
    created_at: datetime | None
    turns: list[Turn] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)


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


# --- reading the file ----------------------------------------------------------------------


class _Counting(io.RawIOBase):
    """A stream that knows how far it has been read: where a broken export broke."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self.offset = 0
        self._head = b""

    def readable(self) -> bool:
        return True

    def peek_start(self) -> bytes:
        """The first non-blank byte (after a byte-order mark), without consuming it."""
        while True:
            chunk = self.stream.read(4096)
            self._head += chunk
            stripped = self._head.removeprefix(b"\xef\xbb\xbf").lstrip()
            if stripped or not chunk:
                return stripped[:1]

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""  # ijson asks for nothing first, to learn whether the stream is bytes
        if self._head:
            data, self._head = self._head, b""
            data = data.removeprefix(b"\xef\xbb\xbf") if self.offset == 0 else data
        else:
            data = self.stream.read(size)
        self.offset += len(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


@contextmanager
def conversation_files(fileobj: BinaryIO, name: str) -> Iterator[list[tuple[str, callable]]]:
    """The conversation lists an export holds, as (name, open) pairs: a .zip as downloaded
    (its conversations.json, or conversations-NNN.json parts) or the .json itself. `open`
    can be called again: the import reads the export twice (check, then store)."""
    if not zipfile.is_zipfile(fileobj):
        fileobj.seek(0)

        def reopen():
            fileobj.seek(0)
            return fileobj

        yield [(PurePosixPath(name).name or "conversations.json", reopen)]
        return
    fileobj.seek(0)
    try:
        zf = zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DamagedExport(f"{name} is not a readable zip file ({exc}).") from None
    with zf:
        members = sorted(
            (i for i in zf.infolist() if re.fullmatch(r"conversations(?:-\d+)?\.json", PurePosixPath(i.filename).name)),
            key=lambda i: i.filename,
        )
        if not members:
            raise DamagedExport(f"{name} holds no conversations.json: is it a ChatGPT or Claude data export?")
        for info in members:
            if info.file_size > MAX_MEMBER_BYTES:
                raise DamagedExport(f"{info.filename} in {name} says it is {info.file_size:,} bytes unpacked; refused.")
        yield [(info.filename, lambda info=info: zf.open(info)) for info in members]


def conversations(kind: str, stream: BinaryIO, label: str) -> Iterator[Conversation]:
    """The conversations of one conversations.json, one at a time. DamagedExport says where
    the file broke (the byte and the last conversation read whole)."""
    reader = {"chatgpt": _chatgpt, "claude": _claude}[kind]
    counted = _Counting(stream)
    index, last = 0, ""
    try:
        start = counted.peek_start()
        if start != b"[":
            raise DamagedExport(f"{label} is not a list of conversations (it starts with {start.decode('latin-1')!r}).")
        for index, raw in enumerate(ijson.items(counted, "item", use_float=True), 1):
            conversation = reader(raw, f"{label}: conversation {index}")
            last = conversation.title or conversation.id
            yield conversation
    except DamagedExport:
        raise
    except (ijson.JSONError, zipfile.BadZipFile, zlib.error, EOFError, OSError, UnicodeDecodeError, ValueError) as exc:
        after = f", after conversation {index} ({last!r})" if index else ", before its first conversation"
        raise DamagedExport(f"{label} is damaged near byte {counted.offset:,}{after}: {exc}") from None


def sniff_kind(fileobj: BinaryIO, name: str) -> str:
    """Which export this is, from its contents: a zip of notes is a vault; otherwise the
    first conversation says (ChatGPT's have a `mapping`, Claude's `chat_messages`)."""
    fileobj.seek(0)
    if zipfile.is_zipfile(fileobj):
        fileobj.seek(0)
        try:
            with zipfile.ZipFile(fileobj) as zf:
                names = [PurePosixPath(i.filename).name for i in zf.infolist()]
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise DamagedExport(f"{name} is not a readable zip file ({exc}).") from None
        if not any(re.fullmatch(r"conversations(?:-\d+)?\.json", n) for n in names):
            if any(n.lower().endswith(NOTE_SUFFIXES) for n in names):
                return "markdown"
    with conversation_files(fileobj, name) as files:
        label, opener = files[0]
        counted = _Counting(opener())
        try:
            if counted.peek_start() != b"[":
                raise DamagedExport(f"{label} is not a list of conversations.")
            first = next(ijson.items(counted, "item", use_float=True), None)
        except (ijson.JSONError, zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
            raise DamagedExport(f"{label} is damaged near byte {counted.offset:,}: {exc}") from None
    if isinstance(first, dict) and "mapping" in first:
        return "chatgpt"
    if isinstance(first, dict) and "chat_messages" in first:
        return "claude"
    if first is None:
        return "chatgpt"  # an empty list: nothing to import, whichever it is
    raise DamagedExport(f"{label} is neither a ChatGPT nor a Claude export (its conversations have no mapping or chat_messages).")


# --- ChatGPT -------------------------------------------------------------------------------

# What ChatGPT stores as a message node but is not something said in the conversation.
_CHATGPT_TEXT_TYPES = {"text", "multimodal_text"}


def _epoch(value) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        return _iso(value)
    return None


def _iso(value) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime.combine(value, time())
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _key(value) -> str | None:
    """A node or message id, as exports write them; anything else is no id."""
    return value if isinstance(value, str) and value else None


def _kept_branch(mapping: dict, current: str | None, where: str) -> list[str]:
    """The node ids from the root to the node the person last had open: ChatGPT keeps every
    edit and regenerated reply as a branch; the one on screen is the one kept."""
    if current not in mapping:
        # No current node: follow the newest child down from the root.
        roots = [key for key, node in mapping.items() if not _key(_dict(node).get("parent"))]
        current = roots[0] if roots else None
        seen: set[str] = set()
        while current is not None and current not in seen:
            seen.add(current)
            children = _dict(mapping.get(current)).get("children")
            children = [c for c in children if _key(c) in mapping] if isinstance(children, list) else []
            if not children:
                break
            current = children[-1]
    path: list[str] = []
    seen = set()
    while current is not None:
        if current in seen:
            raise DamagedExport(f"{where}: its messages form a loop at node {current!r}.")
        seen.add(current)
        node = mapping.get(current)
        if not isinstance(node, dict):
            raise DamagedExport(f"{where}: node {current!r} is missing or not an object.")
        path.append(current)
        current = _key(node.get("parent"))
    return path[::-1]


def _chatgpt(raw, where: str) -> Conversation:
    if not isinstance(raw, dict):
        raise DamagedExport(f"{where} is not an object.")
    mapping = raw.get("mapping")
    conv_id = str(raw.get("conversation_id") or raw.get("id") or "").strip()
    if not isinstance(mapping, dict) or not conv_id:
        raise DamagedExport(f"{where} has no {'mapping' if conv_id else 'id'}: is this a ChatGPT export?")
    title = " ".join(str(raw.get("title") or "").split())[:300]
    conversation = Conversation("chatgpt", conv_id, title, _epoch(raw.get("create_time")))
    where = f"{where} ({title!r})" if title else where
    kept = _kept_branch(mapping, _key(raw.get("current_node")), where)
    on_branch = set(kept)
    for key, node in mapping.items():
        message = (node or {}).get("message") if isinstance(node, dict) else None
        if key not in on_branch and isinstance(message, dict) and _role(message) in ("user", "assistant"):
            conversation.skipped["on a branch that was not kept"] += 1
    for key in kept:
        message = mapping[key].get("message")
        if not isinstance(message, dict):
            continue  # the root placeholder every conversation has
        text, reason = _chatgpt_text(message, conversation.skipped)
        if reason:
            conversation.skipped[reason] += 1
            continue
        conversation.turns.append(
            Turn(
                message_id=str(message.get("id") or key),
                role=_role(message),
                text=text,
                occurred_at=_epoch(message.get("create_time")) or conversation.created_at,
                position=len(conversation.turns) + 1,
            )
        )
    return conversation


def _role(message: dict) -> str:
    author = message.get("author")
    return str((author or {}).get("role") or "") if isinstance(author, dict) else ""


def _chatgpt_text(message: dict, skipped: Counter) -> tuple[str, str]:
    """(text, "") for a message said in the conversation, ("", why not) otherwise."""
    role = _role(message)
    if role == "system":
        return "", "system message"
    if role == "tool":
        return "", "tool output"
    if role not in ("user", "assistant"):
        return "", "message of another author"
    if _dict(message.get("metadata")).get("is_visually_hidden_from_conversation"):
        return "", "hidden context"
    if role == "assistant" and message.get("recipient") not in (None, "all"):
        return "", "call to a tool"
    content = message.get("content")
    if not isinstance(content, dict):
        return "", "empty message"
    kind = str(content.get("content_type") or "text")
    if kind not in _CHATGPT_TEXT_TYPES:
        return "", f"{kind.replace('_', ' ')} (not text)"
    texts = []
    parts = content.get("parts")
    for part in [parts] if isinstance(parts, str) else parts if isinstance(parts, list) else []:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("content_type") == "audio_transcription" and isinstance(part.get("text"), str):
            texts.append(part["text"])  # what was said in a voice conversation
        elif part:
            skipped["image, file or other non-text part"] += 1
    text = _clean("\n\n".join(t for t in texts if t.strip()))
    return (text, "") if text else ("", "empty message")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


def _clean(text: str) -> str:
    """As text.clean (line ends made \\n, control characters dropped), by one regex: its
    loop over every character was a tenth of an import's time."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).strip()
    return text[:MAX_TURN_CHARS]


# --- Claude --------------------------------------------------------------------------------

_CLAUDE_ROOT = "00000000-0000-4000-8000-000000000000"


def _claude(raw, where: str) -> Conversation:
    if not isinstance(raw, dict):
        raise DamagedExport(f"{where} is not an object.")
    messages = raw.get("chat_messages")
    conv_id = str(raw.get("uuid") or "").strip()
    if not isinstance(messages, list) or not conv_id:
        raise DamagedExport(f"{where} has no {'chat_messages' if conv_id else 'uuid'}: is this a Claude export?")
    title = " ".join(str(raw.get("name") or "").split())[:300]
    conversation = Conversation("claude", conv_id, title, _iso(raw.get("created_at")))
    where = f"{where} ({title!r})" if title else where
    if not all(isinstance(m, dict) for m in messages):
        raise DamagedExport(f"{where}: a message is not an object.")
    for message in _claude_kept(messages, conversation.skipped):
        sender = message.get("sender")
        if sender not in ("human", "assistant"):
            conversation.skipped["message of another author"] += 1
            continue
        text = _claude_text(message, conversation.skipped)
        if not text:
            conversation.skipped["empty message"] += 1
            continue
        conversation.turns.append(
            Turn(
                message_id=str(message.get("uuid") or len(conversation.turns) + 1),
                role="user" if sender == "human" else "assistant",
                text=text,
                occurred_at=_iso(message.get("created_at")) or conversation.created_at,
                position=len(conversation.turns) + 1,
            )
        )
    return conversation


def _claude_kept(messages: list[dict], skipped: Counter) -> list[dict]:
    """Messages in order. Exports that name each message's parent can hold the branches of
    an edited or retried message: the kept one is the chain that ends at the last message."""
    by_id = {_key(m.get("uuid")): m for m in messages if _key(m.get("uuid"))}
    if not messages or not all(_key(m.get("parent_message_uuid")) for m in messages):
        return messages
    chain, current, seen = [], messages[-1], set()
    while current is not None and _key(current.get("uuid")) not in seen:
        seen.add(_key(current.get("uuid")))
        chain.append(current)
        parent = _key(current.get("parent_message_uuid"))
        current = by_id.get(parent) if parent != _CLAUDE_ROOT else None
    if len(chain) < len(messages):
        skipped["on a branch that was not kept"] += len(messages) - len(chain)
    return chain[::-1]


def _claude_text(message: dict, skipped: Counter) -> str:
    content = message.get("content")
    if isinstance(content, list) and content:
        texts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            else:
                skipped["image, file or other non-text part"] += 1
        text = "\n\n".join(t for t in texts if t.strip())
    else:
        text = message.get("text") if isinstance(message.get("text"), str) else ""
    for name in ("attachments", "files"):
        if isinstance(message.get(name), list):
            skipped["attachment"] += len(message[name])
    return _clean(text)


# --- Markdown and Obsidian -----------------------------------------------------------------

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
    when = _iso(meta.get("date") or meta.get("created")) or modified
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
