"""Text formats: the right encoding, and a sentence about the structure before the content.

For structured files (JSON, CSV, XML, YAML, logs, HTML) the text starts with what the file
is ("CSV table with 120 rows and 3 columns: a, b, c.") so both the offline engine and a
model know its shape before they read its content.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
import zipfile
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from . import safexml
from .base import FileContent, UnreadableFile

# Read at most this much of a text file; the original is kept whole with the memory.
MAX_TEXT_BYTES = 4 * 1024 * 1024
# What a Word document may inflate to before we stop reading it (zip bomb care).
MAX_DOCX_XML_BYTES = 32 * 1024 * 1024
MAX_ZIP_ENTRIES = 10_000


# --- encodings ---------------------------------------------------------------------------


def detect_decode(data: bytes) -> tuple[str, str, int]:
    """(text, encoding, invalid byte sequences replaced). Never raises.

    BOMs first; then UTF-8, kept even with a few bad bytes when the rest is clearly UTF-8;
    then a detector for legacy encodings (cp1251, Shift-JIS, ...); Windows-1252 last."""
    for bom, encoding in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    ):
        if data.startswith(bom):
            body = data[len(bom) if encoding != "utf-8-sig" else 0 :]
            text = body.decode(encoding, errors="replace")
            return text, encoding.removesuffix("-sig"), text.count("\ufffd")
    if _utf16_guess := _utf16_order(data):
        text = data.decode(_utf16_guess, errors="replace")
        return text, _utf16_guess, text.count("\ufffd")
    try:
        return data.decode("utf-8"), "utf-8", 0
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - data.count("\xef\xbf\xbd".encode("latin-1"))
    good_multibyte = sum(1 for ch in text if ord(ch) > 127 and ch != "\ufffd")
    # Mostly valid UTF-8 with a stray bad byte: keep UTF-8 rather than garble every accent.
    if good_multibyte and good_multibyte * 2 >= bad:
        return text, "utf-8", bad
    legacy = _detect_legacy(data)
    if legacy:
        try:
            return data.decode(legacy), legacy, 0
        except (UnicodeDecodeError, LookupError):
            pass
    text = data.decode("cp1252", errors="replace")
    return text, "cp1252", text.count("\ufffd")


def _utf16_order(data: bytes) -> str | None:
    sample = data[:1024]
    if len(sample) < 8 or len(sample) % 2:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > len(odd) * 0.8 and even.count(0) < len(even) * 0.1:
        return "utf-16-le"
    if even.count(0) > len(even) * 0.8 and odd.count(0) < len(odd) * 0.1:
        return "utf-16-be"
    return None


def _detect_legacy(data: bytes) -> str | None:
    """A detector's guess for non-UTF-8 text, or None for "Windows-1252".

    Detectors cannot tell the Latin code pages apart on short text (they call French
    cp1250), so a guess that decodes to Latin script anyway yields to Windows-1252, by far
    the most common of them; the guess is kept for other scripts (Cyrillic, Greek, CJK...)."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # optional: Windows-1252 is the fallback
        return None
    best = from_bytes(data[:200_000]).best()
    if best is None:
        return None
    decoded = str(best)
    if all(ord(ch) < 128 or _latin(ch) for ch in decoded):
        return None
    return best.encoding


def _latin(ch: str) -> bool:
    name = unicodedata.name(ch, "")
    return name.startswith("LATIN") or unicodedata.category(ch)[0] in "PSZN"


def clean(text: str) -> str:
    """Control characters other than whitespace are dropped; line ends become \\n."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(ch for ch in text if ch >= " " or ch in "\n\t")


def decode_text(data: bytes) -> str:
    return clean(detect_decode(data)[0])


def _trim_partial_utf8(data: bytes) -> bytes:
    """Cutting a file at a byte count can split a UTF-8 character; drop the broken tail."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: keep looking for the lead byte
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data[:-back] if need > back else data
        return data
    return data


def read_limited(path: Path, limit: int = MAX_TEXT_BYTES) -> tuple[bytes, bool]:
    """The first `limit` bytes and whether the file is longer."""
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    return data[:limit], len(data) > limit


# --- formats -----------------------------------------------------------------------------


