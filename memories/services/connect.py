"""Connecting an agent: the MCP client entries for this install, ready to paste.

Written from the install itself (this checkout's interpreter and manage.py, this server's
/mcp address), so what a person copies works as it is; placeholders are only where a
secret goes that the page must not know (a token shown once, the database's password).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

TOKEN_PLACEHOLDER = "mem_…your token…"

# What the stdio command must see the same way as this server to read the same memory with the
# same engines. Paths, switches and model names are shown as they are; a URL that can carry a
# password, and a key, only by name (the person copies it from where they set it).
_SHOWN_ENV = (
    "MEMORY_DATA_DIR",
    "MEMORY_EMBEDDINGS",
    "MEMORY_LLM_PROVIDER",
    "GEMINI_MODEL",
    "GEMINI_EMBEDDING_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "OPENAI_EMBEDDING_MODEL",
)
_NAMED_ENV = ("DATABASE_URL", "REDIS_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class AgentConfig:
    stdio_json: str  # mcpServers entry for clients that start a command (Claude Desktop, Cursor, ...)
    stdio_claude_code: str  # the same as a `claude mcp add` line
    http_json: str  # mcpServers entry for clients that speak Streamable HTTP
    http_claude_code: str
    mcp_url: str
    named_env: tuple[str, ...]  # set on the server, to be set the same way for the command


def agent_config(*, owner, mcp_url: str, token: str | None = None) -> AgentConfig:
    python = str(Path(sys.executable))  # the interpreter serving this page: the project's virtualenv
    manage = str(Path(settings.BASE_DIR) / "manage.py")
    args = [manage, "mcp", "--user", owner.get_username()]
    env = {name: os.environ[name] for name in _SHOWN_ENV if os.environ.get(name)}
    named = tuple(name for name in _NAMED_ENV if os.environ.get(name))
    for name in named:
        env[name] = f"<the same {name} as the server>"
    stdio = {"command": python, "args": args}
    if env:
        stdio["env"] = env
    bearer = f"Bearer {token or TOKEN_PLACEHOLDER}"
    http = {"type": "http", "url": mcp_url, "headers": {"Authorization": bearer}}
    env_prefix = " ".join(f"--env {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    return AgentConfig(
        stdio_json=json.dumps({"mcpServers": {"memory": stdio}}, indent=2, ensure_ascii=False),
        stdio_claude_code=" ".join(
            part for part in ("claude mcp add memory", env_prefix, "--", shlex.join([python, *args])) if part
        ),
        http_json=json.dumps({"mcpServers": {"memory": http}}, indent=2, ensure_ascii=False),
        http_claude_code=f"claude mcp add --transport http memory {shlex.quote(mcp_url)} --header {shlex.quote('Authorization: ' + bearer)}",
        mcp_url=mcp_url,
        named_env=named,
    )
