"""Template helpers: safe Markdown for answers, importance colours, the status sidebar."""

from __future__ import annotations

import re

import markdown as markdown_lib
import nh3
from django import template
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from ..models import Memory
from ..embeddings import status as embeddings_status
from ..services.status import engine_status, space_counts

register = template.Library()

# Model output may not load anything from elsewhere (an <img> would call home) or run script.
ALLOWED_TAGS = (nh3.ALLOWED_TAGS - {"img"}) | {"pre", "code"}
CITATION_IN_HTML = re.compile(r"\[Memory\s+(\d+)\]", re.IGNORECASE)


@register.filter
def markdown_safe(text: str) -> str:
    """Markdown to HTML, sanitised by nh3, with each [Memory N] a link that reveals the card."""
    html = markdown_lib.markdown(text or "", extensions=["sane_lists", "fenced_code"], output_format="html")
    clean = nh3.clean(html, tags=ALLOWED_TAGS, link_rel="noopener noreferrer nofollow")
    # After sanitising, so these attributes are ours: N is digits, the URLs are reversed.
    return mark_safe(CITATION_IN_HTML.sub(_citation_link, clean))


def _citation_link(match) -> str:
    pk = int(match.group(1))
    return format_html(
        '<a class="cite" href="{}" hx-get="{}?cited=1" hx-target="#citation-reveal" hx-swap="innerHTML" '
        'data-memory="{}">[Memory {}]</a>',
        reverse("memories:detail", args=[pk]), reverse("memories:card", args=[pk]), pk, pk,
    )


@register.filter
def importance_level(value) -> str:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "low"
    return "high" if value >= 0.7 else "mid" if value >= 0.4 else "low"


def provider_info() -> dict:
    """Which engine answers, said plainly; a misconfiguration is shown, not raised."""
    engine = engine_status()
    return {
        "name": engine.name, "label": engine.label, "error": engine.error, "offline": not engine.is_language_model and not engine.error,
        "down": engine.down, "last_error": engine.last_error,
    }


def status_context(user) -> dict:
    from ..schedule import next_consolidation_run
    from ..services.inbox import watcher_last_seen

    return {
        "counts": space_counts(owner=user),
        "provider": provider_info(),
        "embeddings": embeddings_status(),
        "every_minutes": settings.MEMORY_CONSOLIDATE_EVERY_MINUTES,
        "next_run": next_consolidation_run(),
        "watcher_seen": watcher_last_seen(),
    }


@register.simple_tag
def first_run() -> bool:
    from ..services.setup import needs_first_user

    return needs_first_user()


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
            return timezone.localtime(when).strftime("%Y-%m-%d %H:%M") if timezone.is_aware(when) else when.strftime("%Y-%m-%d %H:%M")
    return str(value)


@register.filter
def event_changes(event) -> list[tuple[str, str, str]]:
    """An event's before and after as (field, was, now) rows, fields in a stable order."""
    before, after = event.before or {}, event.after or {}
    fields = list(dict.fromkeys([*before, *after]))
    return [(name.replace("_", " "), _shown(before.get(name)) if name in before else "", _shown(after.get(name)) if name in after else "")
            for name in fields]


@register.simple_tag
def review_count(user) -> int:
    """Memories of this owner waiting for review (for the nav)."""
    if not getattr(user, "is_authenticated", False):
        return 0
    return Memory.objects.filter(owner=user, status=Memory.Status.REVIEW).count()


@register.simple_tag
def review_mode() -> bool:
    return bool(settings.MEMORY_REVIEW_MODE)
