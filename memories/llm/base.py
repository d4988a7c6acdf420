"""The provider boundary: the only interface through which the app talks to a model.

Providers take and return the plain dataclasses below, never model instances, so the
flows in services can be tested with any provider and recall can be measured without one.
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..modelapi import ProviderError as ProviderError  # the boundary's error, shared with the embeddings


@dataclass(frozen=True)
class FilePart:
    """A file handed to the model. Small files travel as bytes; big ones by path."""

    name: str
    mime_type: str
    path: Path
    size: int
    #: How many leading characters of the memory's text are the reader's notes about the
    #: file (its type, size, what would read it), not the file's own words.
    notes_chars: int = 0

    def read_bytes(self) -> bytes:
        return self.path.read_bytes()


@dataclass
class Extraction:
    summary: str
    entities: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    importance: float = 0.5
    occurred_at: datetime | None = None


@dataclass(frozen=True)
class MemoryNote:
    """What a model sees of one memory, in consolidation and in the answer context."""

    id: int
    summary: str
    text: str = ""
    source: str = ""
    entities: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    importance: float = 0.5
    occurred_at: datetime | None = None
    #: Set when a newer memory changed this fact: true until then, no longer current.
    valid_until: datetime | None = None
    outdated_by: int | None = None
    #: Who said it when it is not the person: an assistant's reply in an imported
    #: conversation ("ChatGPT"). Context for the person's words, never their own fact.
    said_by: str = ""
    #: Set on an update check's candidates (services/updates.py): how much nearer in
    #: meaning this memory is to the new one than the owner's memories are on average, in
    #: standard deviations of their closeness to it. None when it could not be measured.
    nearness: float | None = None

    @property
    def past_marker(self) -> str:
        """ "until 2025-06" for a superseded fact (what the model and the offline answer say)."""
        return f"until {self.valid_until:%Y-%m}" if self.valid_until else ""


@dataclass(frozen=True)
class UpdateJudgement:
    """The new memory changes the fact the old one states (the old one is superseded)."""

    old_id: int
    reason: str = ""


@dataclass(frozen=True)
class InsightNote:
    id: int
    summary: str
    insight: str
    source_ids: tuple[int, ...] = ()


@dataclass
class Connection:
    from_id: int
    to_id: int
    relationship: str


@dataclass
class ConsolidationResult:
    """An insight over a group. An empty insight: the group shares nothing, and no insight
    is written. `about`: the ids of the memories the insight is about, when not the whole
    group (the rest were read and share nothing with it)."""

    summary: str
    insight: str
    connections: list[Connection] = field(default_factory=list)
    about: tuple[int, ...] | None = None


@dataclass
class AnswerContext:
    """Everything the model may read to answer: chosen by recall, never by the model."""

    memories: list[MemoryNote] = field(default_factory=list)
    consolidations: list[InsightNote] = field(default_factory=list)
    #: Memories recall chose because they happened in the period the question names
    #: ("last week"), or because they held through it (said before, replaced after): they
    #: answer it even when they share no word with it.
    date_matches: tuple[int, ...] = ()
    #: (older, newer) memories recall read as one fact said again later, with no update
    #: marked (recall/newer.py): for a question about now the newer one is quoted first.
    restated: tuple[tuple[int, int], ...] = ()
    #: (older, newer, what changed) for each update marked between two of its memories,
    #: as the update check said it ("employer: Brightline -> Veloxa"): the slot the two
    #: hold, in words a question asking for it is near ("Where do I work?").
    changes: tuple[tuple[int, int, str], ...] = ()

    def render(self) -> str:
        """The context as the prompt text every language-model provider sends."""
        lines = []
        for note in self.memories:
            when = note.occurred_at.strftime("%Y-%m-%d %H:%M") if note.occurred_at else "unknown"
            # A superseded fact says so before its summary: the model gives the current value.
            past = f"; SUPERSEDED by Memory {note.outdated_by}: no longer current" if note.valid_until else ""
            said = f"; said by {note.said_by}, an assistant: not the person's own words" if note.said_by else ""
            lines.append(
                f"[Memory {note.id}] (source: {note.source or 'unknown'}; when: {when}; importance: {note.importance:.2f}{past}{said})\n"
                f"Summary: {note.past_marker + ': ' if note.valid_until else ''}{note.summary}\n"
                + (f"Text: {note.text}\n" if note.text and note.text != note.summary else "")
                + (f"Entities: {', '.join(note.entities)}\n" if note.entities else "")
                + (f"Topics: {', '.join(note.topics)}\n" if note.topics else "")
            )
        for insight in self.consolidations:
            sources = ", ".join(f"Memory {i}" for i in insight.source_ids)
            lines.append(f"[Insight {insight.id}] (from {sources})\nSummary: {insight.summary}\nInsight: {insight.insight}\n")
        return "\n".join(lines) if lines else "(no memories)"


CITATION_RE = re.compile(r"\[Memory\s+(\d+)\]", re.IGNORECASE)


def cited_ids(answer: str) -> list[int]:
    """Memory ids cited as [Memory N], in order of first citation."""
    seen: dict[int, None] = {}
    for match in CITATION_RE.finditer(answer):
        seen.setdefault(int(match.group(1)), None)
    return list(seen)


class Provider(abc.ABC):
    """A model (or the offline engine) behind the three roles of the design."""

    name: str = ""
    #: False for the offline engine, which extracts and quotes but does not write.
    is_language_model: bool = True

    @property
    def model(self) -> str:
        return ""

    @property
    def label(self) -> str:
        return f"{self.name} ({self.model})" if self.model else self.name

    @abc.abstractmethod
    def extract(self, *, text: str, files: list[FilePart], source: str) -> Extraction:
        """Turn one input (text and/or files) into a structured memory."""

    @abc.abstractmethod
    def consolidate(self, memories: list[MemoryNote]) -> ConsolidationResult:
        """Find connections between memories and one cross-cutting insight."""

    @abc.abstractmethod
    def answer(self, *, question: str, context: AnswerContext) -> str:
        """Answer from the context only, citing [Memory N]."""

    def judge_updates(self, *, new: MemoryNote, candidates: list[MemoryNote]) -> list[UpdateJudgement]:
        """Which older memories (of `candidates`) state a fact the new memory changes: the
        same subject and attribute with a different value, not an addition. One call for
        all the candidates of one new memory. The default judges nothing."""
        return []

    def supports_files(self, mime_type: str) -> bool:
        """Whether this provider can read a file of this type itself."""
        return False

    def close(self) -> None:
        """Release clients and connections."""
