"""The web pages and the HTMX fragments they swap, through Django's test client."""

import re
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from memories.models import Consolidation, ConsolidationRun, Memory, MemoryLink
from memories.services import ingest_file
from memories.services.owners import default_owner
from memories.templatetags.memories_ui import markdown_safe
from tests.htmx import HX, hx
from tests.samples import png_bytes

PAGES = ["memories:ingest", "memories:query", "memories:list", "memories:consolidations", "memories:status", "memories:clear"]


# --- sign-in ----------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", PAGES)
def test_every_page_needs_sign_in(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
def test_memory_urls_need_sign_in(client, memory_factory):
    memory = memory_factory("A note about Paris.")
    for name in ["detail", "card", "delete", "file"]:
        assert client.get(reverse(f"memories:{name}", args=[memory.pk])).status_code == 302
    assert client.post(reverse("memories:retry", args=[memory.pk])).status_code == 302
    assert Memory.objects.filter(pk=memory.pk).exists()


@pytest.mark.django_db
def test_first_visit_points_to_the_one_time_link_and_offers_no_claim_form(client):
    owner = default_owner()  # made by the watcher or a command, without a password
    Memory.objects.create(owner=owner, raw_text="from the inbox", content_hash="x")
    page = client.get(reverse("login"))
    assert b"manage.py welcome" in page.content
    assert b"Create owner account" not in page.content and b'name="password1"' not in page.content


@pytest.mark.django_db
def test_welcome_prints_a_one_time_link_that_signs_in_once(client):
    out = StringIO()
    call_command("welcome", "--base-url", "http://testserver", stdout=out)
    link = re.search(r"http://testserver(/welcome/\S+/)", out.getvalue()).group(1)

    assert b"Sign in as owner" in client.get(link).content  # GET alone does not sign in
    assert client.get(reverse("memories:ingest")).status_code == 302
    response = client.post(link)
    assert response["Location"] == reverse("memories:set_password")
    set_pw = client.post(
        reverse("memories:set_password"), {"new_password1": "a long pass phrase 42", "new_password2": "a long pass phrase 42"}
    )
    assert set_pw.status_code == 302
    assert default_owner().check_password("a long pass phrase 42")
    assert client.get(reverse("memories:ingest")).status_code == 200  # still signed in

    used = Client().get(link)
    assert used.status_code == 400 and b"already been used" in used.content
    assert Client().get("/welcome/forged-token/").status_code == 400
    # Once the owner has a password, welcome prints no link.
    out = StringIO()
    call_command("welcome", stdout=out)
    assert "/welcome/" not in out.getvalue() and "Sign in at" in out.getvalue()


# --- ingest -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_ingest_page_shows_form_samples_and_upload_limit(signed_in, settings):
    settings.MEMORY_MAX_UPLOAD_MB = 7
    page = signed_in.get(reverse("memories:ingest"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Up to 7 MB" in html and 'name="files" multiple' in html
    for label in [
        "AI agents in production",
        "Q1 planning meeting notes",
        "Research on memory in LLM systems",
        "A smart-inbox product idea",
    ]:
        assert label in html
    assert "hx-headers" in html and "X-CSRFToken" in html
    assert "/static/django_htmx/htmx" in html  # served by the app, no CDN


@pytest.mark.django_db
def test_ingest_text_returns_a_polling_pending_card(signed_in, user):
    response = hx(signed_in, "post", reverse("memories:ingest_text"), {"text": "Lunch with Marta at Nopa.", "source": "diary"})
    assert response.status_code == 200
    memory = Memory.objects.get(owner=user)
    assert memory.status == "pending" and memory.source == "diary"
    html = response.content.decode()
    assert f'id="memory-{memory.pk}"' in html and 'hx-trigger="every 2s"' in html
    assert "Saved as memory" in html and "memories-changed" in response["HX-Trigger"]


@pytest.mark.django_db
def test_ingest_text_with_worker_inline_is_ready_and_card_stops_polling(
    signed_in, user, sync_tasks, django_capture_on_commit_callbacks
):
    # The task is queued on commit; run the callbacks as the commit would.
    with django_capture_on_commit_callbacks(execute=True):
        response = hx(signed_in, "post", reverse("memories:ingest_text"), {"sample": "q1"})
    assert response.status_code == 200
    memory = Memory.objects.get(owner=user)
    assert memory.status == "ready" and "Q1 planning" in memory.raw_text
    card = hx(signed_in, "get", reverse("memories:card", args=[memory.pk]))
    assert 'hx-trigger="every 2s"' not in card.content.decode() and "Ready" in card.content.decode()


@pytest.mark.django_db
def test_ingest_text_errors_are_400_with_a_message(signed_in, user):
    empty = hx(signed_in, "post", reverse("memories:ingest_text"), {"text": "   "})
    assert empty.status_code == 400 and empty["HX-Retarget"] == "#flash"
    assert b"There is no text to remember" in empty.content
    bad_date = hx(signed_in, "post", reverse("memories:ingest_text"), {"text": "hello", "occurred_at": "next tuesday-ish"})
    assert bad_date.status_code == 400 and b"not a date" in bad_date.content
    assert not Memory.objects.filter(owner=user).exists()
    # Without HTMX the same refusal is a page.
    page = signed_in.post(reverse("memories:ingest_text"), {"text": ""})
    assert page.status_code == 400 and b"That didn" in page.content


@pytest.mark.django_db
def test_ingest_text_twice_says_it_is_already_stored(signed_in, user):
    hx(signed_in, "post", reverse("memories:ingest_text"), {"text": "Same words."})
    again = hx(signed_in, "post", reverse("memories:ingest_text"), {"text": "Same   words."})
    assert again.status_code == 200 and b"Already stored" in again.content
    assert Memory.objects.filter(owner=user).count() == 1


@pytest.mark.django_db
def test_upload_several_files_and_refuse_bad_ones(signed_in, user):
    files = [
        SimpleUploadedFile("notes.txt", b"Meeting with Ada about the roadmap.", content_type="text/plain"),
        SimpleUploadedFile("virus.exe", b"MZ....", content_type="application/octet-stream"),
        SimpleUploadedFile("pic.png", png_bytes(), content_type="image/png"),
    ]
    response = hx(signed_in, "post", reverse("memories:ingest_files"), {"files": files})
    assert response.status_code == 200
    html = response.content.decode()
    assert "not supported" in html and "virus.exe" in html
    assert sorted(Memory.objects.filter(owner=user).values_list("metadata__file_name", flat=True)) == ["notes.txt", "pic.png"]


@pytest.mark.django_db
def test_upload_refusals(signed_in, settings, user):
    none = hx(signed_in, "post", reverse("memories:ingest_files"), {})
    assert none.status_code == 400 and b"Choose at least one file" in none.content
    bad = hx(signed_in, "post", reverse("memories:ingest_files"), {"files": [SimpleUploadedFile("x.exe", b"data")]})
    assert bad.status_code == 400 and b"not supported" in bad.content
    settings.MEMORY_MAX_UPLOAD_MB = 1
    big = hx(
        signed_in, "post", reverse("memories:ingest_files"), {"files": [SimpleUploadedFile("big.txt", b"a" * (1024 * 1024 + 1))]}
    )
    assert big.status_code == 400 and b"1 MB limit" in big.content
    assert not Memory.objects.filter(owner=user).exists()


@pytest.mark.django_db
def test_failed_card_shows_why_and_retry_requeues(signed_in, user, memory_factory):
    memory = memory_factory("It broke.", extract=False)
    Memory.objects.filter(pk=memory.pk).update(status="failed", error="Model said <no>")
    card = hx(signed_in, "get", reverse("memories:card", args=[memory.pk]))
    html = card.content.decode()
    assert "Model said &lt;no&gt;" in html and reverse("memories:retry", args=[memory.pk]) in html
    retried = hx(signed_in, "post", reverse("memories:retry", args=[memory.pk]))
    assert retried.status_code == 200
    memory.refresh_from_db()
    assert memory.status == "pending" and memory.error == ""
    again = hx(signed_in, "post", reverse("memories:retry", args=[memory.pk]))
    assert again.status_code == 400 and b"Only a failed memory" in again.content


# --- memory cards, detail, files ---------------------------------------------------------------


@pytest.mark.django_db
def test_delete_asks_first_then_deletes(signed_in, user, memory_factory):
    memory = memory_factory("Forget me.")
    confirm = hx(signed_in, "get", reverse("memories:delete", args=[memory.pk]))
    assert b"Delete it" in confirm.content and Memory.objects.filter(pk=memory.pk).exists()
    gone = hx(signed_in, "post", reverse("memories:delete", args=[memory.pk]))
    assert gone.status_code == 200 and b"deleted" in gone.content
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert hx(signed_in, "post", reverse("memories:delete", args=[memory.pk])).status_code == 404
    # Undo brings the card back.
    assert reverse("memories:restore", args=[memory.pk]) in gone.content.decode()
    restored = hx(signed_in, "post", reverse("memories:restore", args=[memory.pk]))
    assert restored.status_code == 200 and b"Forget me" in restored.content
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert hx(signed_in, "post", reverse("memories:restore", args=[memory.pk])).status_code == 404  # not deleted now


@pytest.mark.django_db
def test_detail_escapes_user_content_and_shows_connections(signed_in, user, memory_factory):
    a = memory_factory("<script>alert('x')</script> Alice met Bob in Lisbon.")
    b = memory_factory("Bob moved to Lisbon last spring.")
    c = Consolidation.objects.create(owner=user, summary="s", insight="Lisbon <b>links</b> them")
    c.sources.set([a, b])
    MemoryLink.objects.create(from_memory=a, to_memory=b, relationship="both in Lisbon", consolidation=c)
    html = signed_in.get(reverse("memories:detail", args=[a.pk])).content.decode()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert "both in Lisbon" in html and f"Memory {b.pk}" in html
    assert "Lisbon &lt;b&gt;links&lt;/b&gt; them" in html


@pytest.mark.django_db
def test_original_file_is_served_to_its_owner_only(signed_in, bob_client, user):
    image = ingest_file(owner=user, fileobj=SimpleUploadedFile("p.png", png_bytes()), name="p.png").memory
    html_doc = ingest_file(
        owner=user, fileobj=SimpleUploadedFile("page.html", b"<script>alert(1)</script>"), name="page.html"
    ).memory
    url = reverse("memories:file", args=[image.pk])
    inline = signed_in.get(url)
    assert inline.status_code == 200 and inline["Content-Type"] == "image/png"
    assert inline["Content-Disposition"].startswith("inline") and "sandbox" in inline["Content-Security-Policy"]
    assert b"".join(inline.streaming_content).startswith(b"\x89PNG")
    assert signed_in.get(url + "?download=1")["Content-Disposition"].startswith("attachment")
    # HTML is never rendered as this site.
    assert signed_in.get(reverse("memories:file", args=[html_doc.pk]))["Content-Disposition"].startswith("attachment")
    assert bob_client.get(url).status_code == 404
    detail = signed_in.get(reverse("memories:detail", args=[image.pk])).content.decode()
    assert f'<img class="preview" src="{url}"' in detail


@pytest.mark.django_db
def test_file_view_404s_without_an_original(signed_in, memory_factory):
    memory = memory_factory("text only")
    assert signed_in.get(reverse("memories:file", args=[memory.pk])).status_code == 404


@pytest.mark.django_db
def test_another_user_gets_404_for_everything_of_mine(bob_client, memory_factory):
    memory = memory_factory("Alice's secret plan.")
    Memory.objects.filter(pk=memory.pk).update(status="failed")
    for name in ["detail", "card", "delete", "file"]:
        assert bob_client.get(reverse(f"memories:{name}", args=[memory.pk])).status_code == 404, name
    assert bob_client.post(reverse("memories:delete", args=[memory.pk])).status_code == 404
    assert bob_client.post(reverse("memories:retry", args=[memory.pk])).status_code == 404
    assert bob_client.post(reverse("memories:restore", args=[memory.pk])).status_code == 404
    assert Memory.objects.get(pk=memory.pk).status == "failed"
    assert b"secret plan" not in bob_client.get(reverse("memories:list")).content
    assert b"secret plan" not in bob_client.get(reverse("memories:ingest")).content
    assert b"Alice" not in bob_client.get(reverse("memories:query"), {"q": "what is the plan?"}).content


# --- query ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_query_answers_with_citation_links_and_context(signed_in, memory_factory):
    memory = memory_factory("The Q1 budget for cloud spend is capped at 18k a month.")
    page = signed_in.get(reverse("memories:query"))
    assert page.status_code == 200 and b"What was decided in the Q1 planning meeting?" in page.content
    response = hx(signed_in, "get", reverse("memories:query"), {"q": "What is the cloud budget?"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert f'hx-get="{reverse("memories:card", args=[memory.pk])}?cited=1"' in html
    assert 'hx-target="#citation-reveal"' in html
    assert "offline extractive engine" in html and " ms " in html
    assert "What it read" in html and "cited" in html
    full = signed_in.get(reverse("memories:query"), {"q": "What is the cloud budget?"})
    assert b"<html" in full.content and b"[Memory" in full.content


@pytest.mark.django_db
def test_query_refuses_an_empty_question(signed_in):
    response = hx(signed_in, "get", reverse("memories:query"), {"q": "  "})
    assert response.status_code == 400 and b"Ask a question" in response.content


def test_markdown_answers_are_sanitised_and_citations_linked():
    html = markdown_safe("**Yes** <script>alert(1)</script> see [Memory 12].\n\n![x](http://evil/x.png) [a](javascript:alert(1))")
    assert "<strong>Yes</strong>" in html
    assert "<script" not in html and "<img" not in html and "javascript:" not in html
    assert 'href="/memories/12/"' in html and 'hx-get="/memories/12/card/?cited=1"' in html


# --- memory bank ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_memory_bank_filters_sorts_and_counts_links(signed_in, user, memory_factory):
    a = memory_factory("Paris trip with Claire.")
    b = memory_factory("Budget review for Q3.")
    Memory.objects.filter(pk=a.pk).update(topics=["travel"], importance=0.9)
    Memory.objects.filter(pk=b.pk).update(topics=["finance"], importance=0.2)
    MemoryLink.objects.create(from_memory=a, to_memory=b, relationship="same week")

    page = signed_in.get(reverse("memories:list")).content.decode()
    assert "Paris trip" in page and "Budget review" in page and "1 connection" in page
    by_topic = hx(signed_in, "get", reverse("memories:list"), {"topic": "travel"}, target="results").content.decode()
    assert "Paris trip" in by_topic and "Budget review" not in by_topic and "<html" not in by_topic
    by_text = hx(signed_in, "get", reverse("memories:list"), {"q": "budget"}, target="results").content.decode()
    assert "Budget review" in by_text and "Paris trip" not in by_text
    important_first = signed_in.get(reverse("memories:list"), {"sort": "importance"}).content.decode()
    assert important_first.index("Paris trip") < important_first.index("Budget review")
    assert signed_in.get(reverse("memories:list"), {"status": "bogus"}).status_code == 400
    assert signed_in.get(reverse("memories:list"), {"after": "abc"}).status_code == 400


@pytest.mark.django_db
def test_memory_bank_filters_by_non_ascii_topics_and_entities_and_searches_stemmed(signed_in, user, memory_factory):
    zurich = memory_factory("Moved the team offsite to Zürich, booked the Café Odeon for dinner.")
    other = memory_factory("Planted tulips along the fence in the garden.")
    Memory.objects.filter(pk=zurich.pk).update(topics=["café", "travel"], entities=["Zürich", "Café Odeon"])
    Memory.objects.filter(pk=other.pk).update(topics=["garden"], entities=["Zürcher Gärten"])
    # The chips link these exact values; the JSON on SQLite holds "Z\u00fcrich".
    for params in ({"entity": "Zürich"}, {"topic": "café"}, {"entity": "Café Odeon"}, {"entity": "zürich"}):
        html = hx(signed_in, "get", reverse("memories:list"), params, target="results").content.decode()
        assert f'id="memory-{zurich.pk}"' in html and f'id="memory-{other.pk}"' not in html, params
    # An exact item, not a piece of one: "Café Ode" is not the entity "Café Odeon". (A lone
    # first word is another matter: it stands for the one full name the space knows.)
    html = hx(signed_in, "get", reverse("memories:list"), {"entity": "Café Ode"}, target="results").content.decode()
    assert f'id="memory-{zurich.pk}"' not in html
    # Stemmed text search: "tulip" finds "tulips", and every word must match.
    html = hx(signed_in, "get", reverse("memories:list"), {"q": "tulip garden"}, target="results").content.decode()
    assert f'id="memory-{other.pk}"' in html and f'id="memory-{zurich.pk}"' not in html
    html = hx(signed_in, "get", reverse("memories:list"), {"q": "dinners zürich"}, target="results").content.decode()
    assert f'id="memory-{zurich.pk}"' in html and f'id="memory-{other.pk}"' not in html
    # FTS syntax in a search is just text.
    for q in ('"', "tulip OR NOT x*", "topics: garden", "( AND"):
        assert hx(signed_in, "get", reverse("memories:list"), {"q": q}, target="results").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("sort", ["new", "importance"])
def test_memory_bank_pages_through_everything_once(signed_in, user, sort):
    Memory.objects.bulk_create(
        Memory(
            owner=user, raw_text=f"note {i}", summary=f"note {i}", status="ready", content_hash=f"h{i}", importance=(i % 5) / 5
        )
        for i in range(60)
    )
    seen, url, pages = [], reverse("memories:list") + f"?sort={sort}", 0
    while url:
        html = signed_in.get(url).content.decode()
        seen += re.findall(r'id="memory-(\d+)"', html)
        nxt = re.search(r'href="(\?[^"]*after=\d+)" hx-get', html)
        url = reverse("memories:list") + nxt.group(1).replace("&amp;", "&") if nxt else ""
        pages += 1
    assert pages == 3 and len(seen) == 60 and len(set(seen)) == 60
    # And back: the page before the last one is the middle page.
    last_html = signed_in.get(reverse("memories:list") + f"?sort={sort}&after={seen[47]}").content.decode()
    prev = re.search(r'href="(\?[^"]*before=\d+)" hx-get', last_html).group(1).replace("&amp;", "&")
    middle = re.findall(r'id="memory-(\d+)"', signed_in.get(reverse("memories:list") + prev).content.decode())
    assert middle == seen[24:48]


# --- consolidations, status, danger zone ------------------------------------------------------


@pytest.mark.django_db
def test_consolidate_now_runs_the_task_and_shows_the_insight(signed_in, user, memory_factory, sync_tasks):
    memory_factory("Alice and Bob planned the Lisbon offsite.")
    memory_factory("The Lisbon offsite budget was approved by Alice.")
    page = signed_in.get(reverse("memories:consolidations"))
    assert b"Consolidate now" in page.content and b"No insights yet" in page.content
    response = hx(signed_in, "post", reverse("memories:consolidate_now"))
    assert response.status_code == 200 and b"Last run" in response.content
    assert "consolidated" in response["HX-Trigger"]
    run = ConsolidationRun.objects.get(owner=user)
    assert run.consolidations_made == 1
    insights = hx(signed_in, "get", reverse("memories:consolidations"), target="insights").content.decode()
    assert "Insight" in insights and "<html" not in insights
    assert Consolidation.objects.get(owner=user).insight[:30] in insights


@pytest.mark.django_db
def test_consolidate_now_while_running_is_refused(signed_in, user):
    ConsolidationRun.objects.create(owner=user)
    response = hx(signed_in, "post", reverse("memories:consolidate_now"))
    assert response.status_code == 409 and b"already running" in response.content
    status = hx(signed_in, "get", reverse("memories:consolidation_status"))
    assert b"Running since" in status.content and b'hx-trigger="every 2s"' in status.content


@pytest.mark.django_db
def test_queued_consolidation_polls_until_a_worker_runs_it(signed_in, user):
    response = hx(signed_in, "post", reverse("memories:consolidate_now"))  # no worker: stays queued
    assert b"Queued" in response.content and b'hx-trigger="every 2s"' in response.content


@pytest.mark.django_db
def test_status_sidebar_counts_and_names_the_engine(signed_in, user, memory_factory):
    memory_factory("one")
    failed = memory_factory("two", extract=False)
    Memory.objects.filter(pk=failed.pk).update(status="failed")
    html = hx(signed_in, "get", reverse("memories:status")).content.decode()
    assert re.search(r'id="count-memories">2<', html) and re.search(r'id="count-failed" class="bad">1<', html)
    assert "offline" in html and "not a language model" in html and "Every 30 minutes" in html


@pytest.mark.django_db
def test_clear_needs_the_typed_phrase(signed_in, user, other_user, memory_factory):
    memory_factory("mine")
    memory_factory("bob's", owner=other_user)
    page = signed_in.get(reverse("memories:clear"))
    assert b"<strong>1</strong> memory" in page.content
    wrong = signed_in.post(reverse("memories:clear"), {"confirm": "yes"})
    assert wrong.status_code == 400 and b"nothing was deleted" in wrong.content
    assert Memory.objects.filter(owner=user).count() == 1
    done = signed_in.post(reverse("memories:clear"), {"confirm": "Delete my memories"})
    assert done.status_code == 302
    assert not Memory.objects.filter(owner=user).exists() and Memory.objects.filter(owner=other_user).count() == 1


@pytest.mark.django_db
def test_clear_page_says_what_it_does_to_inbox_files_and_does_it(signed_in, user, settings):
    from memories.services.inbox import scan_inbox

    settings.MEMORY_INBOX_USER = user.username
    inbox = settings.MEMORY_INBOX_DIR
    inbox.mkdir(parents=True)
    (inbox / "note.txt").write_text("Dentist on Tuesday at nine.")
    scan_inbox(settle_seconds=0)
    page = signed_in.get(reverse("memories:clear")).content.decode()
    assert "<strong>1</strong> file the watcher read from the inbox folder is deleted from it" in page
    assert "the same content can be added again" in page
    signed_in.post(reverse("memories:clear"), {"confirm": "Delete my memories"})
    assert not (inbox / "note.txt").exists()
    again = signed_in.post(reverse("memories:ingest_text"), {"text": "Dentist on Tuesday at nine."})
    assert again.status_code == 302 and Memory.objects.filter(owner=user).count() == 1


# --- CSRF -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_posts_need_the_csrf_token_htmx_sends_from_body(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get(reverse("memories:ingest")).content.decode()
    token = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', page).group(1)
    refused = client.post(reverse("memories:ingest_text"), {"text": "no token"}, **HX)
    assert refused.status_code == 403
    accepted = client.post(reverse("memories:ingest_text"), {"text": "with token"}, HTTP_X_CSRFTOKEN=token, **HX)
    assert accepted.status_code == 200
    assert list(Memory.objects.filter(owner=user).values_list("raw_text", flat=True)) == ["with token"]


@pytest.mark.django_db
def test_memory_bank_offers_topics_and_entities_as_choices_with_counts(signed_in, user, other_user, memory_factory):
    a, b, c = (memory_factory(t) for t in ("Rome trip with Claire.", "Paris trip with Claire.", "Budget review."))
    Memory.objects.filter(pk__in=[a.pk, b.pk]).update(topics=["travel", "café"], entities=["Claire"])
    Memory.objects.filter(pk=c.pk).update(topics=["finance"])
    theirs = memory_factory("Bob's trip.", owner=other_user)
    Memory.objects.filter(pk=theirs.pk).update(topics=["travel", "secret-bob-topic"])
    page = signed_in.get(reverse("memories:list"), {"topic": "travel"}).content.decode()
    assert 'name="topic"' in page and reverse("memories:facets", args=["topics"]) in page
    options = hx(
        signed_in, "get", reverse("memories:facets", args=["topics"]), {"topic": "travel"}, target="id_topic"
    ).content.decode()
    assert '<option value="travel" selected>travel (2)</option>' in options
    assert '<option value="café">café (2)</option>' in options and "finance (1)" in options
    assert "secret-bob-topic" not in options
    entities = signed_in.get(reverse("memories:facets", args=["entities"])).content.decode()
    assert "Claire (2)" in entities
    assert signed_in.get(reverse("memories:facets", args=["sources"])).status_code == 404
    # A value the list does not offer (a chip's link) still shows as chosen.
    odd = signed_in.get(reverse("memories:facets", args=["topics"]), {"topic": "rare one"}).content.decode()
    assert '<option value="rare one" selected>rare one</option>' in odd


@pytest.mark.django_db
def test_bulk_delete_deletes_only_the_owners_selected_memories(signed_in, user, other_user, memory_factory):
    from memories.models import Event, RejectedContent

    mine = [memory_factory(f"My note number {i} about tulips.") for i in range(3)]
    theirs = memory_factory("Bob's note.", owner=other_user)
    response = hx(signed_in, "post", reverse("memories:bulk_delete"), {"ids": [mine[0].pk, mine[2].pk, theirs.pk]})
    assert response.status_code == 200 and "Deleted 2 memories" in response.content.decode()
    assert f'id="memory-{mine[0].pk}" hx-swap-oob="true"' in response.content.decode()
    assert list(Memory.objects.filter(owner=user).values_list("pk", flat=True)) == [mine[1].pk]
    assert Memory.objects.filter(pk=theirs.pk).exists()
    assert Event.objects.filter(action="deleted").count() == 2 and RejectedContent.objects.count() == 2
    for bad in ({}, {"ids": ["x"]}, {"ids": ["99999999999999999999"]}):
        refused = hx(signed_in, "post", reverse("memories:bulk_delete"), bad)
        assert refused.status_code == 400, bad


@pytest.mark.django_db
def test_bank_count_stops_at_a_cap_for_common_words(signed_in, user, monkeypatch):
    from memories.services import browse

    monkeypatch.setattr(browse, "COUNT_CAP", 5)
    Memory.objects.bulk_create(
        Memory(owner=user, raw_text=f"tulips note {i}", summary=f"tulips note {i}", status="ready", content_hash=f"t{i}")
        for i in range(8)
    )
    html = signed_in.get(reverse("memories:list"), {"q": "tulip"}).content.decode()
    assert "5+ memories match." in html


@pytest.mark.django_db
@pytest.mark.parametrize("sort", ["new", "importance"])
def test_a_filtered_bank_pages_in_order_without_repeats(signed_in, user, sort):
    Memory.objects.bulk_create(
        Memory(
            owner=user,
            raw_text=f"note {i}",
            summary=f"note {i}",
            status="ready",
            content_hash=f"f{i}",
            importance=(i % 7) / 7,
            topics=["café"] if i % 2 else ["other"],
        )
        for i in range(70)
    )
    expected = list(browse_order(user, sort, topics=["café"]))
    seen, url = [], reverse("memories:list") + f"?sort={sort}&topic=caf%C3%A9"
    while url:
        html = signed_in.get(url).content.decode()
        seen += [int(pk) for pk in re.findall(r'<article class="card[^"]*" id="memory-(\d+)"', html)]
        found = re.search(r'href="(\?[^"]*after=\d+)"', html)
        url = reverse("memories:list") + found.group(1).replace("&amp;", "&") if found else ""
    assert seen == expected


def browse_order(user, sort, topics):
    from memories.services.browse import SORTS

    return Memory.objects.filter(owner=user, topics=topics).order_by(*SORTS[sort]).values_list("pk", flat=True)


@pytest.mark.django_db
def test_the_whole_bank_is_counted_exactly(signed_in, user, monkeypatch):
    from memories.services import browse

    monkeypatch.setattr(browse, "COUNT_CAP", 5)
    Memory.objects.bulk_create(
        Memory(owner=user, raw_text=f"n {i}", summary=f"n {i}", status="ready", content_hash=f"w{i}") for i in range(8)
    )
    assert "8 memories." in signed_in.get(reverse("memories:list")).content.decode()
