"""Crash and restart with real processes: kill -9 the task cluster, the inbox watcher or the
web server in the middle of an ingest, start it again, and the memory still completes —
once. The model is a fake Gemini on loopback that holds the first calls open, so the kill
lands while extraction is in flight.

Waiting ten minutes for an extraction lease to run out is not a test: the lease and the
sweep schedule are moved back in the database instead ("time passed"), and everything
after that is the real service doing its real work.
"""

from __future__ import annotations

import http.client
import json
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from tests.fake_model_servers import FakeGemini, Scripted
from tests.procs import Service, sqlite_time, wait_for

pytestmark = pytest.mark.slow

EXTRACTED = {
    "summary": "The boiler service is booked for the 3rd of March.",
    "entities": ["boiler"],
    "topics": ["home"],
    "importance": 0.6,
    "occurred_at": None,
}


class SlowGemini(FakeGemini):
    """Answers every extraction with the same structured memory once the scripted queue is
    empty; a scripted reply with a long delay is a model that is still thinking."""

    def next_scripted(self) -> Scripted:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return Scripted(200, json.dumps(self.generate_body(json.dumps(EXTRACTED))).encode())


@pytest.fixture
def gemini():
    with SlowGemini() as fake:
        yield fake


def gemini_service(tmp_path, fake) -> Service:
    service = Service(
        tmp_path,
        MEMORY_LLM_PROVIDER="gemini",
        GEMINI_API_KEY="test-key",
        GEMINI_BASE_URL=fake.url,
        GEMINI_MODEL="gemini-test",
        MEMORY_LLM_MAX_RETRIES="1",
    )
    return service.migrate()


@pytest.fixture
def service_cleanup():
    services = []
    yield services.append
    for service in services:
        service.stop_all()


def let_lease_run_out(service: Service, memory_id: int) -> None:
    """Eleven minutes pass for this memory: its extraction lease (10 min) has run out."""
    past = sqlite_time(timedelta(minutes=-11))
    service.sql("update memories_memory set extracting_since = ?, updated_at = ? where id = ?", (past, past, memory_id))


def events(service: Service, memory_id: int, action: str) -> int:
    return service.sql(
        "select count(*) from memories_event where subject_type='memory' and subject_id=? and action=?", (memory_id, action)
    )[0][0]


def test_cluster_killed_mid_extraction_resumes_from_the_schedule_after_restart(tmp_path, gemini, service_cleanup):
    service = gemini_service(tmp_path, gemini)
    service_cleanup(service)
    token = service.make_users("alice")["alice"]
    gemini.enqueue_json(EXTRACTED, delay=300)  # the first extraction never comes back in time
    service.start_web()
    service.start_cluster()

    text = "Booked the boiler service for the 3rd of March; the engineer calls ahead."
    reply = service.request("POST", "/api/ingest", token=token, json_body={"text": text, "source": "crash-test"})
    assert reply.status == 201, reply.body
    memory_id = reply.json()["memory_id"]
    assert wait_for(lambda: len(gemini.generate_calls()) == 1, timeout=60), service.log_text("cluster")[-2000:]
    in_flight = service.memory(memory_id)
    assert in_flight["status"] == "pending" and in_flight["extracting_since"] and in_flight["attempts"] == 1

    service.kill("cluster")  # kill -9 the whole cluster while the model is thinking

    after_crash = service.memory(memory_id)
    assert after_crash["raw_text"] == text and after_crash["status"] == "pending"
    # The killed worker's task stays claimed in the broker for Q_CLUSTER["retry"] (15 min);
    # the sweeper is what notices. Time passes: the lease runs out, the 5-minute sweep is due.
    let_lease_run_out(service, memory_id)
    service.start_cluster()
    service.run_schedule_now("memories.resume_stuck")
    assert wait_for(lambda: service.memory(memory_id)["status"] != "pending", timeout=120, interval=0.5), service.log_text(
        "cluster"
    )[-3000:]
    done = service.memory(memory_id)
    assert done["status"] == "ready" and done["summary"] == EXTRACTED["summary"]
    assert done["attempts"] == 2 and done["extracting_since"] is None
    assert len(gemini.generate_calls()) == 2
    assert events(service, memory_id, "extracted") == 1

    # The killed worker's own delivery comes back once the broker's retry window has passed
    # (moved back here too): the memory is already extracted, so the model is not called again.
    # Everything else queued meanwhile (the sweep, its re-queue) is done and acknowledged.
    assert wait_for(lambda: service.sql("select count(*) from django_q_ormq")[0][0] == 1, timeout=30), (
        "the killed worker's task should still be claimed in the broker"
    )
    service.sql("update django_q_ormq set lock = ?", (sqlite_time(timedelta(minutes=-20)),))
    assert wait_for(lambda: service.sql("select count(*) from django_q_ormq")[0][0] == 0, timeout=60)
    assert wait_for(
        lambda: service.sql("select count(*) from django_q_task where name = ?", (f"extract-{memory_id}",))[0][0] >= 2, timeout=30
    )
    assert len(gemini.generate_calls()) == 2
    assert events(service, memory_id, "extracted") == 1
    assert service.sql("select count(*) from memories_memory")[0][0] == 1


