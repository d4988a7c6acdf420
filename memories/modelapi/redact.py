"""Masking what must not leave the server: API keys, the model endpoint's address, and
credentials embedded in any URL. A proxy page or a reply may echo them back, and what a
provider says ends up in logs, in memory.error and in the sidebar every user sees."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.conf import settings

# scheme://user:password@host -> scheme://***@host, for any URL in any message.
USERINFO_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://)[^/\s@]{1,500}@")
ENDPOINT = "[model endpoint]"


def _endpoints() -> list[str]:
    """The configured base URLs and their host parts, longest first, so the whole URL is
    replaced before its host alone."""
    out: set[str] = set()
    for url in (settings.OPENAI_BASE_URL, settings.GEMINI_BASE_URL):
        url = (url or "").strip()
        if not url:
            continue
        out.update({url, url.rstrip("/")})
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        if parts.netloc:
            out.add(parts.netloc)
            out.add(parts.netloc.rsplit("@", 1)[-1])
        if parts.hostname and parts.hostname not in {"localhost"} and len(parts.hostname) > 3:
            out.add(parts.hostname)
    return sorted((e for e in out if e), key=len, reverse=True)


def scrub_secrets(text: str) -> str:
    """Mask API keys, the model endpoint's address and URL credentials in a message."""
    text = str(text)
    for key in (settings.GEMINI_API_KEY, settings.OPENAI_API_KEY):
        if key:
            text = text.replace(key, "***")
    for endpoint in _endpoints():
        text = text.replace(endpoint, ENDPOINT)
    return USERINFO_RE.sub(r"\1***@", text)
