"""The data behind the graph, timeline and stats pages: shape, scoping, filters, limits."""

from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone

from memories.llm import circuit
from memories.models import Memory, MemoryLink, ProviderUsage
from memories.services import consolidate_owner, visual
from memories.services.usage import record_breaker_trip, record_call

pytestmark = pytest.mark.django_db

TEXTS = [
    "Sarah Chen leads Project Falcon; launch planned for March 15 with the pricing team.",
    "Project Falcon budget review: Sarah Chen asked for two more engineers.",
    "Dentist appointment moved to Thursday morning at nine.",
    "Priya from Acme says the pricing launch moved to October.",
    "Acme pricing workshop notes: Priya wants a usage-based tier.",
    "Grocery list: oat milk, lemons, basil and rice.",
]


@pytest.fixture
def space(memory_factory, user):
    made = []
    for i, text in enumerate(TEXTS):
        when = timezone.make_aware(datetime(2025, 1 + i, 10, 12, 0))
        made.append(memory_factory(text, source="notes" if i % 2 else "meetings", occurred_at=when.isoformat()))
    consolidate_owner(owner=user)
    return made


def _api(client, path, **params):
    response = client.get(f"/api/{path}", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_graph_has_memories_links_and_insight_hubs(signed_in, space):
    data = _api(signed_in, "graph")
    memory_nodes = [n for n in data["nodes"] if n["kind"] == "memory"]
    hubs = [n for n in data["nodes"] if n["kind"] == "insight"]
    assert {n["memory_id"] for n in memory_nodes} == {m.pk for m in space}
    assert data["total"] == data["shown"] == len(space) and data["truncated"] is False
    assert hubs, "the consolidation should appear as an insight hub"
    ids = {n["id"] for n in data["nodes"]}
    for edge in data["edges"]:
        assert edge["source"] in ids and edge["target"] in ids
        assert edge["relationship"]
    kinds = {e["kind"] for e in data["edges"]}
    assert "insight" in kinds
    links = MemoryLink.objects.filter(from_memory__owner=space[0].owner).count()
    assert sum(e["kind"] in ("link", "consolidation", "updates") for e in data["edges"]) == links
    # Bigger for more important: the page sizes nodes from this.
    assert all(0 <= n["importance"] <= 1 for n in memory_nodes)


def test_graph_filters_by_topic_entity_source_and_date(signed_in, space):
    by_source = _api(signed_in, "graph", source="notes")
    assert {n["memory_id"] for n in by_source["nodes"] if n["kind"] == "memory"} == {m.pk for m in space if m.source == "notes"}
    entity = next(e for e in space[0].entities if "Sarah" in e or "Falcon" in e)
    by_entity = _api(signed_in, "graph", entity=entity)
    shown = {n["memory_id"] for n in by_entity["nodes"] if n["kind"] == "memory"}
    assert space[0].pk in shown and space[2].pk not in shown
    topic = space[5].topics[0]
    by_topic = _api(signed_in, "graph", topic=topic)
    assert space[5].pk in {n["memory_id"] for n in by_topic["nodes"] if n["kind"] == "memory"}
    feb_to_mar = _api(signed_in, "graph", date_from="2025-02-01", date_to="2025-03-31")
    assert {n["memory_id"] for n in feb_to_mar["nodes"] if n["kind"] == "memory"} == {space[1].pk, space[2].pk}


def test_graph_limit_keeps_the_most_important_and_says_it_cut(signed_in, space):
    data = _api(signed_in, "graph", limit=2)
    memory_nodes = [n for n in data["nodes"] if n["kind"] == "memory"]
    assert len(memory_nodes) == 2 and data["truncated"] is True and data["total"] == len(space)
    top = sorted(space, key=lambda m: (-m.importance, -m.pk))[:2]
    assert {n["memory_id"] for n in memory_nodes} == {m.pk for m in top}
    too_many = signed_in.get("/api/graph", {"limit": visual.GRAPH_MAX_LIMIT + 1})
    assert too_many.status_code == 422 and "limit" in too_many.json()["detail"]


def test_graph_focus_expands_a_neighbourhood(signed_in, space, user, memory_factory):
    lonely = memory_factory("A note about nothing else at all, written later.", source="late")
    link = MemoryLink.objects.filter(from_memory__owner=user).first()
    data = _api(signed_in, "graph", focus=link.from_memory_id)
    shown = {n["memory_id"] for n in data["nodes"] if n["kind"] == "memory"}
    assert link.from_memory_id in shown and link.to_memory_id in shown
    assert lonely.pk not in shown
    alone = _api(signed_in, "graph", focus=lonely.pk)
    assert [n["memory_id"] for n in alone["nodes"]] == [lonely.pk] and alone["edges"] == []


def test_graph_shows_near_duplicates_and_updates_edges(signed_in, user, memory_factory):
    first = memory_factory("The quarterly report is due on the fifth of April for the finance team review.")
    second = memory_factory("The quarterly report is due on the fifth of April for the finance team review!!")
    newer = memory_factory("Update: the team offsite moved from Lisbon to Porto.")
    older = memory_factory("The team offsite is in Lisbon.")
    MemoryLink.objects.create(from_memory=newer, to_memory=older, relationship="updates: the venue changed")
    Memory.objects.filter(pk=second.pk).update(duplicate_of=first)
    data = _api(signed_in, "graph")
    edges = {(e["source"], e["target"]): e for e in data["edges"]}
    assert edges[(f"m{second.pk}", f"m{first.pk}")]["kind"] == "duplicate"
    assert edges[(f"m{newer.pk}", f"m{older.pk}")]["kind"] == "updates"


def test_graph_never_shows_another_owners_memories(bob_client, signed_in, space, other_user, memory_factory):
    bobs = memory_factory("Bob's secret plan for the garden shed.", owner=other_user)
    as_bob = _api(bob_client, "graph")
    assert [n.get("memory_id") for n in as_bob["nodes"]] == [bobs.pk]
    assert as_bob["edges"] == []
    # Focusing on someone else's memory looks like a missing one.
    assert bob_client.get("/api/graph", {"focus": space[0].pk}).status_code == 404
    assert signed_in.get("/api/graph", {"focus": bobs.pk}).status_code == 404
    alices = _api(signed_in, "graph")
    assert bobs.pk not in {n.get("memory_id") for n in alices["nodes"]}
    assert _api(bob_client, "timeline", zoom="year")["buckets"][0]["occurred"] == 1
    assert _api(bob_client, "timeline", zoom="year")["runs"] == []


def test_graph_refuses_bad_input_with_4xx(signed_in, space):
    for params in (
        {"date_from": "2025-05-01", "date_to": "2025-01-01"},
        {"date_from": "yesterday"},
        {"focus": "x"},
        {"depth": 9},
        {"limit": 0},
    ):
        response = signed_in.get("/api/graph", params)
        assert response.status_code == 422, params
        assert response.json()["detail"]


def test_timeline_counts_by_occurred_and_stored_with_runs(signed_in, space):
    data = _api(signed_in, "timeline", zoom="month")
    by_start = {b["start"]: b for b in data["buckets"]}
    for month in range(1, 7):
        assert by_start[f"2025-{month:02d}-01"]["occurred"] == 1
    this_month = timezone.localdate().replace(day=1).isoformat()
    assert by_start[this_month]["stored"] == len(space)
    assert sum(b["occurred"] for b in data["buckets"]) == sum(b["stored"] for b in data["buckets"]) == len(space)
    assert len(data["runs"]) == 1 and data["runs"][0]["memories_consolidated"] >= 2
    # Months between the first memory and today are there with zero, so the axis is true.
    starts = [b["start"] for b in data["buckets"]]
    assert starts == sorted(starts) and len(starts) == len(set(starts))


def test_timeline_zooms_and_ranges(signed_in, space):
    year = _api(signed_in, "timeline", zoom="year", date_from="2025-01-01", date_to="2025-12-31")
    assert [b["start"] for b in year["buckets"]] == ["2025-01-01"] and year["buckets"][0]["occurred"] == len(space)
    week = _api(signed_in, "timeline", zoom="week", date_from="2025-01-01", date_to="2025-02-28")
    assert all(date.fromisoformat(b["start"]).weekday() == 0 for b in week["buckets"])
    assert sum(b["occurred"] for b in week["buckets"]) == 2
    day = _api(signed_in, "timeline", zoom="day", date_from="2025-03-10", date_to="2025-03-10")
    assert day["buckets"] == [{"start": "2025-03-10", "end": "2025-03-10", "occurred": 1, "stored": 0}]
    assert signed_in.get("/api/timeline", {"zoom": "decade"}).status_code == 422


def test_timeline_caps_the_number_of_buckets(signed_in, memory_factory):
    memory_factory("Long ago.", occurred_at="2020-01-01")
    memory_factory("Now.")
    data = _api(signed_in, "timeline", zoom="day")
    assert len(data["buckets"]) == visual.MAX_BUCKETS and data["truncated"] is True
    assert data["buckets"][-1]["start"] == timezone.localdate().isoformat()


def test_stats_shape_and_counts(signed_in, space, user):
    data = _api(signed_in, "stats", days=7)
    assert len(data["stored_per_day"]) == 7 and data["stored_per_day"][-1]["count"] == len(space)
    assert data["by_status"]["ready"] == len(space) and data["by_status"]["failed"] == 0
    assert {r["source"]: r["count"] for r in data["by_source"]} == {"notes": 3, "meetings": 3}
    assert data["top_topics"] and all(len(t["counts"]) == len(data["weeks"]) for t in data["top_topics"])
    assert any("Sarah Chen" in t["name"] or "Falcon" in t["name"] for t in data["top_entities"])
    # Six extractions and at least one consolidation call, all counted for alice.
    today = data["provider_per_day"][-1]
    assert today["calls"] >= len(space) + 1 and today["failures"] == 0
    consolidated = sum(1 for m in space if Memory.objects.get(pk=m.pk).consolidated_at)
    assert data["backlog_per_day"][-1]["backlog"] == len(space) - consolidated
    assert signed_in.get("/api/stats", {"days": 0}).status_code == 422
    assert signed_in.get("/api/stats", {"days": 10_000}).status_code == 422


def test_stats_backlog_goes_down_when_consolidated(signed_in, memory_factory, user):
    memory_factory("First new note about the Falcon launch and pricing.")
    memory_factory("Second new note about the Falcon launch timeline.")
    before = _api(signed_in, "stats", days=2)["backlog_per_day"][-1]["backlog"]
    consolidate_owner(owner=user)
    after = _api(signed_in, "stats", days=2)["backlog_per_day"][-1]["backlog"]
    assert before == 2 and after == 0


def test_stats_are_scoped_and_breaker_trips_are_engine_wide(bob_client, signed_in, space, user, other_user):
    record_call(owner_id=user.pk, provider="gemini", failed=True)
    record_breaker_trip(provider="gemini")
    bob = _api(bob_client, "stats", days=1)
    assert bob["stored_per_day"][-1]["count"] == 0 and bob["by_source"] == [] and bob["top_topics"] == []
    assert bob["provider_per_day"][-1] == {"day": timezone.localdate().isoformat(), "calls": 0, "failures": 0, "breaker_trips": 1}
    alice = _api(signed_in, "stats", days=1)["provider_per_day"][-1]
    assert alice["failures"] == 1 and alice["breaker_trips"] == 1


def test_usage_counts_accumulate_in_one_row_a_day(user):
    for failed in (False, False, True):
        record_call(owner_id=user.pk, provider="offline", failed=failed)
    row = ProviderUsage.objects.get(owner=user)
    assert (row.calls, row.failures, row.day) == (3, 1, timezone.localdate())


def test_a_tripping_breaker_is_recorded(settings, user, memory_factory):
    for i in range(circuit.FAILURES_TO_OPEN):
        assert circuit.record_failure("offline", "boom") is (i == circuit.FAILURES_TO_OPEN - 1)
    assert circuit.record_failure("offline", "boom") is False  # already open: not a new trip


def test_the_bank_accepts_the_ranges_the_timeline_links_to(signed_in, space):
    page = signed_in.get("/memories/", {"date_by": "occurred", "date_from": "2025-02-01", "date_to": "2025-02-28"})
    assert page.status_code == 200
    body = page.content.decode()
    assert f'id="memory-{space[1].pk}"' in body and f'id="memory-{space[0].pk}"' not in body
    stored = signed_in.get("/memories/", {"date_by": "stored", "date_from": timezone.localdate().isoformat()})
    assert all(f'id="memory-{m.pk}"' in stored.content.decode() for m in space)
    by_source = signed_in.get("/memories/", {"source": "notes"}).content.decode()
    assert f'id="memory-{space[1].pk}"' in by_source and f'id="memory-{space[0].pk}"' not in by_source
    backwards = signed_in.get("/memories/", {"date_from": "2025-03-01", "date_to": "2025-01-01"})
    assert backwards.status_code == 400 and b"starts after it ends" in backwards.content


def test_pages_render_for_the_owner_only(signed_in, space):
    from django.test import Client

    for url in ("/graph/", "/timeline/", "/stats/"):
        assert signed_in.get(url).status_code == 200
        assert Client().get(url).status_code == 302  # signed out: to the sign-in page
    timeline = signed_in.get("/timeline/", {"zoom": "month"}).content.decode()
    assert "date_by=occurred&amp;date_from=2025-03-01&amp;date_to=2025-03-31" in timeline
    assert signed_in.get("/timeline/", {"zoom": "century"}).status_code == 400
    assert signed_in.get("/stats/", {"days": "x"}).status_code == 400


def test_the_openapi_schema_documents_the_picture_endpoints(client):
    paths = client.get("/api/openapi.json").json()["paths"]
    for path in ("/api/graph", "/api/timeline", "/api/stats"):
        assert "get" in paths[path]


def test_picture_endpoints_need_authentication(client):
    for path in ("graph", "timeline", "stats"):
        assert client.get(f"/api/{path}").status_code == 401


def test_consolidation_progress_is_saved_per_batch(settings, monkeypatch, user, memory_factory):
    settings.MEMORY_CONSOLIDATE_BATCH_SIZE = 2
    for i in range(6):
        memory_factory(f"Note number {i} about the garden: tomatoes, beans and water schedule {i}.")
    seen = []
    from memories.models import ConsolidationRun
    from memories.services import consolidate as consolidate_module

    original = consolidate_module._store

    def spy(*args, **kwargs):
        run = ConsolidationRun.objects.get(owner=user, finished_at__isnull=True)
        seen.append(run.consolidations_made)
        return original(*args, **kwargs)

    monkeypatch.setattr(consolidate_module, "_store", spy)
    # Saved per transaction: one group each, as for a language model (the offline engine
    # writes STORE_CHUNK groups a transaction, all at once).
    monkeypatch.setattr(consolidate_module, "STORE_CHUNK", 1)
    consolidate_owner(owner=user)
    assert seen == [0, 1, 2]


def test_timeline_bucket_helpers():
    assert visual._bucket_start(date(2025, 3, 13), "week") == date(2025, 3, 10)
    assert visual._next_bucket(date(2025, 12, 1), "month") == date(2026, 1, 1)
    assert visual._next_bucket(date(2025, 1, 1), "year") == date(2026, 1, 1)
    assert visual._next_bucket(date(2025, 3, 10), "week") - timedelta(days=1) == date(2025, 3, 16)


def test_a_charts_top_number_is_its_scale_and_all_zero_is_said_in_words():
    from memories.templatetags.charts import line_chart

    series = [("calls", "s0", "calls"), ("failures", "bad", "failures")]
    days = [{"day": date(2026, 11, d), "calls": c, "failures": 0} for d, c in ((1, 0), (2, 22))]
    chart = str(line_chart(days, series=series, title="calls"))
    # 22 calls on one day, drawn against a scale of 25: the 25 must not read as "25 calls".
    assert "25 calls" not in chart and 'aria-label="calls (scale 0 to 25)"' in chart
    idle = [{"day": date(2026, 11, d), "calls": 0, "failures": 0} for d in (1, 2)]
    assert str(line_chart(idle, series=series, title="calls", empty="No model calls in this period.")) == (
        '<p class="muted empty-chart">No model calls in this period.</p>'
    )