def test_watcher_killed_mid_extraction_neither_loses_nor_duplicates_the_file(tmp_path, gemini, service_cleanup):
    service = gemini_service(tmp_path, gemini)
    service_cleanup(service)
    gemini.enqueue_json(EXTRACTED, delay=300)
    service.start_cluster()
    watcher = service.start_watcher(interval=0.3)

    note = service.inbox / "boiler.txt"
    note.write_text("The boiler engineer comes on the 3rd of March between 8 and 12.")
    assert wait_for(lambda: len(gemini.generate_calls()) == 1, timeout=60), service.log_text("watcher")[-2000:]
    (memory_id,) = [row[0] for row in service.sql("select id from memories_memory")]
    assert service.memory(memory_id)["extracting_since"]

    service.kill("watcher")
    assert watcher.returncode == -signal.SIGKILL

    # Restarted, the watcher knows the file (recorded before extraction began) and leaves it.
    service.start_watcher(interval=0.3)
    heartbeat = service.data_dir / "inbox-watcher.heartbeat"
    seen = heartbeat.stat().st_mtime_ns
    assert wait_for(lambda: heartbeat.stat().st_mtime_ns > seen, timeout=30)
    seen = heartbeat.stat().st_mtime_ns
    assert wait_for(lambda: heartbeat.stat().st_mtime_ns > seen, timeout=30)  # a second full pass
    assert service.sql("select count(*) from memories_memory")[0][0] == 1
    assert service.sql("select count(*) from memories_processedfile")[0][0] == 1
    assert len(gemini.generate_calls()) == 1

    # The lease runs out; the sweeper (here run by hand, as its schedule would) hands it to the cluster.
    let_lease_run_out(service, memory_id)
    out = service.shell("from memories.services import resume_stuck; print(resume_stuck())")
    assert out.strip().endswith(f"[{memory_id}]")
    assert wait_for(lambda: service.memory(memory_id)["status"] == "ready", timeout=60), service.log_text("cluster")[-3000:]
    assert service.sql("select count(*) from memories_memory")[0][0] == 1
    assert events(service, memory_id, "extracted") == 1
    assert len(gemini.generate_calls()) == 2


def test_web_server_killed_mid_burst_keeps_every_accepted_ingest_exactly_once(tmp_path, service_cleanup):
    """kill -9 gunicorn while clients are posting; the cluster is down too, so accepted work
    sits in the queue. After restart, clients resend what got no answer (as any client would):
    everything accepted ends ready, and nothing is stored twice."""
    service = Service(tmp_path).migrate()
    service_cleanup(service)
    token = service.make_users("alice")["alice"]
    service.start_web(workers=2)

    texts = [f"Burst note {i}: the parcel for flat {i} went to the neighbour at number {i + 40}." for i in range(60)]
    answers: dict[int, int | None] = {}
    started = threading.Event()

    def post(i: int) -> None:
        started.set()
        try:
            reply = service.request("POST", "/api/ingest", token=token, json_body={"text": texts[i]}, timeout=20)
        except (OSError, http.client.HTTPException):
            # The connection died with the server, before the answer or halfway through its
            # body (IncompleteRead): the client does not know whether it was stored.
            answers[i] = None
            return
        assert reply.status < 500, reply.body
        answers[i] = reply.json()["memory_id"] if reply.status in (200, 201) else None

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(post, i) for i in range(len(texts))]
        started.wait(10)
        wait_for(lambda: service.sql("select count(*) from memories_memory")[0][0] >= 10, timeout=30, interval=0.02)
        service.kill("web")
        for future in futures:
            future.result()
    accepted = {i: m for i, m in answers.items() if m is not None}
    assert accepted, "no ingest was accepted before the kill"
    assert len(accepted) < len(texts), "the kill came after the burst; nothing was cut off"

    service.start_web(workers=2)
    for i, memory_id in list(answers.items()):
        if memory_id is None:  # resend what got no answer
            reply = service.request("POST", "/api/ingest", token=token, json_body={"text": texts[i]})
            assert reply.status in (200, 201), reply.body
            answers[i] = reply.json()["memory_id"]
    for i, memory_id in accepted.items():
        assert answers[i] == memory_id  # an accepted ingest is the same memory when resent

    service.start_cluster()
    # A request killed between its commit and its queue write left a memory with no task:
    # the sweep (run by hand here, as the 5-minute schedule would) queues those again.
    service.shell(
        "from datetime import timedelta; from memories.services import resume_stuck; resume_stuck(older_than=timedelta(0))"
    )
    assert wait_for(
        lambda: service.sql("select count(*) from memories_memory where status != 'ready'")[0][0] == 0, timeout=90, interval=0.5
    ), service.sql("select id, status, error from memories_memory where status != 'ready'")
    rows = service.sql("select id, raw_text from memories_memory")
    assert sorted(text for _, text in rows) == sorted(texts)  # every text once, none lost, none twice
    assert {answers[i] for i in range(len(texts))} == {pk for pk, _ in rows}
    extracted = service.sql("select subject_id, count(*) from memories_event where action='extracted' group by subject_id")
    assert len(extracted) == len(texts) and all(n == 1 for _, n in extracted)
