"""Template helpers: safe Markdown for answers, importance colours, history rows. No
database here: what a page shows comes from its view (and base.html's from
context_processors.nav)."""

from __future__ import annotations

import re

import markdown as markdown_lib
import nh3
from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()

# Model output may not load anything from elsewhere (an <img> would call home) or run script.
ALLOWED_TAGS = (nh3.ALLOWED_TAGS - {"img"}) | {"pre", "code"}
CITATION_IN_HTML = re.compile(r"\[Memory\s+(\d+)\]", re.IGNORECASE)


@register.filter
def markdown_safe(text: str) -> str:
    """A model's Markdown as HTML, with each [Memory N] a link that reveals the card.

    Memory text quoted in an answer is text: raw HTML in the answer is not passed through
    by the Markdown (it is escaped, like any other text) (a note holding <b> shows "<b>", as on its card), the result is still
    sanitised by nh3, and citation links are put only into text between tags, never
    inside an attribute (a [Memory N] in a link title must not open a tag of its own)."""
    html = _markdown_without_raw_html().convert(text or "")
    clean = nh3.clean(html, tags=ALLOWED_TAGS, link_rel="noopener noreferrer nofollow")
    return mark_safe(_link_citations(clean))


def _markdown_without_raw_html():
    md = markdown_lib.Markdown(extensions=["sane_lists", "fenced_code"], output_format="html")
    # Python-Markdown passes raw HTML blocks and inline tags through; without these two
    # processors they are ordinary text, escaped on output.
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


@register.filter
def answer_html(result) -> str:
    """The answer of a query: a model's Markdown (markdown_safe), or, from the offline
    engine, which only quotes memories, the quotes as plain text in a list."""
    if getattr(result, "provider_is_language_model", True):
        return markdown_safe(result.answer)
    blocks, items = [], []
    for line in (result.answer or "").splitlines():
        if line.startswith("- "):
            items.append(format_html("<li>{}</li>", line[2:]))
            continue
        if items:
            blocks.append(mark_safe("<ul>" + "".join(items) + "</ul>"))
            items = []
        if line.strip():
            blocks.append(format_html("<p>{}</p>", line))
    if items:
        blocks.append(mark_safe("<ul>" + "".join(items) + "</ul>"))
    return mark_safe(_link_citations("".join(blocks)))


# A tag as nh3 and format_html write it: attribute values in double quotes, with any
# double quote inside escaped, so a ">" can sit inside an attribute but a quote cannot.
TAG_RE = re.compile(r'(<(?:[^>"]|"[^"]*")*>)')
TAG_NAME_RE = re.compile(r"</?\s*([a-zA-Z0-9]+)")


def _link_citations(html: str) -> str:
    out, in_link = [], 0
    for piece in TAG_RE.split(html):
        if piece.startswith("<"):
            name = TAG_NAME_RE.match(piece)
            if name and name.group(1).lower() == "a" and not piece.endswith("/>"):
                in_link = max(0, in_link + (-1 if piece.startswith("</") else 1))
            out.append(piece)
        elif in_link:
            out.append(piece)  # a link inside a link is not a link
        else:
            out.append(CITATION_IN_HTML.sub(_citation_link, piece))
    return "".join(out)


def _citation_link(match) -> str:
    pk = int(match.group(1))
    return format_html(
        '<a class="cite" href="{}" hx-get="{}?cited=1" hx-target="#citation-reveal" hx-swap="innerHTML" '
        'data-memory="{}">[Memory {}]</a>',
        reverse("memories:detail", args=[pk]),
        reverse("memories:card", args=[pk]),
        pk,
        pk,
    )


@register.filter
def importance_level(value) -> str:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "low"
    return "high" if value >= 0.7 else "mid" if value >= 0.4 else "low"


@register.filter
def basename(path: str) -> str:
    """The file name of a path (inbox records keep the full path)."""
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def _shown(value) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    # Events keep datetimes as ISO strings; show them the way the rest of the page does.
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and "T" in value:
        try:
            when = parse_datetime(value)
        except ValueError:
            when = None
        if when is not None:
            return (
                timezone.localtime(when).strftime("%Y-%m-%d %H:%M")
                if timezone.is_aware(when)
                else when.strftime("%Y-%m-%d %H:%M")
            )
    return str(value)


@register.filter
def event_changes(event) -> list[tuple[str, str, str]]:
    """An event's before and after as (field, was, now) rows, fields in a stable order."""
    before, after = event.before or {}, event.after or {}
    fields = list(dict.fromkeys([*before, *after]))
    return [
        (
            name.replace("_", " "),
            _shown(before.get(name)) if name in before else "",
            _shown(after.get(name)) if name in after else "",
        )
        for name in fields
    ]
