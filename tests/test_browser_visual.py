"""The pictures in a real browser: graph, timeline and stats with a few hundred memories, at
desktop and phone widths. Screenshots go where test_browser.py puts its own."""

import random
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect  # not wait_for_function: it evals in the page, which the CSP forbids
from django.utils import timezone

from memories.models import Memory, ProviderUsage
from memories.services import consolidate_owner, extract_memory, ingest_text

from .test_browser import ARTIFACTS, CHROMIUM, PASSWORD, settle, shot  # noqa: F401  (fixtures below)
from .test_browser import browser  # noqa: F401  the module-scoped Chromium

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make browser)"),
]

PEOPLE = ["Sarah Chen", "Priya Patel", "Tom Becker", "Ana Lima", "Kenji Sato", "Mara Novak"]
PROJECTS = ["Project Falcon", "Acme pricing", "the garden", "the offsite", "Q3 hiring", "the mobile app"]
THINGS = ["launch date", "budget", "design review", "contract", "roadmap", "bug bash", "demo", "retro"]
SOURCES = ["meetings", "notes", "email", "chat", "journal"]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def many_memories(user):
    """Three hundred memories over eighteen months, stored over sixty days, partly consolidated."""
    rng = random.Random(16)
    now = timezone.now()
    made = []
    for i in range(300):
        person, project, thing = rng.choice(PEOPLE), rng.choice(PROJECTS), rng.choice(THINGS)
        verb = rng.choice(["reviewed", "planned", "discussed", "questioned", "approved"])
        text = f"{person} {verb} the {thing} for {project} (item {i}); {rng.choice(['agreed', 'worried', 'decided', 'asked'])} to follow up."
        when = now - timedelta(days=rng.randint(0, 540), hours=rng.randint(0, 23))
        result = ingest_text(owner=user, text=text, source=rng.choice(SOURCES), occurred_at=when.isoformat())
        made.append(extract_memory(result.memory.pk))
    for i, memory in enumerate(made):
        Memory.objects.filter(pk=memory.pk).update(created_at=now - timedelta(days=(300 - i) // 5, hours=1))
    consolidate_owner(owner=user, max_batches=12)
    consolidated = Memory.objects.filter(owner=user, consolidated_at__isnull=False)
    for memory in consolidated:
        Memory.objects.filter(pk=memory.pk).update(consolidated_at=memory.created_at + timedelta(days=2))
    for back in range(20):
        ProviderUsage.objects.update_or_create(
            owner=user,
            day=timezone.localdate() - timedelta(days=back),
            provider="offline",
            defaults={"calls": 5 + back % 7, "failures": back % 3 == 0},
        )
    return made


@pytest.fixture
def open_page(browser, live_server, user):  # noqa: F811
    contexts, errors = [], []

    def make(path, viewport=DESKTOP):
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        context.set_default_timeout(20_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: _console(msg, errors))
        page.goto("/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", PASSWORD)
        page.click("button:has-text('Sign in')")
        page.wait_for_selector("h1")
        page.goto(path)
        return page

    yield make
    for context in contexts:
        context.close()
    settle(live_server)
    assert errors == [], f"JavaScript errors on the page: {errors}"


def main_shot(page, name):
    """The page's main column alone (no sidebar): what docs/using.md shows."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(600)  # cosmetic: Cytoscape sharpens its first, coarse frame just after
    page.locator("main").screenshot(path=str(ARTIFACTS / f"main-{name}.png"))


def _console(msg, errors):
    """Console errors count too (a script or style a CSP refused shows there), but not the
    favicon nobody serves, nor a 4xx the page asked for and shows as a message (a refused file)."""
    if msg.type != "error" or "favicon" in msg.location.get("url", ""):
        return
    if "Failed to load resource" in msg.text and "status of 4" in msg.text:
        return
    errors.append(msg.text)


def _graph_loaded(page):
    expect(page.locator("body")).to_have_attribute("data-graph-nodes", re.compile(r"^[1-9][0-9]*$"))
    return page.evaluate("window.memoryGraph.nodes().length")


def _scroll_to_graph(page):
    """Centre the graph in the window and let two frames pass before aiming the pointer.

    Cytoscape caches where its canvas sits and learns of a scroll only when the scroll
    event fires: a pointer moved in the same frame as the scroll is placed wrongly.
    """
    page.evaluate(
        """() => new Promise((done) => {
            document.getElementById('graph').scrollIntoView({block: 'center'});
            requestAnimationFrame(() => requestAnimationFrame(done));
        })"""
    )


def _click_node(page, selector="[kind = 'memory']"):
    """Click a node Cytoscape drew (real mouse, on the canvas)."""
    _scroll_to_graph(page)
    x, y, memory_id = page.evaluate(
        """(sel) => {
            const cy = window.memoryGraph;
            // The most important node that no other node overlaps: the click must land on it alone.
            const clear = (n) => {
                const a = n.boundingBox();
                return cy.nodes().every((m) => {
                    if (m.same(n)) return true;
                    const b = m.boundingBox();
                    return a.x2 < b.x1 || b.x2 < a.x1 || a.y2 < b.y1 || b.y2 < a.y1;
                });
            };
            const node = cy.nodes(sel).sort((a, b) => b.data('importance') - a.data('importance')).filter(clear)[0];
            cy.center(node);
            const box = cy.container().getBoundingClientRect();
            const p = node.renderedPosition();
            return [box.left + p.x, box.top + p.y, node.data('memory_id')];
        }""",
        selector,
    )
    page.mouse.click(x, y)
    return memory_id


@pytest.mark.parametrize("viewport,name", [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_graph_draws_filters_and_opens_a_card(open_page, many_memories, viewport, name):
    page = open_page("/graph/", viewport)
    count = _graph_loaded(page)
    assert 0 < count <= 200 + 150  # the default limit of memories plus insight hubs
    assert "Showing 200 memories of 300" in page.inner_text("#graph-status")
    assert page.evaluate("window.memoryGraph.nodes(\"[kind = 'insight']\").length") > 0
    # Nothing inline for a Content-Security-Policy to refuse: Cytoscape found our stylesheet
    # and added no <style> element of its own.
    assert page.evaluate("document.querySelectorAll('style').length") == 0
    shot(page, f"graph-{name}")

    memory_id = _click_node(page)
    page.wait_for_selector(f"#graph-card #memory-{memory_id}")
    assert page.is_visible("#graph-expand")
    main_shot(page, f"graph-{name}")
    before = page.evaluate("window.memoryGraph.nodes().length")
    page.click("#graph-focus")
    expect(page.locator("#graph-status")).to_contain_text("Neighbourhood of memory")
    focused = page.evaluate("window.memoryGraph.nodes(\"[kind = 'memory']\").map(n => n.data('memory_id'))")
    assert memory_id in focused and len(focused) <= before
    shot(page, f"graph-{name}-card")

    page.select_option("select[name=source]", "email")
    expect(page.locator("#graph-status")).to_have_text(re.compile(r"^\s*Showing"))
    sources = page.evaluate("window.memoryGraph.nodes(\"[kind = 'memory']\").map(n => n.data('source'))")
    assert sources and set(sources) == {"email"}
    assert "source=email" in page.url
    shot(page, f"graph-{name}-filtered")


def test_graph_shows_relationship_on_hover_and_colours_by_source(open_page, many_memories):
    page = open_page("/graph/?limit=100")
    _graph_loaded(page)
    _scroll_to_graph(page)
    relationship = page.evaluate(
        """() => {
            const cy = window.memoryGraph;
            // An edge whose middle lies clear of every node: hovering there hovers the edge alone.
            const clear = (e) => {
                const p = e.midpoint();
                return cy.nodes().every((n) => {
                    const b = n.boundingBox();
                    return p.x < b.x1 - 4 || p.x > b.x2 + 4 || p.y < b.y1 - 4 || p.y > b.y2 + 4;
                });
            };
            const edge = cy.edges("[kind != 'insight']").filter(clear)[0];
            // Stop the layout moving things and hide every other edge: where edges cross
            // (an insight's edge through this one's middle) the pointer would hover the other.
            cy.autolock(true);
            cy.edges().not(edge).style('display', 'none');
            cy.center(edge);
            window.hoverTarget = edge;
            return edge.data('relationship');
        }"""
    )
    # On a loaded machine the first move can still land before Cytoscape has caught up
    # (its hit test says the edge is there a moment later): aim at the same edge again.
    tip = page.locator("#graph-tip:not([hidden])")
    for _ in range(6):
        x, y = page.evaluate(
            """() => {
                const box = window.memoryGraph.container().getBoundingClientRect();
                const p = window.hoverTarget.renderedMidpoint();
                return [box.left + p.x, box.top + p.y];
            }"""
        )
        page.mouse.move(x, y)
        try:
            tip.wait_for(timeout=3000)
            break
        except Exception:
            page.mouse.move(0, 0)
    tip.wait_for()
    assert page.inner_text("#graph-tip") == relationship
    page.select_option("select[name=color]", "source")
    legend = page.inner_text("#graph-legend")
    assert any(src in legend for src in SOURCES)


@pytest.mark.parametrize("viewport,name", [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_timeline_zooms_and_a_bar_opens_the_bank_filtered(open_page, many_memories, viewport, name):
    page = open_page("/timeline/", viewport)
    page.wait_for_selector("svg.timeline-chart")
    assert page.locator("svg.timeline-chart .run").count() >= 1
    shot(page, f"timeline-{name}")
    main_shot(page, f"timeline-{name}")
    page.click(".zooms >> text=Week")
    page.wait_for_url("**zoom=week**")
    bars = page.locator("svg.timeline-chart a.range[data-by=occurred]")
    assert bars.count() > 20
    # The newest week that holds memories: click it, the bank opens filtered to that week.
    target = page.evaluate(
        """() => Array.from(document.querySelectorAll('svg.timeline-chart a.range[data-by=occurred]'))
                 .filter(a => a.querySelector('title').textContent.match(/: [1-9]/)).map(a => a.dataset.from).pop()"""
    )
    page.locator(f"svg.timeline-chart a.range[data-by=occurred][data-from='{target}'] rect.hit").click()
    page.wait_for_selector("h1:has-text('Memory bank')")
    query = parse_qs(urlparse(page.url).query)
    assert query["date_by"] == ["occurred"] and query["date_from"] == [target]
    shown = page.locator("#results article.card").count()
    assert shown > 0
    assert page.input_value("input[name=date_from]") == target
    shot(page, f"timeline-{name}-bank")


def test_timeline_drag_opens_a_longer_range(open_page, many_memories):
    page = open_page("/timeline/?zoom=month")
    bars = page.locator("svg.timeline-chart a.range[data-by=stored] rect.hit")
    last, before = bars.nth(bars.count() - 1), bars.nth(bars.count() - 3)
    a, b = before.bounding_box(), last.bounding_box()
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=5)
    page.mouse.up()
    page.wait_for_selector("h1:has-text('Memory bank')")
    query = parse_qs(urlparse(page.url).query)
    assert query["date_by"] == ["stored"] and query["date_from"][0] < query["date_to"][0]
    assert page.locator("#results article.card").count() > 0


@pytest.mark.parametrize("viewport,name", [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_stats_show_their_charts(open_page, many_memories, viewport, name):
    page = open_page("/stats/", viewport)
    for section in ("stored", "backlog", "status", "sources", "topics", "entities", "provider"):
        assert page.locator(f"#stats-{section} svg").count() >= 1, section
    assert "300" in page.inner_text("#stats-status")
    assert "failures" in page.inner_text("#stats-provider")
    shot(page, f"stats-{name}")
    main_shot(page, f"stats-{name}")
    page.select_option("#id_days", "7")
    page.click("#stats-range button")
    page.wait_for_url("**days=7**")
    assert page.locator("#stats-stored svg rect.bar").count() == 7


def test_uploads_show_a_bar_per_file(open_page, user, tmp_path):
    page = open_page("/")
    files = []
    for name, body in (
        ("trip.md", "# Trip\nFlight to Oslo on May 3 with Ingrid."),
        ("tool.exe", "MZ"),
        ("big.txt", "Harbour notes. " * 40_000),
    ):
        path = tmp_path / name
        path.write_text(body)
        files.append(str(path))
    page.set_input_files("#id_files", files)
    page.click("#upload-form button[type=submit]")
    expect(page.locator("#upload-list .state.good, #upload-list .state.bad")).to_have_count(3)
    rows = page.locator("#upload-list li")
    assert rows.count() == 3
    states = [rows.nth(i).locator(".state").inner_text() for i in range(3)]
    assert states == ["saved", "refused", "saved"]
    # Every file's bytes went up (the refusal comes after); each bar reached the end.
    assert page.evaluate("Array.from(document.querySelectorAll('#upload-list progress')).map(p => p.value)") == [100, 100, 100]
    assert "not supported" in page.inner_text("#flash")
    assert page.locator("#new-items article.card").count() == 2
    assert sorted(m.metadata["file_name"] for m in Memory.objects.filter(owner=user)) == ["big.txt", "trip.md"]
    shot(page, "upload-progress")


def test_consolidate_now_shows_batches_live_and_the_sidebar_the_queue(open_page, user, memory_factory, settings):
    from memories.models import ConsolidationRun

    for i in range(5):
        memory_factory(f"Garden log {i}: watered the tomatoes and beans, day {i}.")
    page = open_page("/consolidations/")
    page.click("#consolidate-now")
    page.wait_for_selector("#run-status.state-queued")
    # The task waits in the broker's queue (no worker runs in this test): the sidebar says so.
    page.reload()
    page.wait_for_selector("#queue-length")
    assert "1 task waiting" in page.inner_text("#queue-length")
    assert "Not seen yet" in page.inner_text("#status")
    # A worker picks it up and finishes two batches of three: the page polls and shows them.
    run = ConsolidationRun.objects.create(owner=user, consolidations_made=2, memories_consolidated=4)
    page.wait_for_selector("#run-status.state-running #batches-done")
    assert page.inner_text("#batches-done") == "2"
    assert "memories consolidated" in page.inner_text("#run-progress")
    shot(page, "consolidate-progress")
    run.consolidations_made, run.finished_at = 3, timezone.now()
    run.save()
    page.wait_for_selector("#run-status.state-idle")
    assert "3 insights" in page.inner_text("#run-status")