def read_text(path: Path, ext: str, mime: str) -> FileContent:
    data, truncated = read_limited(path)
    if truncated:
        data = _trim_partial_utf8(data)
    raw, encoding, invalid = detect_decode(data)
    text = clean(raw)
    meta = {
        "encoding": encoding,
        "lines": text.count("\n") + (1 if text and not text.endswith("\n") else 0),
        "words": len(text.split()),
    }
    if invalid:
        meta["invalid_bytes_replaced"] = invalid
    if truncated:
        meta["truncated_at_bytes"] = MAX_TEXT_BYTES
    describe = DESCRIBERS.get(ext)
    description, body, extra = describe(text, truncated) if describe else ("", text, {})
    meta.update(extra)
    if not text.strip():
        description = description or "An empty text file (only whitespace)."
    if truncated:
        description = (
            description + " " if description else ""
        ) + f"Only the first {MAX_TEXT_BYTES // (1024 * 1024)} MB were read."
    full = f"{description}\n\n{body}" if description and body.strip() else (description or body)
    return FileContent(
        mime_type=mime,
        text=full.strip(),
        metadata=meta,
        description=description or _plain_description(ext, meta),
        body=body.strip(),
    )


def _plain_description(ext: str, meta: dict) -> str:
    kind = {".md": "Markdown document", ".log": "Log file"}.get(ext, "Text file")
    return f"{kind}, {_plural(meta['lines'], 'line')}, {_plural(meta['words'], 'word')}."


def _names(items, limit: int = 12) -> str:
    items = [str(i) for i in items]
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def describe_json(text: str, truncated: bool):
    if truncated:
        return "JSON document (too large to parse whole; the beginning is shown).", text, {}
    try:
        value = json.loads(text)
    except RecursionError:
        return "JSON document nested too deeply to analyse.", text, {"valid": False}
    except ValueError as exc:
        return f"A .json file that is not valid JSON ({exc}).", text, {"valid": False}
    return f"JSON document: {_shape(value)}.", text, {"valid": True, "json_type": type(value).__name__}


def _shape(value, depth: int = 0) -> str:
    if isinstance(value, dict):
        if not value:
            return "an empty object"
        keys = _names(list(value), 15)
        return f"an object with {_plural(len(value), 'key')}: {keys}"
    if isinstance(value, list):
        if not value:
            return "an empty list"
        inner = f" of {_shape(value[0], depth + 1)}" if depth < 1 and isinstance(value[0], (dict, list)) else ""
        kinds = Counter(type(v).__name__ for v in value)
        if not inner:
            inner = " (" + ", ".join(f"{n} {_json_kind(k)}" for k, n in kinds.most_common(3)) + ")"
        return f"a list of {_plural(len(value), 'item')}{inner}"
    return f"a single {_json_kind(type(value).__name__)}"


def _json_kind(name: str) -> str:
    return {
        "str": "string",
        "int": "number",
        "float": "number",
        "bool": "boolean",
        "NoneType": "null",
        "dict": "object",
        "list": "list",
    }.get(name, name)


SNIFF_LINES = 20
SNIFF_CHARS = 2048


def describe_csv(text: str, truncated: bool):
    # csv.Sniffer's quote detection is quadratic in its sample (64 KB of ',"' took 33 s):
    # the dialect shows in the first lines, so it sees at most SNIFF_LINES lines and SNIFF_CHARS.
    sample = "\n".join(text[:SNIFF_CHARS].splitlines()[:SNIFF_LINES])
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = list(csv.reader(io.StringIO(text), dialect))
    except csv.Error as exc:
        return f"A .csv file that could not be read as CSV ({exc}).", text, {"valid": False}
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        return "An empty CSV file.", text, {"rows": 0, "columns": []}
    header = [c.strip() for c in rows[0]]
    try:
        has_header = csv.Sniffer().has_header(sample)
    except csv.Error:
        has_header = True
    if not has_header and all(not _is_number(c) for c in header):
        has_header = True  # the sniffer is unsure on all-text tables; a first row of labels is the norm
    data_rows = len(rows) - 1 if has_header else len(rows)
    columns = header if has_header else [f"column {i + 1}" for i in range(len(header))]
    more = " at least" if truncated else ""
    description = f"CSV table with{more} {_plural(data_rows, 'row')} and {_plural(len(columns), 'column')}: {_names(columns)}."
    # The header row is the table's layout (its column names are in the description), not its content.
    body = text.lstrip("\r\n").split("\n", 1)[1] if has_header and "\n" in text.lstrip("\r\n") else text
    return description, body, {"rows": data_rows, "columns": columns[:100], "delimiter": dialect.delimiter}


