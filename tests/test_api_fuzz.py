"""Schema-driven fuzzing: schemathesis reads the API's own OpenAPI schema and sends valid
and invalid requests to every operation through WSGI (in-process, on the test database),
authenticated with a real token. No request may end in a server error.

Bounded in examples per operation; derandomized so a CI run is reproducible — a failure
prints the exact request, and the same run finds it again.
"""

import pytest
import schemathesis
from django.core.cache import cache
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from memories.services.tokens import create_token
from memoryagent.wsgi import application

EXAMPLES = 25
NOTES = [
    "Met Priya from Acme about the Q3 pricing launch; she wants the deck by Friday.",
    "Acme's pricing launch slipped to October because legal has not signed off.",
    "Booked flights to Berlin for the Acme offsite in November.",
]


@pytest.fixture
def keep_test_connection():
    """Calls through the WSGI app fire request_started/finished, whose handler closes a
    connection that is inside a transaction (the test's): on PostgreSQL that ends the
    test's transaction mid-run. Django's own test client detaches it the same way."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_setup(user, memory_factory, settings, keep_test_connection):
    """A user with a few consolidated memories, a token, and rate limits out of the way."""
    from memories.services import consolidate_owner

    settings.MEMORY_RATE_LIMIT_INGEST = ""
    settings.MEMORY_RATE_LIMIT_QUERY = ""
    cache.clear()
    memories = [memory_factory(text) for text in NOTES]
    consolidate_owner(owner=user)
    token = create_token(owner=user, name="fuzz")[1]
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)
    return schema, {"Authorization": f"Bearer {token}"}, memories


def _run(operation, headers, mode, **fixed):
    failures = []

    @given(case=operation.as_strategy(generation_mode=mode, **fixed))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case):
        response = case.call(headers=headers)
        if response.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path} {case.query} {case.body!r} -> {response.status_code}")
        assert response.status_code < 500, failures[-1]

    check()


@pytest.mark.slow
def test_no_server_errors_anywhere(fuzz_setup):
    schema, headers, memories = fuzz_setup
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 13
    # Deleting goes last, or it would take the memory away from the other operations.
    by_id = sorted((op for op in operations if "{memory_id}" in op.path), key=lambda op: op.method.upper() == "DELETE")
    # First against a memory that exists (random ids almost always 404 before any body is read)...
    for operation in by_id:
        _run(operation, headers, GenerationMode.POSITIVE, path_parameters={"memory_id": memories[0].pk})
        _run(operation, headers, GenerationMode.NEGATIVE, path_parameters={"memory_id": memories[1].pk})
    # ...then everything, valid and invalid, including clear and delete.
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _run(operation, headers, mode)
