"""Background work never makes a user's write fail: consolidation holds the write lock only
for short stores, one owner's failure does not stop the others, and a database that stays
busy past a writer's wait answers 503 with Retry-After (nothing stored), never a 500."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading

import pytest

from memories.models import Consolidation, ConsolidationRun, Memory
from memories.services import consolidate_all, consolidate_owner, delete_memory, maintain

from .procs import PYTHON, Service, wait_for
from .test_mcp import http_client, text_of

TOPICS = ["the Falcon launch", "the budget review", "a trip to Lisbon", "the kitchen remodel", "marathon training"]
PEOPLE = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran"]


def note(i: int) -> str:
    return (
        f"{PEOPLE[i % 7]} talked about {TOPICS[i % 5]} on day {i}; "
        f"{PEOPLE[(i * 3) % 7]} wants a follow-up on {TOPICS[(i * 2) % 5]} next week (note {i})."
    )


# -- in-process: what the consolidation writes, and who it stops -----------------------------


def test_a_memory_deleted_while_its_insight_is_computed_is_not_cited(user, memory_factory):
    """The insight is computed before its write transaction opens; a memory deleted in
    between is left out of what is stored, and the insight is marked for rewriting."""
    for i in range(3):
        memory_factory(f"Project Falcon planning, part {i}: Sarah Chen leads the Falcon launch in March.")
    victim = Memory.objects.filter(owner=user).order_by("pk").first()

    def delete_while_computing(_):
        delete_memory(owner=user, memory_id=victim.pk)

    outcome = consolidate_owner(owner=user, on_batch=delete_while_computing)
    [made] = outcome.consolidations
    sources = set(made.sources.values_list("pk", flat=True))
    assert victim.pk not in sources and len(sources) == 2
    assert outcome.run.memories_consolidated == 2
    assert made.stale_at is not None  # the next run writes it again from what stands
    assert not Memory.all_objects.get(pk=victim.pk).consolidated_at


def test_an_insight_left_with_one_source_is_not_written(user, memory_factory):
    first = memory_factory("Kenji owns the billing migration; the cut-over is in May.")
    memory_factory("Kenji said the billing migration cut-over slips to June.")

    outcome = consolidate_owner(owner=user, on_batch=lambda _: delete_memory(owner=user, memory_id=first.pk))
    assert outcome.consolidations == [] and not Consolidation.objects.filter(owner=user).exists()
    assert outcome.run.error == ""


def test_one_owner_whose_data_breaks_consolidation_does_not_stop_the_next(user, other_user, memory_factory):
    # Alice's memories hold values the app never writes (as a hand-edited import could).
    for i in range(2):
        memory_factory(f"Alice's note {i} about the garden and the tomatoes.")
    Memory.objects.filter(owner=user).update(entities=[None, 5], topics=[{"x": 1}, 7])
    for i in range(2):
        memory_factory(f"Bob's note {i} about marathon training in the park.", owner=other_user)

    outcomes = consolidate_all()

    by_owner = {o.run.owner_id: o for o in outcomes}
    assert by_owner[other_user.pk].consolidations, "Bob's backlog was consolidated"
    assert Memory.objects.filter(owner=other_user, consolidated_at__isnull=True).count() == 0
    alice = ConsolidationRun.objects.get(pk=by_owner[user.pk].run.pk)
    assert alice.error.startswith("internal error: AttributeError") and alice.finished_at is not None


def test_one_owner_whose_run_raises_is_recorded_and_the_next_goes_on(user, other_user, memory_factory, monkeypatch):
    """Whatever the cause: a run that raises is closed with the reason, and the loop goes on."""
    from memories.services import consolidate as module

    for owner in (user, other_user):
        for i in range(2):
            memory_factory(f"{owner.username}'s note {i} about the Falcon launch plan.", owner=owner)
    real_store = module._store

    def store_failing_for_alice(owner, *args, **kwargs):
        if owner.pk == user.pk:
            raise RuntimeError("a space the code cannot handle")
        return real_store(owner, *args, **kwargs)

    monkeypatch.setattr(module, "_store", store_failing_for_alice)
    outcomes = consolidate_all()

    by_owner = {o.run.owner_id: o for o in outcomes}
    assert by_owner[user.pk].run.error == "internal error: RuntimeError: a space the code cannot handle"
    assert by_owner[user.pk].run.finished_at is not None
    assert by_owner[other_user.pk].consolidations and not by_owner[other_user.pk].run.error


def test_maintenance_goes_on_past_a_space_that_fails(user, other_user, memory_factory, monkeypatch, settings):
    from datetime import timedelta

    from django.utils import timezone

    from memories.services import forgetting

    settings.MEMORY_FADE_AFTER_DAYS, settings.MEMORY_FADE_HALF_LIFE_DAYS = 1, 10
    for owner in (user, other_user):
        memory_factory(f"{owner.username} keeps the spare key under the blue pot.", owner=owner)
    Memory.objects.update(created_at=timezone.now() - timedelta(days=60))
    real = forgetting._save_faded

    def failing_for_alice(batch, *args):
        if any(m.owner_id == user.pk for m in batch):
            raise RuntimeError("broken space")
        return real(batch, *args)

    monkeypatch.setattr(forgetting, "_save_faded", failing_for_alice)
    done = maintain()
    assert done["faded"] == 1
    assert Memory.objects.get(owner=other_user).importance < Memory.objects.get(owner=user).importance


# -- real processes: writes while a backlog is consolidated --------------------------------


@pytest.fixture
def service(tmp_path):
    service = Service(tmp_path).migrate()
    yield service
    service.stop_all()


def backlog(service: Service, count: int) -> None:
    lines = "\n".join(json.dumps({"text": note(i), "source": "backlog"}) for i in range(count))
    path = service.root / "backlog.jsonl"
    path.write_text(lines)
    service.manage("ingest", "--jsonl", str(path), "--user", "alice", timeout=600)


@pytest.mark.slow
def test_adds_and_recalls_succeed_while_a_backlog_is_consolidated(service):
    """The issue's scenario: consolidation works through a backlog (with the local model,
    which embeds each group's texts: seconds of work a group) while clients add through the
    API and MCP and ask. Writers give up after 5 s here (MEMORY_SQLITE_TIMEOUT): before this
    change the consolidation held the write lock for its whole chunk of groups (tens of
    seconds), so adds failed; now every call succeeds and every acknowledged add is stored."""
    tokens = service.make_users("alice", "bob")
    backlog(service, 240)
    service.env["MEMORY_SQLITE_TIMEOUT"] = "5"
    service.start_web(workers=2)
    # The local model only in the consolidation's process: it is what makes a group slow.
    consolidation = service._start(
        "consolidate", [PYTHON, "manage.py", "consolidate", "--user", "alice"], {"MEMORY_EMBEDDINGS": "local"}
    )
    assert wait_for(
        lambda: (
            service.sql("select count(*) from memories_consolidationrun where finished_at is null")[0][0] == 1
            or consolidation.poll() is not None
        ),
        timeout=120,
    )

    failures: list[str] = []
    acknowledged: dict[str, set[int]] = {"alice": set(), "bob": set()}
    lock = threading.Lock()
    stop = threading.Event()

    def api_client(user: str, worker: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            reply = service.request(
                "POST", "/api/ingest", token=tokens[user], json_body={"text": f"{user} client {worker} add {n}: {note(n + 500)}"}
            )
            if reply.status not in (200, 201):
                failures.append(f"add {reply.status} {reply.body[:200]!r}")
                continue
            with lock:
                acknowledged[user].add(reply.json()["memory_id"])
            found = service.request("GET", f"/api/recall?q=client+{worker}+add+{n}&k=5", token=tokens[user])
            if found.status != 200:
                failures.append(f"recall {found.status} {found.body[:200]!r}")

    async def mcp_client() -> None:
        async with http_client(service.url, tokens["bob"]) as client:
            n = 0
            while not stop.is_set():
                n += 1
                result = await client.call_tool("add_memory", {"text": f"agent note {n}: {note(n + 900)}"})
                if result.is_error:
                    failures.append(f"mcp add_memory: {text_of(result)}")
                    continue
                with lock:
                    acknowledged["bob"].add(result.structured_content["memory_id"])
                search = await client.call_tool("search_memories", {"query": f"agent note {n}"})
                if search.is_error:
                    failures.append(f"mcp search: {text_of(search)}")

    threads = [threading.Thread(target=api_client, args=(user, i)) for i, user in enumerate(["alice", "alice", "bob"])]
    threads.append(threading.Thread(target=lambda: asyncio.run(mcp_client())))
    for thread in threads:
        thread.start()
    # Writes go on while the consolidation runs (at most 4 minutes of it).
    consolidation_ran = wait_for(lambda: consolidation.poll() is not None, timeout=240, interval=1)
    stop.set()
    for thread in threads:
        thread.join(timeout=120)

    assert consolidation_ran, service.log_text("consolidate")[-2000:]
    assert consolidation.returncode == 0, service.log_text("consolidate")[-2000:]
    assert not failures, failures[:5]
    made = service.sql("select count(*) from memories_consolidation")[0][0]
    assert made >= 10, "the backlog was consolidated while the clients wrote"
    for user, ids in acknowledged.items():
        assert ids, f"{user}'s clients made no add at all"
        stored = {
            row[0]
            for row in service.sql(
                "select m.id from memories_memory m join auth_user u on u.id = m.owner_id where u.username = ?", (user,)
            )
        }
        assert ids <= stored, f"acknowledged but not stored for {user}: {sorted(ids - stored)[:10]}"


@pytest.mark.slow
def test_a_database_busy_past_the_wait_is_a_503_with_retry_after_and_nothing_stored(service):
    tokens = service.make_users("alice")
    service.env["MEMORY_SQLITE_TIMEOUT"] = "1"
    service.start_web(workers=1)
    assert service.request("GET", "/api/status", token=tokens["alice"]).status == 200  # the token's first use is written

    holder = sqlite3.connect(service.db_path, timeout=30, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # someone else holds the write lock, far past the 1 s wait
    try:
        reply = service.request("POST", "/api/ingest", token=tokens["alice"], json_body={"text": "Locked out note."})
        reads = service.request("GET", "/api/memories", token=tokens["alice"])

        async def agent():
            async with http_client(service.url, tokens["alice"]) as client:
                return await client.call_tool("add_memory", {"text": "Locked out agent note."})

        tool = asyncio.run(agent())
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    assert reply.status == 503, reply.body
    assert reply.headers.get("Retry-After") == "5"
    assert "nothing was changed" in reply.json()["detail"]
    assert reads.status == 200  # reading needs no write lock
    assert tool.is_error and "busy" in text_of(tool) and "nothing was changed" in text_of(tool)
    assert service.sql("select count(*) from memories_memory")[0][0] == 0

    # Once the lock is free the same write goes through.
    again = service.request("POST", "/api/ingest", token=tokens["alice"], json_body={"text": "Locked out note."})
    assert again.status in (200, 201) and service.sql("select count(*) from memories_memory")[0][0] == 1
    assert "Traceback" not in service.log_text("web")


def test_time_is_spent_outside_transactions_when_a_consolidation_computes(user, memory_factory, monkeypatch):
    """Each group is computed with no transaction open (a model call or embedding inside one
    would hold every other writer)."""
    from django.db import connection

    from memories.llm.offline import OfflineProvider

    for i in range(6):
        memory_factory(f"Team offsite planning, item {i}: Lisbon in May, budget review first.")
    baseline = len(connection.atomic_blocks)  # pytest-django's own transaction around the test
    depths = []
    real = OfflineProvider.consolidate

    def watching(self, notes):
        depths.append(len(connection.atomic_blocks))
        return real(self, notes)

    monkeypatch.setattr(OfflineProvider, "consolidate", watching)
    consolidate_owner(owner=user)
    assert depths and set(depths) == {baseline}
