"""Headers only a reverse proxy may set."""

from __future__ import annotations

from django.conf import settings

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
