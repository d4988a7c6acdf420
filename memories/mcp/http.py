"""/mcp: the MCP server over stateless Streamable HTTP, served by the Django process itself.

The SDK serves HTTP as an ASGI app whose session manager needs a running task group (a
Starlette lifespan), which Django never runs, and whose manager may be run only once. So each
request gets a fresh stateless manager, run for the length of that one exchange; the SDK's
ASGI messages are collected into a Django response. With JSON responses (no SSE) and no
sessions there is nothing to keep between requests, so this works the same under gunicorn's
WSGI workers, where Django gives each async view its own event loop, and under ASGI.

Authentication is the API's: `Authorization: Bearer <token>`, the token's owner is the space,
and the history names the token. Without a valid token the SDK never sees the request.
(django-stateless-mcp does the same bridging, with OAuth-style verifiers; it is young and
its auth does not fit API tokens, and the bridge is this one small file.)
"""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.transport_security import TransportSecuritySettings

from ..services import Actor
from ..services.tokens import find_token
from .caller import Caller, acting_as
from .server import server

# Django's ALLOWED_HOSTS already checks the Host header; the SDK's own check would only
# refuse hosts Django accepted. A browser page cannot send the bearer token, so no CSRF.
_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)
_DROPPED_HEADERS = {b"content-length"}  # Django computes it from the body
_manager_lock = threading.Lock()


def _error(status: int, detail: str, *, request_id=None) -> HttpResponse:
    """A refusal before the SDK saw the request, as a JSON-RPC error: MCP clients show the
    message of an error body at any status, and only "Server returned an error response"
    for anything else."""
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32001 if status in (401, 403) else -32600, "message": detail}}
    return HttpResponse(json.dumps(body), status=status, content_type="application/json")


def _unauthorized(detail: str, error: str, request_id) -> HttpResponse:
    # As RFC 6750 and the MCP authorization spec have it: the error code and its description
    # in WWW-Authenticate, where a client that reads headers finds them (no code when no
    # credentials were sent at all).
    response = _error(401, detail, request_id=request_id)
    quoted = detail.replace("\\", "").replace('"', "'")
    response["WWW-Authenticate"] = (
        f'Bearer realm="mcp", error="{error}", error_description="{quoted}"'
        if error
        else f'Bearer realm="mcp", error_description="{quoted}"'
    )
    return response


def _request_id(request: HttpRequest):
    """The JSON-RPC id of the request, so its refusal answers it; None when unreadable."""
    try:
        message = json.loads(request.body)
    except (RequestDataTooBig, ValueError, RecursionError):
        return None
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _authenticate(request: HttpRequest) -> Caller | HttpResponse:
    header = request.headers.get("Authorization", "")
    if not header:
        return _unauthorized(
            "Authentication required: send 'Authorization: Bearer <token>' (make one on /settings/tokens/).",
            "",
            _request_id(request),
        )
    scheme, _, plaintext = header.partition(" ")
    if scheme.lower() != "bearer" or not plaintext.strip():
        return _unauthorized("The Authorization header must be 'Bearer <token>'.", "invalid_request", _request_id(request))
    token = find_token(plaintext.strip())
    if token is None:
        return _unauthorized(
            "Unknown, expired or revoked API token: make a new one on /settings/tokens/.", "invalid_token", _request_id(request)
        )
    return Caller(owner=token.owner, actor=Actor.for_token(token), scope=token.scope)


def _origin_refused(request: HttpRequest) -> HttpResponse | None:
    """A browser sends Origin; a page from another site must not drive the tools (the MCP
    transport spec's guard against DNS rebinding). The server's own origin and
    CSRF_TRUSTED_ORIGINS are let through; clients that are not browsers send none."""
    origin = request.headers.get("Origin")
    if origin is None:
        return None
    parsed = urlsplit(origin)
    if parsed.scheme in ("http", "https") and parsed.netloc == request.get_host():
        return None
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return None
    return _error(403, f"Requests from the web page at {origin[:100]} are not allowed here.", request_id=_request_id(request))


def _new_manager():
    # streamable_http_app() makes a new session manager and keeps it on the server; the lock
    # keeps two threads from reading each other's.
    with _manager_lock:
        server.streamable_http_app(stateless_http=True, json_response=True, transport_security=_SECURITY)
        return server.session_manager


def _scope(request: HttpRequest) -> dict[str, Any]:
    port = request.META.get("SERVER_PORT") or "80"
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": "",
        "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()],
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.META.get("SERVER_NAME", ""), int(port) if port.isdigit() else 80),
        "state": {},
    }


class _Collected:
    """The ASGI messages of one exchange, turned into a Django response."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = bytearray()

    async def send(self, message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            self.body.extend(message.get("body", b""))

    def response(self) -> HttpResponse:
        if self.status is None:
            return _error(500, "The MCP server gave no response.")
        response = HttpResponse(bytes(self.body), status=self.status)
        for name, value in self.headers:
            if name.lower() not in _DROPPED_HEADERS:
                response[name.decode("latin-1")] = value.decode("latin-1")
        return response


@csrf_exempt
async def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        # Stateless: no GET event stream and no session to DELETE.
        response = _error(405, "POST JSON-RPC messages here; this server keeps no sessions or event streams.")
        response["Allow"] = "POST"
        return response
    if refused := _origin_refused(request):
        return refused
    caller = await sync_to_async(_authenticate, thread_sensitive=True)(request)
    if isinstance(caller, HttpResponse):
        return caller
    try:
        body = request.body
    except RequestDataTooBig:
        return _error(413, "The request body is too large.")
    delivered = False

    async def receive():
        # The body once, then a disconnect: nothing more will come on this request.
        nonlocal delivered
        if delivered:
            return {"type": "http.disconnect"}
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    collected = _Collected()
    manager = _new_manager()
    with acting_as(caller):
        async with manager.run():
            await manager.handle_request(_scope(request), receive, collected.send)
    return collected.response()