def _is_number(cell: str) -> bool:
    try:
        float(cell.replace(",", ""))
        return True
    except ValueError:
        return False


def describe_xml(text: str, truncated: bool):
    if truncated:
        return "XML document (too large to parse whole; the beginning is shown).", text, {}
    try:
        root = safexml.parse(text.encode("utf-8"))
    except safexml.XMLRefused as exc:
        return f"XML document whose structure was not read: {exc}.", text, {"valid": False, "refused": str(exc)}
    tags = Counter(safexml.local(el.tag) for el in root.iter())
    children = Counter(safexml.local(el.tag) for el in root)
    inner = ", ".join(f"{n} <{t}>" for t, n in children.most_common(5))
    description = f"XML document with root <{safexml.local(root.tag)}> and {_plural(sum(tags.values()), 'element')}" + (
        f"; it holds {inner}." if inner else "."
    )
    texts = [" ".join(t.split()) for t in root.itertext() if t.strip()]
    return description, "\n".join(texts) or text, {"valid": True, "root": safexml.local(root.tag), "elements": sum(tags.values())}


YAML_KEY_RE = re.compile(r"^([A-Za-z_][\w .-]*?|\"[^\"]+\"|'[^']+'):(?:\s|$)")


def describe_yaml(text: str, truncated: bool):
    # No YAML library: top-level keys and list items are visible from indentation alone,
    # which is all the summary needs; the full content follows as text.
    documents = max(1, sum(1 for line in text.splitlines() if line.strip() == "---"))
    keys, items = [], 0
    for line in text.splitlines():
        if not line or line[0] in " \t#":
            continue
        if line.startswith("- "):
            items += 1
        elif m := YAML_KEY_RE.match(line):
            keys.append(m.group(1).strip("\"'"))
    if keys:
        shape = f"a mapping with {_plural(len(keys), 'top-level key')}: {_names(keys)}"
    elif items:
        shape = f"a list of {_plural(items, 'item')}"
    else:
        shape = "a single value"
    docs = f"{documents} documents; the first is " if documents > 1 else ""
    return f"YAML document: {docs}{shape}.", text, {"top_level_keys": keys[:100], "documents": documents}


LOG_LEVEL_RE = re.compile(r"\b(CRITICAL|FATAL|ERROR|WARN(?:ING)?|INFO|DEBUG|TRACE)\b")
LOG_TIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?")


def describe_log(text: str, truncated: bool):
    lines = text.splitlines()
    levels = Counter(
        m.group(1).replace("WARNING", "WARN").replace("FATAL", "CRITICAL") for line in lines if (m := LOG_LEVEL_RE.search(line))
    )
    times = [m.group(0) for line in lines if (m := LOG_TIME_RE.search(line))]
    parts = [f"Log file with {_plural(len(lines), 'line')}"]
    if times:
        parts.append(f"from {times[0]} to {times[-1]}")
    description = " ".join(parts)
    if levels:
        description += "; " + ", ".join(f"{n} {lvl}" for lvl, n in levels.most_common())
    return (
        description + ".",
        text,
        {"levels": dict(levels), **({"first_time": times[0], "last_time": times[-1]} if times else {})},
    )


def describe_markdown(text: str, truncated: bool):
    headings = [line.lstrip("#").strip() for line in text.splitlines() if re.match(r"#{1,6}\s", line)]
    return "", text, {"headings": headings[:50]}


