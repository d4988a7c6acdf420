"""End to end in a real browser: Playwright driving Debian's Chromium against a live server.

Screenshots of each page are saved to $BROWSER_ARTIFACTS (default /tmp/memory-screens).
"""

import os
import re
from pathlib import Path

import pytest

from memories.models import Consolidation, Memory
from memories.services import extract_memory

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS", "/tmp/memory-screens"))
PASSWORD = "correct horse battery staple"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make browser)"),
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
    # next to it are still plain synchronous calls.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield browser
        browser.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser, live_server, user):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto("/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("h1:has-text('Ingest')")
    yield page
    context.close()
    settle(live_server)
    assert errors == [], f"JavaScript errors on the page: {errors}"


def settle(live_server):
    """Wait for the requests a closed page left running on the live server (the sidebar
    refreshes /status/ 300 ms after any change). The database is flushed right after a
    test, and a request still reading it then holds a table lock: the flush fails and the
    next test starts on a dirty database."""
    httpd = getattr(live_server.thread, "httpd", None)
    # socketserver keeps the server's request threads in _threads (block_on_close).
    for thread in list(getattr(httpd, "_threads", None) or []):
        thread.join(timeout=10)


def shot(page, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_sign_in_is_required_and_wrong_password_is_refused(browser, live_server, user):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.goto("/memories/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", user.username)
    page.fill("#id_password", "wrong")
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("text=do not match")
    shot(page, "login")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("h1:has-text('Memory bank')")
    context.close()
    settle(live_server)


def test_ingest_a_sample_and_watch_it_turn_ready_then_ask_and_follow_a_citation(page, user):
    page.click("button.sample[data-sample='q1']")
    card = page.locator("#new-items article.card").first
    card.wait_for()
    assert card.get_attribute("data-status") == "pending"
    memory = Memory.objects.get(owner=user)
    shot(page, "ingest-pending")

    extract_memory(memory.pk)  # what the django-q2 worker does
    page.wait_for_selector(f"#memory-{memory.pk}[data-status='ready']")
    page.wait_for_function("document.querySelector('#count-memories')?.textContent.trim() === '1'")
    shot(page, "ingest-ready")

    page.click("nav.tabs >> text=Query")
    page.fill("#id_q", "What is the cloud spend budget?")
    page.click("button:has-text('Ask')")
    citation = page.locator("#answer a.cite").first
    citation.wait_for()
    assert "From your memories" in page.inner_text("#answer-text")
    assert "offline" in page.inner_text(".answer-meta")
    citation.click()
    revealed = page.locator(f"#citation-reveal #memory-{memory.pk}")
    revealed.wait_for()
    assert "Q1 planning" in revealed.inner_text() or "planning" in revealed.inner_text().lower()
    assert "q=" in page.url  # the question is in the address, so it can be shared or reloaded
    shot(page, "query")


def test_upload_files_and_see_a_bad_type_refused(page, user, tmp_path):
    good = tmp_path / "trip.md"
    good.write_text("# Trip\nFlight to Oslo on May 3 with Ingrid.")
    page.set_input_files("#id_files", [str(good)])
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#new-items article.card")
    assert "trip.md" in page.inner_text("#new-items")
    assert Memory.objects.get(owner=user).metadata["file_name"] == "trip.md"

    bad = tmp_path / "tool.exe"
    bad.write_bytes(b"MZ")
    page.set_input_files("#id_files", [str(bad)])
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#flash .flash.error")
    assert "not supported" in page.inner_text("#flash")
    assert Memory.objects.filter(owner=user).count() == 1
    shot(page, "upload")


def test_delete_asks_then_deletes(page, user, memory_factory):
    keep = memory_factory("Keep this note about Rome.")
    gone = memory_factory("Delete this note about Milan.")
    page.goto("/memories/")
    page.click(f"#memory-{gone.pk} button:has-text('Delete')")
    page.wait_for_selector(f"#memory-{gone.pk}:has-text('Delete it')")
    shot(page, "delete-confirm")
    page.click(f"#memory-{gone.pk} >> text=Keep it")  # changed my mind
    page.wait_for_selector(f"#memory-{gone.pk}[data-status='ready']")
    assert Memory.objects.filter(pk=gone.pk).exists()

    page.click(f"#memory-{gone.pk} button:has-text('Delete')")
    page.click(f"#memory-{gone.pk} button:has-text('Delete it')")
    page.wait_for_selector(f"#memory-{gone.pk}:has-text('deleted')")
    assert list(Memory.objects.filter(owner=user).values_list("pk", flat=True)) == [keep.pk]
    shot(page, "deleted-undo")
    page.click(f"#memory-{gone.pk} button:has-text('Undo')")
    page.wait_for_selector(f"#memory-{gone.pk}[data-status='ready']")
    assert Memory.objects.filter(owner=user).count() == 2
    page.click(f"#memory-{gone.pk} button:has-text('Delete')")
    page.click(f"#memory-{gone.pk} button:has-text('Delete it')")
    page.wait_for_selector(f"#memory-{gone.pk}:has-text('deleted')")
    page.wait_for_function("document.querySelector('#count-memories')?.textContent.trim() === '1'")


def test_script_in_a_memory_is_shown_as_text(page, user):
    page.fill("#id_text", "<script>window.__xss = 1</script><img src=x onerror='window.__xss = 2'> Payload note")
    page.click("#text-form button[type=submit]")
    card = page.locator("#new-items article.card").first
    card.wait_for()
    assert "<script>window.__xss = 1</script>" in card.inner_text()
    memory = Memory.objects.get(owner=user)
    extract_memory(memory.pk)
    page.goto(f"/memories/{memory.pk}/")
    assert "<script>window.__xss = 1</script>" in page.inner_text("pre.raw")
    page.goto("/query/?q=payload")
    page.wait_for_selector("#answer-text")
    assert page.evaluate("window.__xss") is None
    assert page.locator("#answer-text img").count() == 0


def test_consolidate_now_shows_the_new_insight(page, user, memory_factory, sync_tasks):
    memory_factory("Alice and Bob planned the Lisbon offsite for June.")
    memory_factory("Alice approved the Lisbon offsite budget.")
    page.goto("/consolidations/")
    assert "No insights yet" in page.inner_text("#insights")
    page.click("#consolidate-now")
    page.wait_for_selector("#run-status:has-text('Last run')")
    page.wait_for_selector("#insights article.insight")
    consolidation = Consolidation.objects.get(owner=user)
    assert f"Insight {consolidation.pk}" in page.inner_text("#insights")
    shot(page, "consolidations")

    page.goto("/memories/")
    assert re.search(r"\d+ connections?", page.inner_text("#results"))
    shot(page, "memory-bank")
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, "memory-bank-phone")


def test_edit_a_memory_then_see_it_in_the_history(page, user, memory_factory):
    memory = memory_factory("Lunch with Priya at the harbour on Friday.")
    page.goto(f"/memories/{memory.pk}/")
    assert page.locator("#history li.event").first.get_attribute("data-action") == "extracted"
    page.fill("#id_edit-importance", "3")  # out of range: refused with the reason, nothing saved
    page.click("#save-edit")
    page.wait_for_selector("#flash .flash.error")
    assert "between 0 and 1" in page.inner_text("#flash")
    assert Memory.objects.get(pk=memory.pk).importance != 3

    page.fill("#id_edit-summary", "Lunch with Priya and Luis at the harbour.")
    page.fill("#id_edit-entities", "Priya, Luis")
    page.fill("#id_edit-importance", "0.9")
    page.fill("#id_edit-occurred_at", "2024-05-03T12:30")
    page.click("#save-edit")
    page.wait_for_selector("#flash .flash.success")
    assert "corrected" in page.inner_text("#flash")
    newest = page.locator("#history li.event").first
    assert newest.get_attribute("data-action") == "edited"
    assert "Lunch with Priya and Luis at the harbour." in newest.inner_text()
    assert f"user:{user.username}" in newest.inner_text()
    assert "Lunch with Priya and Luis" in page.inner_text(f"#memory-{memory.pk} .summary")
    assert page.inner_text("#fact-occurred") == "2024-05-03 12:30"
    memory.refresh_from_db()
    assert memory.entities == ["Priya", "Luis"] and memory.importance == 0.9
    shot(page, "memory-edited")


def test_delete_then_restore_from_the_deleted_page_and_refused_reingest(page, user, memory_factory):
    memory = memory_factory("The spare key is under the blue pot.")
    page.goto("/memories/")
    page.click(f"#memory-{memory.pk} button:has-text('Delete')")
    page.click(f"#memory-{memory.pk} button:has-text('Delete it')")
    page.wait_for_selector(f"#memory-{memory.pk}:has-text('deleted')")

    # The same text again is refused, with a way back.
    page.goto("/")
    page.fill("#id_text", "The spare key is under the blue pot.")
    page.click("#text-form button[type=submit]")
    page.wait_for_selector("#flash .flash.error")
    assert "was deleted on" in page.inner_text("#flash")
    assert page.locator(f"#flash button[data-restore='{memory.pk}']").is_visible()
    shot(page, "reingest-refused")

    page.goto("/memories/")
    page.click("#deleted-link")
    page.wait_for_selector("h1:has-text('Deleted memories')")
    assert "blue pot" in page.inner_text("#deleted-list")
    shot(page, "deleted-page")
    page.click(f"#memory-{memory.pk} button:has-text('Restore')")
    page.wait_for_selector(f"#memory-{memory.pk}[data-status='ready']")
    assert "restored" in page.inner_text("#flash")
    assert Memory.objects.filter(pk=memory.pk).exists()

    page.goto(f"/memories/{memory.pk}/")
    actions = [page.locator("#history li.event").nth(i).get_attribute("data-action") for i in range(3)]
    assert actions == ["restored", "deleted", "extracted"]


def test_purge_from_the_deleted_page(page, user, memory_factory):
    from memories.services import delete_memory

    # A secret no timestamp or id on the page can contain by chance.
    memory = memory_factory("My old PIN was zebra-tulip-quartz.")
    delete_memory(owner=user, memory_id=memory.pk)
    page.goto("/memories/deleted/")
    page.click(f"#memory-{memory.pk} >> text=Purge…")
    page.wait_for_selector(f"#memory-{memory.pk}:has-text('cannot be brought back')")
    page.click(f"#memory-{memory.pk} button:has-text('Purge it')")
    page.wait_for_selector(f"#memory-{memory.pk}[data-status='purged']")
    assert not Memory.all_objects.filter(pk=memory.pk).exists()
    page.click(f"#memory-{memory.pk} >> text=What remains of its history")
    page.wait_for_selector("h1:has-text('History of memory')")
    assert "zebra-tulip-quartz" not in page.content()
    assert page.locator("#history li.event").first.get_attribute("data-action") == "purged"


def test_review_queue_approve_and_reject(page, user, settings, memory_factory):
    settings.MEMORY_REVIEW_MODE = True
    keep = memory_factory("The offsite moved to September.")
    drop = memory_factory("Totally wrong note.")
    page.goto("/review/")
    assert page.inner_text("#review-count") == "2"
    shot(page, "review")
    page.click(f"#memory-{keep.pk} button:has-text('Approve')")
    page.wait_for_selector(f"#memory-{keep.pk}[data-status='approved']")
    page.click(f"#memory-{drop.pk} button:has-text('Reject')")
    page.wait_for_selector(f"#memory-{drop.pk}[data-status='rejected']")
    assert page.inner_text("#review-count") == "0"
    assert Memory.objects.get(pk=keep.pk).status == Memory.Status.READY
    assert not Memory.objects.filter(pk=drop.pk).exists()


def test_a_superseded_fact_shows_its_successor_and_can_be_undone(page, user):
    from memories.services import ingest_text

    paris = extract_memory(ingest_text(owner=user, text="I live in Paris.", occurred_at="2024-03-10").memory.pk)
    berlin = extract_memory(ingest_text(owner=user, text="I moved to Berlin.", occurred_at="2025-06-12").memory.pk)
    page.goto("/memories/?fact=superseded")
    page.wait_for_selector(f"#memory-{paris.pk} .badge:has-text('Past · until 2025-06')")
    assert page.locator(f"#memory-{berlin.pk}").count() == 0
    page.goto(f"/memories/{paris.pk}/")
    page.wait_for_selector(f"#fact-state a:has-text('Memory {berlin.pk}')")
    shot(page, "memory-superseded")
    page.click("#not-an-update")
    page.wait_for_selector("text=is current again")
    assert page.locator("#fact-state").count() == 0
    assert Memory.objects.get(pk=paris.pk).outdated_by_id is None
