"""Headers only a reverse proxy may set."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from django.template.loader import render_to_string

FORWARDED = ("HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_HOST", "HTTP_FORWARDED")


def from_trusted_proxy(request) -> bool:
    return request.META.get("REMOTE_ADDR", "") in settings.MEMORY_TRUSTED_PROXIES


def client_address(request) -> str:
    """The address a request came from: the peer, or behind a configured proxy the last
    address that proxy saw (the right-most entry of X-Forwarded-For; the ones before it
    are whatever the client wrote)."""
    peer = request.META.get("REMOTE_ADDR", "") or "unknown"
    if from_trusted_proxy(request):
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if forwarded:
            return forwarded[-1]
    return peer


class TrustedProxyMiddleware:
    """Drops X-Forwarded-* from clients that are not a configured proxy, before Django's
    SECURE_PROXY_SSL_HEADER reads them: otherwise any client could claim HTTPS."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not from_trusted_proxy(request):
            for header in FORWARDED:
                request.META.pop(header, None)
        return self.get_response(request)


class DatabaseBusyMiddleware:
    """A page whose write met a database busy past its wait answers 503 with Retry-After
    and says nothing was changed, instead of a bare 500 (the API and MCP say the same in
    their own forms: api/__init__.py, mcp/caller.py)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from .services import busy

        if not busy.is_busy(exception):
            return None
        html = render_to_string("memories/error.html", {"message": busy.MESSAGE, "anonymous": True}, request=request)
        response = HttpResponse(html, status=503)
        response["Retry-After"] = str(busy.RETRY_AFTER_SECONDS)
        return response
