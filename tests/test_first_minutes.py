"""The first minutes through Django's test client: the welcome link's form passes the CSRF
check the way a browser sends it, and the settings page gives an agent's configuration that
works as pasted (this checkout's paths, this server's /mcp) and shows no secret."""

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from memories.services.connect import agent_config


@pytest.mark.django_db
def test_the_welcome_links_button_passes_the_csrf_check_with_the_origin_a_browser_sends():
    out = StringIO()
    call_command("welcome", "--base-url", "http://testserver", stdout=out)
    link = re.search(r"http://testserver(/welcome/\S+/)", out.getvalue()).group(1)
    browser = Client(enforce_csrf_checks=True)
    page = browser.get(link)
    # Not "no-referrer": under it Chromium sends `Origin: null` with the form, which the CSRF
    # check refuses. "same-origin" still keeps the link out of any Referer to another site.
    assert page["Referrer-Policy"] == "same-origin" and page["Cache-Control"] == "no-store"
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()
    response = browser.post(link, {"csrfmiddlewaretoken": token}, HTTP_ORIGIN="http://testserver")
    assert response.status_code == 302 and response["Location"] == reverse("memories:set_password")
    refused = Client(enforce_csrf_checks=True)
    refused.get(link)
    assert refused.post(link, {"csrfmiddlewaretoken": token}, HTTP_ORIGIN="null").status_code == 403


