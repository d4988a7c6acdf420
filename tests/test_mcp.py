"""The MCP server, driven by the official SDK's own client: over Streamable HTTP against a
live server (pytest-django's, and a real gunicorn), and over stdio against `manage.py mcp`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memories.models import Event, Memory
from memories.services.tokens import create_token

from .procs import PYTHON, ROOT, Service

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {
    "add_memory",
    "search_memories",
    "ask",
    "get_memory",
    "list_memories",
    "update_memory",
    "delete_memory",
    "consolidate",
    "status",
}
FALCON = "Sarah Chen leads Project Falcon; the launch is set for March 15."


@contextlib.asynccontextmanager
async def http_client(url: str, token: str | None, path: str = "/mcp", **options):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # Closed here: the transport leaves a client it was given open (and the server thread
    # serving its keep-alive connection, with its database connection, with it).
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url + path, http_client=http), **options) as client:
            yield client


def run(coroutine):
    return asyncio.run(coroutine)


def errors_in(error: BaseException) -> list[str]:
    """The messages of an error and, for the client's task groups, of every error inside."""
    return [str(error)] + [m for inner in getattr(error, "exceptions", ()) for m in errors_in(inner)]


def text_of(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture
def alice_token(user):
    return create_token(owner=user, name="agent")[1]


@pytest.fixture
def bob_token(other_user):
    return create_token(owner=other_user, name="bob's agent")[1]


async def add_search_ask_delete(client: Client) -> dict:
    """The agent's everyday loop; returns what it saw along the way."""
    seen = {}
    added = await client.call_tool("add_memory", {"text": FALCON, "source": "chat", "occurred_at": "2026-01-10"})
    assert not added.is_error, text_of(added)
    memory_id = added.structured_content["memory_id"]
    seen["added"] = added.structured_content

    found = (await client.call_tool("search_memories", {"query": "Who leads Project Falcon?"})).structured_content
    seen["found"] = found
    assert found["memories"] and found["memories"][0]["id"] == memory_id
    assert found["memories"][0]["reasons"]

    answered = await client.call_tool("ask", {"question": "Who leads Project Falcon?"})
    assert not answered.is_error, text_of(answered)
    seen["answer"] = answered.structured_content

    got = await client.call_tool("get_memory", {"memory_id": memory_id})
    assert got.structured_content["text"] == FALCON
    resource = await client.read_resource(f"memory://memories/{memory_id}")
    assert json.loads(resource.contents[0].text)["id"] == memory_id

    deleted = await client.call_tool("delete_memory", {"memory_id": memory_id})
    assert deleted.structured_content["status"] == "deleted"
    after = (await client.call_tool("search_memories", {"query": "Who leads Project Falcon?"})).structured_content
    seen["after_delete"] = after
    again = await client.call_tool("add_memory", {"text": FALCON})
    seen["re_add"] = (again.is_error, text_of(again))
    return seen


def check_loop(seen: dict) -> None:
    memory_id = seen["added"]["memory_id"]
    assert seen["added"]["status"] == "ingested"
    # Found at once, before any worker extracted it, and said to be pending.
    first = seen["found"]["memories"][0]
    assert first["status"] == "pending" and any("pending" in reason for reason in first["reasons"])
    answer = seen["answer"]
    shown = {m["id"] for m in answer["memories"]}
    assert memory_id in answer["cited"] and f"[Memory {memory_id}]" in answer["answer"]
    assert set(answer["cited"]) <= shown  # every citation points at a memory the answer was given
    assert memory_id not in {m["id"] for m in seen["after_delete"]["memories"]}
    is_error, message = seen["re_add"]
    assert is_error and "was deleted" in message and f"restore memory {memory_id}" in message


def test_tools_are_listed_with_descriptions_schemas_and_hints(live_server, alice_token):
    async def scenario():
        async with http_client(live_server.url, alice_token) as client:
            return (await client.list_tools()).tools, (await client.list_resource_templates()).resource_templates

    tools, templates = run(scenario())
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == TOOLS
    for tool in tools:
        assert len(tool.description) > 40 and tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None
    assert by_name["search_memories"].annotations.read_only_hint and by_name["ask"].annotations.read_only_hint
    assert by_name["delete_memory"].annotations.destructive_hint and not by_name["delete_memory"].annotations.read_only_hint
    assert not by_name["add_memory"].annotations.destructive_hint
    assert by_name["add_memory"].input_schema["required"] == ["text"]
    assert set(by_name["add_memory"].input_schema["properties"]) == {"text", "source", "occurred_at"}
    assert {t.uri_template for t in templates} == {"memory://memories/{memory_id}", "memory://insights/{insight_id}"}


def test_add_search_ask_delete_over_http(live_server, user, alice_token):
    async def scenario():
        async with http_client(live_server.url, alice_token) as client:
            return await add_search_ask_delete(client)

    seen = run(scenario())
    check_loop(seen)
    memory = Memory.all_objects.get(pk=seen["added"]["memory_id"])
    assert memory.owner == user and memory.deleted_at is not None and memory.source == "chat"
    actors = set(Event.objects.filter(subject_id=memory.pk).values_list("actor", flat=True))
    assert actors == {f"api token 'agent' ({alice_token[:12]}…) of alice"}


def test_a_client_of_the_older_handshake_protocol_works_too(live_server, alice_token):
    async def scenario():
        async with http_client(live_server.url, alice_token, mode="legacy") as client:
            await client.call_tool("add_memory", {"text": FALCON})
            return (await client.call_tool("status", {})).structured_content

    status = run(scenario())
    assert status["user"] == "alice" and status["total_memories"] == 1 and status["pending"] == 1

    async def with_a_slash():
        async with http_client(live_server.url, alice_token, path="/mcp/") as client:
            return (await client.call_tool("status", {})).structured_content

    assert run(with_a_slash())["total_memories"] == 1


def test_bad_or_missing_tokens_are_refused(live_server, user, alice_token):
    def post(headers):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        request = urllib.request.Request(
            live_server.url + "/mcp",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read(), response.headers
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers

    for headers in ({}, {"Authorization": "Bearer mem_not-a-real-token"}, {"Authorization": f"Basic {alice_token}"}):
        status, body, response_headers = post(headers)
        # A JSON-RPC error (what MCP clients show) and the reason in WWW-Authenticate (RFC 6750).
        assert status == 401 and "token" in json.loads(body)["error"]["message"].lower()
        assert (
            response_headers["WWW-Authenticate"].startswith("Bearer")
            and "error_description=" in response_headers["WWW-Authenticate"]
        )
    # A revoked token is refused as well.
    from memories.services.tokens import revoke_token, tokens_of

    revoke_token(owner=user, token_id=tokens_of(user).get().pk)
    assert post({"Authorization": f"Bearer {alice_token}"})[0] == 401

    async def scenario():
        async with http_client(live_server.url, "mem_not-a-real-token") as client:
            await client.list_tools()

    # The pinned client shows the reason to the person, not "Server returned an error response".
    with pytest.raises(Exception) as refused:
        run(scenario())
    assert "Unknown, expired or revoked API token" in " ".join(errors_in(refused.value))
    # GET (an event stream) is not offered: stateless.
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(live_server.url + "/mcp", timeout=30)
    assert refused.value.code == 405


def test_a_broken_request_is_a_4xx_never_a_crash(live_server, alice_token):
    def post(body: bytes, content_type="application/json"):
        request = urllib.request.Request(
            live_server.url + "/mcp",
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {alice_token}",
                "Content-Type": content_type,
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    for body, content_type in (
        (b"{not json", "application/json"),
        (b"\xff\xfe", "application/json"),
        (b"[]", "application/json"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', "text/plain"),
    ):
        status, answer = post(body, content_type)
        assert 400 <= status < 500, (body, status, answer)
        assert b"Traceback" not in answer


def test_one_users_token_never_reaches_another_users_memories(live_server, user, other_user, alice_token, bob_token):
    async def scenario():
        async with http_client(live_server.url, alice_token) as alice:
            added = (await alice.call_tool("add_memory", {"text": FALCON})).structured_content
        memory_id = added["memory_id"]
        async with http_client(live_server.url, bob_token) as bob:
            out = {
                "search": (await bob.call_tool("search_memories", {"query": "Project Falcon Sarah Chen"})).structured_content,
                "ask": (await bob.call_tool("ask", {"question": "Who leads Project Falcon?"})).structured_content,
                "list": (await bob.call_tool("list_memories", {})).structured_content,
                "get": await bob.call_tool("get_memory", {"memory_id": memory_id}),
                "update": await bob.call_tool("update_memory", {"memory_id": memory_id, "summary": "hijacked"}),
                "delete": await bob.call_tool("delete_memory", {"memory_id": memory_id}),
                "status": (await bob.call_tool("status", {})).structured_content,
            }
            with pytest.raises(MCPError) as hidden:
                await bob.read_resource(f"memory://memories/{memory_id}")
            out["resource"] = str(hidden.value)
        return memory_id, out

    memory_id, seen = run(scenario())
    assert seen["search"]["memories"] == [] and seen["ask"]["memories"] == [] and seen["ask"]["cited"] == []
    assert seen["list"]["total"] == 0 and seen["status"]["total_memories"] == 0 and seen["status"]["user"] == "bob"
    for name in ("get", "update", "delete"):
        assert seen[name].is_error and text_of(seen[name]).endswith(f"No memory {memory_id}.")
    assert f"No memory {memory_id}" in seen["resource"]
    memory = Memory.objects.get(pk=memory_id)
    assert memory.owner == user and memory.summary != "hijacked"


def test_bad_arguments_are_mcp_errors_with_the_apis_messages(live_server, alice_token):
    async def scenario():
        async with http_client(live_server.url, alice_token) as client:
            calls = {
                "id not a number": await client.call_tool("get_memory", {"memory_id": "abc"}),
                "id out of range": await client.call_tool("delete_memory", {"memory_id": 0}),
                "no text": await client.call_tool("add_memory", {"text": ""}),
                "blank text": await client.call_tool("add_memory", {"text": "   "}),
                "bad date": await client.call_tool("add_memory", {"text": "A note", "occurred_at": "someday soon"}),
                "importance": await client.call_tool("update_memory", {"memory_id": 1, "importance": 5}),
                "nothing to change": await client.call_tool("update_memory", {"memory_id": 1}),
                "bad status": await client.call_tool("list_memories", {"status": "everything"}),
                "missing": await client.call_tool("search_memories", {}),
                "unknown tool": await client.call_tool("drop_database", {}),
            }
            with pytest.raises(MCPError) as bad_uri:
                await client.read_resource("memory://insights/999")
            return calls, str(bad_uri.value)

    calls, bad_uri = run(scenario())
    for name, result in calls.items():
        assert result.is_error, name
        assert "Traceback" not in text_of(result) and 'File "' not in text_of(result), name
    assert "memory_id" in text_of(calls["id not a number"])
    assert "There is no text to remember." in text_of(calls["blank text"])
    assert "is not a date or datetime" in text_of(calls["bad date"])
    assert "importance" in text_of(calls["importance"])
    assert "Give at least one of" in text_of(calls["nothing to change"])
    assert "No insight 999" in bad_uri


def test_limits_and_history_match_the_api(live_server, user, alice_token, settings):
    # A day's fixed window: the three calls never straddle its end, as they could a minute's
    # on a loaded machine (the third then lands in a fresh window and is let through).
    settings.MEMORY_RATE_LIMIT_INGEST = "2/d"

    async def scenario():
        async with http_client(live_server.url, alice_token) as client:
            return [await client.call_tool("add_memory", {"text": f"Note number {i}."}) for i in range(3)]

    results = run(scenario())
    assert [r.is_error for r in results] == [False, False, True]
    assert "Too many ingest requests; try again in" in text_of(results[2])
    assert Memory.objects.filter(owner=user).count() == 2


def test_consolidate_update_list_and_the_insight_resource(live_server, user, alice_token, sync_tasks):
    texts = [
        "Project Falcon kickoff with Sarah Chen: the launch is March 15.",
        "Sarah Chen moved the Project Falcon launch budget review to Friday.",
        "Project Falcon launch checklist drafted by Sarah Chen.",
    ]

    async def scenario():
        async with http_client(live_server.url, alice_token) as client:
            ids = [(await client.call_tool("add_memory", {"text": t})).structured_content["memory_id"] for t in texts]
            made = (await client.call_tool("consolidate", {})).structured_content
            insight = json.loads((await client.read_resource(f"memory://insights/{made['consolidations'][0]}")).contents[0].text)
            updated = (
                await client.call_tool("update_memory", {"memory_id": ids[0], "topics": ["launch", "falcon"], "importance": 0.9})
            ).structured_content
            page = (await client.call_tool("list_memories", {"limit": 2, "sort": "importance"})).structured_content
            return ids, made, insight, updated, page

    ids, made, insight, updated, page = run(scenario())
    assert made["consolidations"] and made["memories_consolidated"] == 3
    assert set(insight["source_ids"]) <= set(ids) and len(insight["source_ids"]) >= 2 and insight["insight"]
    assert updated["topics"] == ["launch", "falcon"] and updated["importance"] == 0.9
    assert page["total"] == 3 and page["next_offset"] == 2 and page["memories"][0]["id"] == ids[0]
    assert Event.objects.filter(subject_id=ids[0], action="edited", actor__startswith="api token 'agent'").exists()


@pytest.mark.slow
def test_gunicorn_and_the_stdio_command(tmp_path):
    """The production paths: /mcp in gunicorn's WSGI workers, and `manage.py mcp` started
    the way a desktop agent starts it."""
    service = Service(tmp_path).migrate()
    try:
        tokens = service.make_users("alice", "bob")
        service.start_web(workers=2)

        async def over_http():
            async with http_client(service.url, tokens["alice"]) as client:
                seen = await add_search_ask_delete(client)
            async with http_client(service.url, tokens["bob"]) as bob:
                seen["bob"] = (await bob.call_tool("list_memories", {})).structured_content
            return seen

        seen = run(over_http())
        check_loop(seen)
        assert seen["bob"]["total"] == 0

        def stdio(user: str) -> Client:
            return Client(
                StdioServerParameters(command=PYTHON, args=["manage.py", "mcp", "--user", user], env=service.env, cwd=str(ROOT))
            )

        async def over_stdio():
            async with stdio("bob") as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                loop = await add_search_ask_delete(client)
                bad = await client.call_tool("get_memory", {"memory_id": "x"})
                status = (await client.call_tool("status", {})).structured_content
            return names, loop, bad, status

        names, loop, bad, status = run(over_stdio())
        assert names == TOOLS
        check_loop(loop)
        assert bad.is_error and "memory_id" in text_of(bad)
        assert status["user"] == "bob"
        # Both spaces hold the content (one each), tombstoned; the stdio one was bob's.
        rows = service.sql(
            "select u.username, m.deleted_at is not null from memories_memory m join auth_user u on u.id = m.owner_id order by m.id"
        )
        assert rows == [("alice", 1), ("bob", 1)]
        actors = {row[0] for row in service.sql("select actor from memories_event")}
        assert "command:mcp" in actors and any(a.startswith("api token 'test'") for a in actors)

        refused = service.manage("mcp", "--user", "nobody", check=False)
        assert refused.returncode != 0 and "No user named 'nobody'" in refused.stderr
    finally:
        service.stop_all()
