"""Server-rendered SVG charts for the timeline and stats pages.

No chart library: a few bars and lines are simple SVG, work without JavaScript, scale with
the page (viewBox), and need nothing from a CDN. Colours come from CSS classes in app.css,
not style attributes, so a strict Content-Security-Policy has nothing to allow. Every mark
carries a <title>, which browsers show on hover and screen readers read.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html as _format_html
from django.utils.html import format_html_join as _format_html_join
from django.utils.safestring import mark_safe

register = template.Library()


def _num(value):
    # Coordinates to one decimal: format_html escapes its arguments to text before formatting.
    return f"{value:.1f}" if isinstance(value, float) else value


def format_html(fmt, *args):
    return _format_html(fmt, *(_num(a) for a in args))


def format_html_join(sep, fmt, rows):
    return _format_html_join(sep, fmt, (tuple(_num(a) for a in row) for row in rows))


WIDTH = 400
PLOT_TOP = 18
LABEL_ROOM = 18


def _nice_max(value: int) -> int:
    if value <= 5:
        return max(value, 1)
    for power in range(0, 12):
        for step in (1, 2, 2.5, 5):
            candidate = int(step * 10**power)
            if candidate >= value:
                return candidate
    return value


def _anchor(x: float) -> str:
    # Labels at the edges grow inwards, so none is cut off by the frame.
    return "start" if x < 25 else "end" if x > WIDTH - 25 else "middle"


def _axis_labels(labels: list[str], xs: list[float], height: int, every: int) -> str:
    return format_html_join(
        "",
        '<text class="axis" x="{}" y="{}" text-anchor="{}">{}</text>',
        ((x, height - 4, _anchor(x), label) for i, (x, label) in enumerate(zip(xs, labels)) if i % every == 0),
    )


def _frame(height: int, top: int, label: str, body: str) -> str:
    # The number at the top is the scale (a dashed line at that height), not a total: it
    # once read "25 calls" over a legend of "calls (22)", and "1 waiting" when none waited.
    return format_html(
        '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{} (scale 0 to {})">'
        '<text class="axis scale" x="2" y="{}">{}</text>'
        '<line class="gridline top" x1="0" x2="{}" y1="{}" y2="{}"></line>'
        '<line class="gridline" x1="0" x2="{}" y1="{}" y2="{}"></line>{}</svg>',
        WIDTH,
        height,
        label,
        top,
        PLOT_TOP - 4,
        top,
        WIDTH,
        PLOT_TOP,
        PLOT_TOP,
        WIDTH,
        height - LABEL_ROOM,
        height - LABEL_ROOM,
        mark_safe(body),
    )


def _empty(text: str) -> str:
    return format_html('<p class="muted empty-chart">{}</p>', text)


NOTHING = "Nothing to show yet."


@register.simple_tag
def bar_chart(points, *, value="count", label="day", height=140, title="", css="bar", date_format="M j", empty=NOTHING):
    """Vertical bars, one per point; points are dicts with `value` and `label` keys. All
    zero is said in words (`empty`): an empty frame with a scale of 1 reads as one."""
    points = list(points)
    if not any(p[value] for p in points):
        return _empty(empty)
    top = _nice_max(max(p[value] for p in points))
    plot = height - LABEL_ROOM - PLOT_TOP
    step = WIDTH / len(points)
    bars, xs, labels = [], [], []
    from django.utils.dateformat import format as date_format_fn

    for i, p in enumerate(points):
        h = plot * p[value] / top
        x = i * step
        shown = date_format_fn(p[label], date_format) if hasattr(p[label], "year") else str(p[label])
        bars.append(
            format_html(
                '<rect class="{}" x="{}" y="{}" width="{}" height="{}"><title>{}: {}</title></rect>',
                css,
                x + step * 0.12,
                PLOT_TOP + plot - h,
                step * 0.76,
                max(h, 0),
                shown,
                p[value],
            )
        )
        xs.append(x + step / 2)
        labels.append(shown)
    every = max(1, -(-len(points) // 6))
    return _frame(height, top, title, "".join(bars) + _axis_labels(labels, xs, height, every))


@register.simple_tag
def line_chart(points, *, series, height=140, title="", date_key="day", date_format="M j", empty=NOTHING):
    """Lines over shared x positions; series is a list of (key, css class, name). All zero
    is said in words (`empty`), as in bar_chart."""
    from django.utils.dateformat import format as date_format_fn

    points = list(points)
    if not any(p[key] for p in points for key, _, _ in series):
        return _empty(empty)
    top = _nice_max(max((p[key] for p in points for key, _, _ in series), default=0))
    plot = height - LABEL_ROOM - PLOT_TOP
    step = WIDTH / max(len(points) - 1, 1)
    xs = [i * step if len(points) > 1 else WIDTH / 2 for i in range(len(points))]
    labels = [date_format_fn(p[date_key], date_format) for p in points]
    body = []
    for key, css, name in series:
        coords = " ".join(f"{x:.1f},{PLOT_TOP + plot - plot * p[key] / top:.1f}" for x, p in zip(xs, points))
        body.append(format_html('<polyline class="line {}" points="{}"><title>{}</title></polyline>', css, coords, name))
        body.append(
            format_html_join(
                "",
                '<circle class="dot {}" cx="{}" cy="{}" r="3"><title>{} {}: {}</title></circle>',
                (
                    (css, x, PLOT_TOP + plot - plot * p[key] / top, name, label, p[key])
                    for x, p, label in zip(xs, points, labels)
                    if p[key]
                ),
            )
        )
    every = max(1, -(-len(points) // 6))
    return _frame(height, top, title, "".join(body) + _axis_labels(labels, xs, height, every))


@register.simple_tag
def hbar_list(rows, *, value="count", label="source", css="bar"):
    """Horizontal bars as an HTML list (long labels wrap; no SVG text measuring)."""
    rows = list(rows)
    if not rows:
        return _empty(NOTHING)
    top = max(r[value] for r in rows) or 1
    items = format_html_join(
        "",
        '<li><span class="hbar-label">{}</span><svg class="hbar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
        '<rect class="{}" x="0" y="0" width="{}" height="10"></rect></svg><span class="hbar-value">{}</span></li>',
        ((r[label], css, 100 * r[value] / top, r[value]) for r in rows),
    )
    return format_html('<ul class="hbars">{}</ul>', items)


TIMELINE_BAR = 26
TIMELINE_FILL = 780
TIMELINE_LANE = 90


@register.simple_tag
def timeline_svg(timeline):
    """Two lanes of bars (happened above, stored below) with consolidation runs marked;
    each bar links to the memory bank filtered to its period."""
    buckets = timeline["buckets"]
    if not buckets:
        return format_html('<p class="muted empty-chart">{}</p>', "No memories yet.")
    zoom = timeline["zoom"]
    formats = {"day": "M j", "week": "M j", "month": "M Y", "year": "Y"}
    from django.utils.dateformat import format as date_format_fn

    # Wide enough to fill the panel when there are few buckets; scrolls sideways when many.
    bar = max(TIMELINE_BAR, TIMELINE_FILL // len(buckets))
    width = len(buckets) * bar + 40  # room for the last period's label
    # Each lane on its own scale: a bulk import can store a year of memories in one day.
    tops = {key: _nice_max(max(b[key] for b in buckets)) for key in ("occurred", "stored")}
    lane = TIMELINE_LANE
    height = 2 * lane + 70
    bank = reverse("memories:list")
    runs_by_bucket: dict = {}
    for run in timeline["runs"]:
        runs_by_bucket.setdefault(run["bucket"], []).append(run)
    parts = []
    for i, b in enumerate(buckets):
        x = i * bar
        period = date_format_fn(b["start"], formats[zoom])
        span = f"{b['start']:%Y-%m-%d} – {b['end']:%Y-%m-%d}" if b["start"] != b["end"] else f"{b['start']:%Y-%m-%d}"
        for key, y0, css, what in (("occurred", 14, "bar occurred", "happened"), ("stored", lane + 30, "bar stored", "stored")):
            n = b[key]
            h = (lane - 4) * n / tops[key]
            query = urlencode({"date_by": key, "date_from": b["start"].isoformat(), "date_to": b["end"].isoformat()})
            parts.append(
                format_html(
                    '<a class="range" href="{}?{}" data-by="{}" data-from="{}" data-to="{}">'
                    '<rect class="hit" x="{}" y="{}" width="{}" height="{}"></rect>'
                    '<rect class="{}" x="{}" y="{}" width="{}" height="{}"></rect>'
                    "<title>{}: {} memor{} {}</title></a>",
                    bank,
                    query,
                    key,
                    b["start"].isoformat(),
                    b["end"].isoformat(),
                    x,
                    y0,
                    bar,
                    lane,
                    css,
                    x + 3,
                    y0 + lane - h,
                    bar - 6,
                    h,
                    span,
                    n,
                    "y" if n == 1 else "ies",
                    what,
                )
            )
        runs = runs_by_bucket.get(b["start"], [])
        if runs:
            made = sum(r["consolidations_made"] for r in runs)
            failed = any(r["error"] for r in runs)
            parts.append(
                format_html(
                    '<g class="run{}"><path d="M{} {} l6 -9 l6 9 z"></path><title>{} consolidation run{}, {} insight{}{}</title></g>',
                    " failed" if failed else "",
                    x + bar / 2 - 6,
                    2 * lane + 42,
                    len(runs),
                    "s" if len(runs) != 1 else "",
                    made,
                    "s" if made != 1 else "",
                    " (one stopped early)" if failed else "",
                )
            )
        every = {"day": 7, "week": 4, "month": 3, "year": 1}[zoom] if len(buckets) > 12 else 1
        if i % every == 0:
            parts.append(format_html('<text class="axis" x="{}" y="{}">{}</text>', x + 2, 2 * lane + 62, period))
    lanes = format_html(
        '<text class="lane" x="2" y="10">When it happened (full bar = {})</text><text class="lane" x="2" y="{}">When it was stored (full bar = {})</text>'
        '<line class="gridline" x1="0" x2="{}" y1="{}" y2="{}"></line><line class="gridline" x1="0" x2="{}" y1="{}" y2="{}"></line>',
        tops["occurred"],
        lane + 26,
        tops["stored"],
        width,
        lane + 14,
        lane + 14,
        width,
        2 * lane + 30,
        2 * lane + 30,
    )
    return format_html(
        '<svg class="timeline-chart" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="Memories over time">{}{}</svg>',
        width,
        height,
        width,
        height,
        lanes,
        mark_safe("".join(parts)),
    )


@register.simple_tag
def trend_chart(weeks, trends, *, title="", height=150):
    """One line per name over the weeks (stats: top topics and entities), with a key."""
    if not trends or not weeks:
        return _empty(NOTHING)
    points = [{"day": week, **{f"t{i}": t["counts"][w] for i, t in enumerate(trends)}} for w, week in enumerate(weeks)]
    series = [(f"t{i}", f"s{i}", t["name"]) for i, t in enumerate(trends)]
    chart = line_chart(points, series=series, height=height, title=title)
    key = format_html_join(
        "", '<li><span class="k s{}"></span>{} ({})</li>', ((i, t["name"], t["total"]) for i, t in enumerate(trends))
    )
    return format_html('{}<ul class="series-key">{}</ul>', chart, key)