class _HTMLText(HTMLParser):
    # Navigation, forms and page furniture are not what a page says.
    SKIP = {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "head",
        "nav",
        "footer",
        "aside",
        "form",
        "button",
        "menu",
        "select",
    }
    BLOCK = {
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "table",
        "ul",
        "ol",
        "hr",
        "title",
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.headings: list[str] = []
        self.description = ""
        self.links = 0
        self._skip = 0
        self._in_title = False
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skip += 1
        if tag == "meta" and (attrs.get("name") or "").lower() == "description":
            self.description = attrs.get("content") or ""
        if tag == "a" and attrs.get("href"):
            self.links += 1
        if tag in {"h1", "h2", "h3"}:
            self._heading = []
        if tag in self.BLOCK:
            self.parts.append("\n\n" if tag not in ("br", "li", "tr") else "\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP and self._skip:
            self._skip -= 1
        if tag in {"h1", "h2", "h3"} and self._heading is not None:
            if heading := " ".join("".join(self._heading).split()):
                self.headings.append(heading)
            self._heading = None
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)
            if self._heading is not None:
                self._heading.append(data)

    def text(self) -> str:
        joined = "".join(self.parts)
        lines = [" ".join(line.split()) for line in joined.split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def describe_html(text: str, truncated: bool):
    parser = _HTMLText()
    parser.feed(text)
    parser.close()
    title = " ".join(parser.title.split())
    body = parser.text()
    description = f"Web page {title!r}" if title else "Web page"
    description += f" with {_plural(len(body.split()), 'word')}."
    if parser.description:
        description += f" {parser.description.strip()}"
    meta = {"title": title, "headings": parser.headings[:50], "links": parser.links}
    return description, body, meta


DESCRIBERS = {
    ".json": describe_json,
    ".csv": describe_csv,
    ".xml": describe_xml,
    ".yaml": describe_yaml,
    ".yml": describe_yaml,
    ".log": describe_log,
    ".md": describe_markdown,
    ".html": describe_html,
    ".htm": describe_html,
}


# --- Word documents ----------------------------------------------------------------------

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def read_docx(path: Path, mime: str) -> FileContent:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_ENTRIES:
                raise UnreadableFile(f"the Word document has {len(infos):,} parts, more than the {MAX_ZIP_ENTRIES:,} allowed")
            body = _zip_member(zf, "word/document.xml")
            core = _zip_member(zf, "docProps/core.xml", required=False)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, RuntimeError, NotImplementedError) as exc:
        raise UnreadableFile(f"the Word document is damaged or encrypted ({exc})") from None
    try:
        root = safexml.parse(body)
    except safexml.XMLRefused as exc:
        raise UnreadableFile(f"the Word document's text could not be read: {exc}") from None
    paragraphs, headings = [], []
    for p in root.iter(W + "p"):
        chunks = []
        for el in p.iter():
            if el.tag == W + "t" and el.text:
                chunks.append(el.text)
            elif el.tag == W + "tab":
                chunks.append("\t")
            elif el.tag in (W + "br", W + "cr"):
                chunks.append("\n")
        line = "".join(chunks).strip()
        if not line:
            continue
        paragraphs.append(line)
        style = p.find(f"{W}pPr/{W}pStyle")
        if style is not None and (style.get(W + "val") or "").lower().startswith(("heading", "title")):
            headings.append(line)
    meta = {"paragraphs": len(paragraphs), "headings": headings[:50], "tables": sum(1 for _ in root.iter(W + "tbl"))}
    meta.update(_core_properties(core))
    words = sum(len(p.split()) for p in paragraphs)
    description = (
        "Word document"
        + (f" {meta['title']!r}" if meta.get("title") else "")
        + (f" by {meta['author']}" if meta.get("author") else "")
    )
    description += f", {_plural(len(paragraphs), 'paragraph')}, {_plural(words, 'word')}."
    text = description + ("\n\n" + "\n\n".join(paragraphs) if paragraphs else " It has no text.")
    meta["words"] = words
    return FileContent(mime_type=mime, text=text, metadata=meta, description=description, body="\n\n".join(paragraphs))


def _zip_member(zf: zipfile.ZipFile, name: str, *, required: bool = True) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        if required:
            raise UnreadableFile(f"the file is a ZIP archive without {name}, so not a Word document") from None
        return b""
    if info.file_size > MAX_DOCX_XML_BYTES:
        raise UnreadableFile(f"{name} inflates to {info.file_size:,} bytes, more than the {MAX_DOCX_XML_BYTES:,} allowed")
    # The declared size can lie; read one byte past the cap to know.
    with zf.open(info) as fh:
        data = fh.read(MAX_DOCX_XML_BYTES + 1)
    if len(data) > MAX_DOCX_XML_BYTES:
        raise UnreadableFile(f"{name} inflates past the {MAX_DOCX_XML_BYTES:,} bytes allowed")
    return data


def _core_properties(data: bytes) -> dict:
    if not data:
        return {}
    try:
        root = safexml.parse(data)
    except safexml.XMLRefused:
        return {}
    out = {}
    for el in root:
        name, value = safexml.local(el.tag), (el.text or "").strip()
        if value and name in ("title", "creator", "created", "modified", "subject"):
            out["author" if name == "creator" else name] = value[:300]
    return out
