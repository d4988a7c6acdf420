"""The newcomer's first minutes, end to end in Chromium: the link `manage.py welcome` prints,
its button, a first password, then every page the nav offers, with nothing refused by the
Content-Security-Policy and nothing written to the console as an error.

Every other browser test signs in with a password the test set; this one walks the path a
person walks on a fresh install, which is where a 403 from the CSRF check once hid.
"""

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.test_browser import CHROMIUM, browser, settle, shot  # noqa: F401 (browser is a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make browser)"),
]

NEW_PASSWORD = "newcomer-pass-8812"


def printed_link(base_url: str) -> str:
    out = io.StringIO()
    call_command("welcome", base_url=base_url, stdout=out)
    links = re.findall(r"https?://\S+/welcome/\S+", out.getvalue())
    assert len(links) == 1, out.getvalue()
    return links[0]


def watch(page):
    """Everything a page complains about: console errors and warnings (a 403 on a fetch, a CSP
    refusal, a script error, a library's complaint) and uncaught exceptions."""
    problems = []
    page.on("pageerror", lambda exc: problems.append(f"{page.url}: {exc}"))
    page.on(
        "console",
        lambda msg: (
            problems.append(f"{page.url}: {msg.text}")
            if msg.type in ("error", "warning") or "Content Security Policy" in msg.text
            else None
        ),
    )
    return problems


@pytest.mark.parametrize("width", [1280, 390])
def test_the_printed_link_signs_in_and_every_page_in_the_nav_renders_cleanly(browser, live_server, sync_tasks, width):  # noqa: F811
    link = printed_link(live_server.url)
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    problems = watch(page)

    page.goto(link)
    page.click("#use-link")
    page.wait_for_selector("h1:has-text('Choose a password')")
    assert "CSRF verification failed" not in page.content()
    page.fill("#id_new_password1", NEW_PASSWORD)
    page.fill("#id_new_password2", NEW_PASSWORD)
    page.click("form:has(#id_new_password1) button[type=submit]")
    page.wait_for_selector("h1:has-text('Ingest')")
    assert "Password set" in page.inner_text("#flash")
    assert page.inner_text("header .who") == "owner"
    shot(page, f"newcomer-signed-in-{width}")

    # The link is spent: a second press is refused with the reason, not a way in.
    second = context.new_page()
    second.goto(link)
    assert "already been used" in second.inner_text("main")
    second.close()

    # The first note, typed, and the first question on it.
    page.fill("#id_text", "I moved from Paris to Berlin last spring.")
    page.click("#text-form button[type=submit]")
    page.wait_for_selector("#new-items article.card[data-status='ready']")
    page.click("nav.tabs >> text=Query")
    page.fill("#id_q", "Where do I live now?")
    page.click("button:has-text('Ask')")
    page.wait_for_selector("#answer-text")
    shot(page, f"newcomer-answer-{width}")
    ask = page.locator("button:has-text('Ask')").bounding_box()
    assert ask["height"] < 50, ask  # one line: "Ask", not "As / k"

    links = page.locator("nav.tabs a").all()
    nav = [a.get_attribute("href") for a in links]
    assert "/settings/" in nav and "/admin/" in nav
    for a in links:  # every tab in sight, none scrolled off the edge of a phone
        box = a.bounding_box()
        assert 0 <= box["x"] and box["x"] + box["width"] <= width, (a.inner_text(), box)
    for href in nav:
        response = page.goto(href)
        assert response.status == 200, (href, response.status)
        page.wait_for_load_state("networkidle")
        if width == 390:
            overflow = page.evaluate("document.documentElement.scrollWidth")
            assert overflow <= width, (href, overflow)
        shot(page, f"newcomer-{href.strip('/').replace('/', '-') or 'ingest'}-{width}")

    # Connecting an agent: the configuration is copied as shown, paths and all.
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/settings/")
    page.click("button[data-copy='mcp-stdio']")
    page.wait_for_selector("button[data-copy='mcp-stdio']:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == page.inner_text("#mcp-stdio")
    assert '"mcp",' in page.inner_text("#mcp-stdio") and "manage.py" in page.inner_text("#mcp-stdio")

    # The forms a newcomer meets next: change the password, sign out, sign in again.
    page.goto("/accounts/password_change/")
    page.fill("#id_old_password", NEW_PASSWORD)
    page.fill("#id_new_password1", NEW_PASSWORD + "x")
    page.fill("#id_new_password2", NEW_PASSWORD + "x")
    page.click("#content-main [type=submit]")  # the admin's own password-change page
    page.wait_for_selector("text=Your password was changed")
    page.goto("/")
    page.click("form.signout button")
    page.goto("/")
    page.fill("#id_username", "owner")
    page.fill("#id_password", NEW_PASSWORD + "x")
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("h1:has-text('Ingest')")
    page.goto("/danger/clear/")
    page.fill("#id_confirm", "delete my memories")
    page.click("button:has-text('Clear everything listed')")
    page.wait_for_selector("h1:has-text('Ingest')")
    page.click("form.signout button")
    page.goto("/admin/login/")
    page.fill("#id_username", "owner")
    page.fill("#id_password", NEW_PASSWORD + "x")
    page.click("#login-form [type=submit]")
    page.wait_for_selector("#site-name")
    assert "CSRF verification failed" not in page.content()

    context.close()
    settle(live_server)
    assert problems == []
