"""Everything at once on one SQLite file: gunicorn with several workers, a two-worker
qcluster running the consolidation schedule, and the inbox watcher, while clients ingest,
browse, ask and press "consolidate" in parallel and files land in the inbox.

What must hold: no client ever sees a 5xx or "database is locked"; every accepted ingest is
one memory; every inbox file is one memory (identical bytes under several names, one);
no memory is in two consolidations and no two consolidation runs of one owner overlap.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.procs import Service, multipart, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def service(tmp_path):
    service = Service(tmp_path, MEMORY_CONSOLIDATE_BATCH_SIZE="4").migrate()
    yield service
    service.stop_all()


class Calls:
    """What the clients saw, shared by their threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses: Counter = Counter()
        self.bad: list[str] = []
        self.accepted: dict[str, int] = {}  # text -> memory id

    def saw(self, label: str, reply) -> None:
        with self.lock:
            self.statuses[(label, reply.status)] += 1
            if reply.status >= 500 or b"database is locked" in reply.body:
                self.bad.append(f"{label}: {reply.status} {reply.body[:300]!r}")


def test_web_workers_cluster_and_watcher_together(service):
    tokens = service.make_users("alice", "bob")
    service.start_web(workers=3)
    service.start_cluster(workers=2)
    service.start_watcher(interval=0.3)
    (service.inbox / "alice").mkdir(exist_ok=True)  # the watcher makes each user's folder too

    calls = Calls()
    stop = threading.Event()
    started = time.monotonic()

    def ingest(user: str, worker: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            text = f"{user} worker {worker} note {n}: the {n}th delivery for flat {worker} came at {n % 24}:00."
            if n % 4 == 0:
                body, ctype = multipart({"source": "load"}, {"file": (f"note-{worker}-{n}.txt", text.encode())})
                reply = service.request("POST", "/api/ingest", token=tokens[user], body=body, headers={"Content-Type": ctype})
            else:
                reply = service.request("POST", "/api/ingest", token=tokens[user], json_body={"text": text, "source": "load"})
            calls.saw("ingest", reply)
            if reply.status == 201:
                with calls.lock:
                    calls.accepted[text] = reply.json()["memory_id"]

    def press_consolidate() -> None:
        while not stop.is_set():
            reply = service.request("POST", "/api/consolidate", token=tokens["alice"])
            calls.saw("consolidate", reply)
            assert reply.status in (200, 409), reply.body
            time.sleep(0.05)

    def browse() -> None:
        while not stop.is_set():
            for path in ("/api/memories?limit=20", "/api/query?q=delivery%20flat", "/api/status", "/api/consolidations"):
                calls.saw("browse", service.request("GET", path, token=tokens["alice"]))

    def drop_files() -> None:
        for i in range(30):
            (service.inbox / "alice" / f"inbox-{i}.md").write_text(
                f"# Inbox note {i}\nThe meter reading on day {i} was {1000 + i * 7}."
            )
            time.sleep(0.1)
        same = b"One receipt, scanned by three devices: 42.50 EUR at the hardware shop."
        for name in ("receipt-phone.txt", "receipt-scanner.txt", "receipt-laptop.txt"):
            (service.inbox / "alice" / name).write_bytes(same)

    def command_consolidate() -> list[str]:
        # The command line as a third way in, beside the button and the schedule.
        outputs = []
        while not stop.is_set():
            done = service.manage("consolidate", "--user", "alice", check=False)
            assert done.returncode == 0 or "already running" in done.stderr, done.stderr
            outputs.append(done.stderr)
        return outputs

    def schedule_ran() -> bool:
        return service.sql("select count(*) from django_q_task where func = 'memories.tasks.consolidate_all'")[0][0] > 0

    with ThreadPoolExecutor(max_workers=10) as pool:
        futures = [pool.submit(ingest, user, w) for user in ("alice", "bob") for w in range(2)]
        futures += [pool.submit(press_consolidate) for _ in range(2)]
        futures += [pool.submit(browse), pool.submit(drop_files), pool.submit(command_consolidate)]
        # Once the clients have stored some memories, the consolidation schedule falls due;
        # run until it has run in the middle of all this.
        wait_for(lambda: len(calls.accepted) >= 20, timeout=60, interval=0.2)
        service.run_schedule_now("memories.consolidate_all")
        wait_for(lambda: time.monotonic() - started > 10 and schedule_ran(), timeout=90, interval=0.5)
        stop.set()
        for future in futures:
            future.result()

    print("client calls (operation, status): count", dict(calls.statuses))  # shown with -s
    assert schedule_ran(), "the consolidation schedule never ran during the load"
    assert not calls.bad, calls.bad[:5]
    assert calls.accepted, calls.statuses

    # Let the queue and the watcher finish, then check what was stored.
    def settled():
        return (
            service.sql("select count(*) from memories_memory where status = 'pending'")[0][0] == 0
            and service.sql("select count(*) from memories_processedfile")[0][0] == 33
        )

    assert wait_for(settled, timeout=90, interval=0.5), service.sql("select status, count(*) from memories_memory group by 1")

    memories = service.sql("select id, raw_text, status, source from memories_memory")
    by_text = Counter(text for _, text, _, _ in memories)
    assert all(n == 1 for n in by_text.values()), [t for t, n in by_text.items() if n > 1][:3]
    ids = {pk for pk, *_ in memories}
    for text, memory_id in calls.accepted.items():
        assert memory_id in ids and by_text[text] == 1
    assert {status for _, _, status, _ in memories} == {"ready"}

    # The inbox: 30 distinct files are 30 memories; three copies of one receipt are one.
    files = service.sql("select status, count(*) from memories_processedfile group by status")
    assert dict(files) == {"ingested": 31, "duplicate": 2}
    assert sum(1 for _, _, _, source in memories if source.startswith(("inbox-", "receipt-"))) == 31

    # Consolidation: nobody's memory is in two insights, and runs of one owner never overlapped.
    twice = service.sql("select memory_id, count(*) from memories_consolidation_sources group by memory_id having count(*) > 1")
    assert twice == []
    assert service.sql("select count(*) from memories_consolidation")[0][0] > 0
    runs = service.sql(
        "select owner_id, started_at, finished_at from memories_consolidationrun where finished_at is not null "
        "order by owner_id, started_at"
    )
    for (owner_a, _, end_a), (owner_b, start_b, _) in zip(runs, runs[1:]):
        assert owner_a != owner_b or start_b >= end_a, f"overlapping runs: {end_a} > {start_b}"
    unfinished = service.sql("select count(*) from memories_consolidationrun where finished_at is null")[0][0]
    assert unfinished == 0
    assert "database is locked" not in service.log_text("web")


def test_same_text_sent_by_two_clients_at_once_is_one_memory(service):
    token = service.make_users("alice")["alice"]
    service.start_web(workers=3)
    ids_per_round = []
    for r in range(8):
        text = f"Round {r}: the same note, sent by several agents at the same moment, is still one memory."
        barrier = threading.Barrier(4)

        def send():
            barrier.wait()
            return service.request("POST", "/api/ingest", token=token, json_body={"text": text})

        with ThreadPoolExecutor(max_workers=4) as pool:
            replies = list(pool.map(lambda _: send(), range(4)))
        assert all(reply.status in (200, 201) for reply in replies)
        ids_per_round.append({reply.json()["memory_id"] for reply in replies})
    stored = service.sql("select raw_text, count(*) from memories_memory group by raw_text")
    assert all(n == 1 for _, n in stored), stored
    assert all(len(ids) == 1 for ids in ids_per_round)