def test_the_stdio_entry_names_this_checkouts_interpreter_and_manage_py(user_factory, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://memory:s3cret-pw@db:5432/memory")
    monkeypatch.setenv("MEMORY_DATA_DIR", "/srv/memory-data")
    owner = user_factory("carol")
    config = agent_config(owner=owner, mcp_url="http://memory.example:8000/mcp")
    stdio = json.loads(config.stdio_json)["mcpServers"]["memory"]
    assert Path(stdio["command"]).is_absolute() and Path(stdio["command"]).exists()
    manage, *rest = stdio["args"]
    assert Path(manage).is_absolute() and Path(manage).name == "manage.py" and Path(manage).exists()
    assert rest == ["mcp", "--user", "carol"]
    assert stdio["env"]["MEMORY_DATA_DIR"] == "/srv/memory-data"
    assert "s3cret-pw" not in config.stdio_json + config.stdio_claude_code
    assert config.named_env == ("DATABASE_URL",)
    assert config.stdio_claude_code.startswith("claude mcp add memory --env MEMORY_DATA_DIR=/srv/memory-data")
    http = json.loads(config.http_json)["mcpServers"]["memory"]
    assert http["url"] == "http://memory.example:8000/mcp" and http["type"] == "http"
    assert "your token" in http["headers"]["Authorization"]


@pytest.mark.django_db
def test_the_settings_page_is_in_the_nav_and_a_new_token_comes_back_filled_in(signed_in):
    ingest = signed_in.get(reverse("memories:ingest")).content.decode()
    assert 'href="/settings/"' in ingest
    page = signed_in.get(reverse("memories:settings")).content.decode()
    assert "Connect an agent" in page and "http://testserver/mcp" in page
    assert 'href="/settings/tokens/"' in page
    # The stdio command runs on the server's machine: an account without staff status (not
    # the person running the server) is not shown its paths.
    assert "manage.py" not in page
    made = signed_in.post(reverse("memories:tokens"), {"name": "mcp agent"}).content.decode()
    token = re.search(r'id="new-token">(mem_[^<]+)<', made).group(1)
    assert f"Bearer {token}" in made and "--transport http memory" in made


@pytest.mark.django_db
def test_a_memorys_page_names_it_once_and_has_no_open_button_to_itself(signed_in, memory_factory):
    memory = memory_factory("Lunch with Priya at the harbour.")
    page = signed_in.get(reverse("memories:detail", args=[memory.pk])).content.decode()
    assert page.count(f">Memory {memory.pk}<") == 1  # the heading
    assert f'href="/memories/{memory.pk}/">Open<' not in page
    # Redrawn on its own page (htmx says where it is), the card stays without them.
    card = signed_in.get(
        reverse("memories:card", args=[memory.pk]),
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver/memories/{memory.pk}/",
    ).content.decode()
    assert ">Open<" not in card and "card-id" not in card
    # Anywhere else the card links to the page.
    listed = signed_in.get(
        reverse("memories:card", args=[memory.pk]), HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/memories/"
    ).content.decode()
    assert ">Open<" in listed and f">Memory {memory.pk}<" in listed


@pytest.mark.django_db
def test_a_wav_cards_note_that_speech_is_not_read_shows_once(signed_in, user):
    import io

    from memories.services import extract_memory, ingest_file
    from tests.samples import wav_bytes

    memory = extract_memory(ingest_file(owner=user, fileobj=io.BytesIO(wav_bytes()), name="memo.wav").memory.pk)
    card = signed_in.get(reverse("memories:card", args=[memory.pk])).content.decode()
    assert card.count("spoken content is not read yet") == 1


@pytest.mark.django_db
def test_restore_all_brings_back_the_owners_cleared_memories_and_no_one_elses(user, other_user, memory_factory):
    from memories.models import Memory
    from memories.services import clear_owner, delete_memory, ingest_text, restore_all

    mine = [memory_factory(f"Note {i} about the garden.") for i in range(3)]
    bobs = memory_factory("Bob's note about his boat.", owner=other_user)
    delete_memory(owner=other_user, memory_id=bobs.pk)
    clear_owner(owner=user)
    # After the clear the same content may come back as a new memory: that tombstone stays.
    again = ingest_text(owner=user, text="Note 0 about the garden.").memory
    assert restore_all(owner=user) == (2, 1)
    assert set(Memory.objects.filter(owner=user).values_list("pk", flat=True)) == {again.pk, mine[1].pk, mine[2].pk}
    assert Memory.all_objects.get(pk=mine[0].pk).deleted_at is not None
    assert Memory.all_objects.get(pk=bobs.pk).deleted_at is not None  # another owner's stay as they were
    assert restore_all(owner=other_user) == (1, 0)


@pytest.mark.django_db
def test_the_deleted_page_restores_all_in_one_press(signed_in, user, memory_factory):
    from memories.models import Memory
    from memories.services import clear_owner

    for i in range(3):
        memory_factory(f"Note {i} before the clear.")
    clear_owner(owner=user)
    page = signed_in.get(reverse("memories:deleted")).content.decode()
    assert "Restore all 3" in page
    done = signed_in.post(reverse("memories:restore_all"), follow=True).content.decode()
    assert "Restored 3 memories." in done and "Nothing deleted." in done
    assert Memory.objects.filter(owner=user).count() == 3
    assert signed_in.get(reverse("memories:restore_all")).status_code == 405


@pytest.mark.django_db
def test_after_a_clear_the_consolidations_page_says_the_last_runs_insights_were_retired(signed_in, user, memory_factory):
    from memories.services import clear_owner, consolidate_owner

    memory_factory("Alice and Bob planned the Lisbon offsite for June.")
    memory_factory("Alice approved the Lisbon offsite budget.")
    consolidate_owner(owner=user)
    before = signed_in.get(reverse("memories:consolidations")).content.decode()
    assert "retired" not in before and 'id="consolidation-' in before
    clear_owner(owner=user)
    page = signed_in.get(reverse("memories:consolidations")).content.decode()
    assert "No insights yet" not in page
    assert re.search(r"Since then \d+ insights? (was|were) retired", page)
    assert "No current insights: the last run's were retired since." in page


@pytest.mark.django_db
def test_stats_say_nothing_waits_when_nothing_waits_and_scale_is_not_a_count(signed_in, user, memory_factory):
    from memories.services import consolidate_owner

    memory_factory("Alice and Bob planned the Lisbon offsite for June.")
    memory_factory("Alice approved the Lisbon offsite budget.")
    consolidate_owner(owner=user)
    page = signed_in.get(reverse("memories:stats")).content.decode()
    assert "No memory waited to be consolidated in this period." in page
    assert not re.search(r">\d+ (waiting|calls|stored)<", page)  # the old "1 waiting" over an empty chart
    assert re.search(r'aria-label="calls \(scale 0 to \d+\)"', page)


@pytest.mark.django_db
def test_staff_see_the_stdio_entry_for_this_checkout(client, user_factory):
    from django.conf import settings

    client.force_login(user_factory("root", is_staff=True))
    page = client.get(reverse("memories:settings")).content.decode()
    assert str(Path(settings.BASE_DIR) / "manage.py") in page and "--user" in page
