"""Liveness and readiness for whoever runs the service (a load balancer, compose, k8s).

Liveness (/healthz) asks nothing of anyone: the process answers. Readiness (/readyz) checks
what a request or a task needs: the database, the task broker, and that the task cluster
is alive. The cluster's heartbeat is its schedule: it moves the sweep's next run forward
every five minutes, so a next run far in the past means no cluster is running.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from ..schedule import SWEEP_NAME

log = logging.getLogger(__name__)

# The sweep runs every 5 minutes; a cluster busy with a long task may start it late.
CLUSTER_LATE_AFTER = timedelta(minutes=12)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _failed(name: str, what: str, exc: Exception) -> Check:
    """A failed check. /readyz answers anyone, so it says what kind of error it was; the
    driver's own words (host, port, database user) go to the log for whoever runs it."""
    log.warning("readiness: %s: %s: %s", name, type(exc).__name__, exc)
    return Check(name, False, f"{what}: {type(exc).__name__} (the service log has the details)")


def _database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not ready"
        return _failed("database", "the database did not answer", exc)
    return Check("database", True, connection.vendor)


def _broker() -> Check:
    url = settings.Q_CLUSTER.get("redis")
    if not url:
        return Check("broker", True, "the database (django-q2 ORM broker)")
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return _failed("broker", "Redis did not answer", exc)
    return Check("broker", True, "Redis")


def _cluster() -> Check:
    from django_q.models import Schedule

    try:
        next_run = Schedule.objects.filter(name=SWEEP_NAME).values_list("next_run", flat=True).first()
    except Exception as exc:
        return _failed("cluster", "the schedule could not be read", exc)
    if next_run is None:
        return Check("cluster", False, "no schedule: run `manage.py migrate`")
    late = timezone.now() - next_run
    if late > CLUSTER_LATE_AFTER:
        return Check(
            "cluster",
            False,
            f"the task cluster has not run its 5-minute sweep for {int(late.total_seconds() // 60)} minutes; is qcluster running?",
        )
    return Check("cluster", True, f"sweep due {next_run:%Y-%m-%d %H:%M:%S}")


def readiness() -> list[Check]:
    database = _database()
    # The cluster check reads the database; without one it can only repeat that failure.
    cluster = _cluster() if database.ok else Check("cluster", False, "unknown: the database is not reachable")
    return [database, _broker(), cluster]
