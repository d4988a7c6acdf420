"""ChatGPT and Claude data exports, read as a stream (history.py says what the readers share)."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import BinaryIO

import ijson

from .history import MAX_TURN_CHARS, DamagedExport, iso_time
from .vaults import NOTE_SUFFIXES

ASSISTANT_NAMES = {"chatgpt": "ChatGPT", "claude": "Claude"}
# A conversations.json larger than this (unpacked, as the zip declares it) is refused: it is
# read twice, and a zip bomb declares far more than any export holds.
MAX_MEMBER_BYTES = 2 * 1024**3


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
        return iso_time(value)
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
    conversation = Conversation("claude", conv_id, title, iso_time(raw.get("created_at")))
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
                occurred_at=iso_time(message.get("created_at")) or conversation.created_at,
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
