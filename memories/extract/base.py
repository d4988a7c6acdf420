"""What every extractor returns, and the two ways a file is refused."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


class UnsupportedFile(ValueError):
    """The file is refused; the message says why and is safe to show."""


class UnreadableFile(UnsupportedFile):
    """The file is of a supported type but damaged, encrypted or too large to read safely."""


@dataclass
class FileContent:
    mime_type: str
    #: What can be read of the file without a model: its text, led by a sentence saying what it is.
    text: str = ""
    #: JSON-safe facts about the file (size, pages, dimensions, tags, ...); stored on the memory.
    metadata: dict = field(default_factory=dict)
    #: One sentence saying what the file is ("PNG image, 640×480 pixels.").
    description: str = ""
    #: When the content happened, as the file says (EXIF date taken, a recording date).
    #: Naive when the file gives no time zone: it is then the local time where it was made.
    occurred_at: datetime | None = None
    #: True when a multimodal model would learn materially more than this text
    #: (pictures, speech, a scan with no OCR): such a memory is worth re-extracting later.
    needs_model: bool = False
    #: The file's own words within `text` (its body, OCR text, transcript), which `text`
    #: ends with; what comes before is the reader's notes about the file. Engines read
    #: names and themes from the body only, never from those notes.
    body: str = ""

    @property
    def is_text(self) -> bool:
        return bool(self.text)
