"""Who an MCP tool call acts for (Caller, set per request by http.py or for the session by
`manage.py mcp`), and running a tool's service call as them: the token's scope checked,
the call made in Django's thread, the errors a caller can act on turned into ToolErrors."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import OperationalError, close_old_connections
from mcp.server.mcpserver.exceptions import ToolError

from .. import ratelimit
from ..llm import ProviderError
from ..models import ApiToken, Memory
from ..services import Actor, RefusedError, access_memory, busy
from ..services.browse import link_prefetches


@dataclass(frozen=True)
class Caller:
    """Whose space a tool call acts in, and what the history names as having done it."""

    owner: Any
    actor: Actor
    # stdio keeps one thread for hours: reconnect when the database dropped the connection.
    long_lived: bool = False
    # The token's scope (read, write, admin); `manage.py mcp` runs as its user: admin.
    scope: str = ApiToken.Scope.ADMIN


_caller: contextvars.ContextVar[Caller] = contextvars.ContextVar("memory_mcp_caller")


@contextlib.contextmanager
def acting_as(caller: Caller) -> Iterator[None]:
    token = _caller.set(caller)
    try:
        yield
    finally:
        _caller.reset(token)


def current_caller() -> Caller:
    try:
        return _caller.get()
    except LookupError:  # a server built here is only ever served through http.py or the command
        raise ToolError("Authentication required.") from None


async def run_tool(fn: Callable[..., Any], /, *args, needs: str = ApiToken.Scope.READ, **kwargs):
    caller = current_caller()
    if not ApiToken(scope=caller.scope).allows(needs):
        raise ToolError(
            f"This API token has the {caller.scope} scope; this tool needs {needs}. Make a token with that scope on /settings/tokens/."
        )

    def call():
        if caller.long_lived:
            close_old_connections()
        try:
            return fn(caller, *args, **kwargs)
        except RefusedError as exc:
            raise ToolError(str(exc)) from None
        except Memory.DoesNotExist as exc:
            raise ToolError(str(exc)) from None
        except ProviderError as exc:
            raise ToolError(f"The model provider failed: {exc}") from None
        except OperationalError as exc:
            if busy.is_busy(exc):
                raise ToolError(busy.MESSAGE) from None
            raise

    return await sync_to_async(call, thread_sensitive=True)()


def rate_limit(caller: Caller, scope: str) -> None:
    verdict = ratelimit.hit(scope, str(caller.owner.pk))
    if not verdict.allowed:
        raise ToolError(f"Too many {scope} requests; try again in {verdict.retry_after} s.")


def own_memory(caller: Caller, memory_id: int) -> Memory:
    """One of the caller's memories with its connections; Memory.DoesNotExist ("No memory N.")
    otherwise, which run_tool turns into the tool's error."""
    with_links = Memory.objects.prefetch_related(*link_prefetches(owner=caller.owner))
    return access_memory(caller.owner, memory_id, memories=with_links)
