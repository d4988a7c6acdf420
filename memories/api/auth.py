"""Who is calling: an API token (scripts, agents) or the browser's Django session."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from ..services.tokens import find_token, scope_refusal

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>`. A token is not sent by browsers on their own, so
    requests carrying one need no CSRF token."""

    def __call__(self, request: HttpRequest):
        header = request.headers.get("Authorization", "")
        if not header:
            return None  # let the session try
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError(401, "The Authorization header must be 'Bearer <token>'.")
        return self.authenticate(request, token.strip())

    def authenticate(self, request: HttpRequest, token: str):
        found = find_token(token)
        if found is None:
            # Failing here instead of falling back to the session: a client that sent a bad
            # token should learn that, not act as whoever is signed in in the same browser.
            raise AuthenticationError(401, "Unknown, expired or revoked API token.")
        request.api_token = found  # the history names the token that made a change
        # A read token reads; anything that changes the space needs write (and deleting or
        # clearing needs admin: the routes that do ask for it, common.needs_scope).
        if request.method not in SAFE_METHODS and (refusal := scope_refusal(found, "write")):
            raise HttpError(403, refusal)
        return found.owner


class SessionAuth(APIKeyCookie):
    """The signed-in browser user. Writes need the CSRF token (X-CSRFToken header), since a
    session cookie is sent along by any page that makes the browser post here."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest):
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key):
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        # Checked only for a signed-in user, so an anonymous write gets a plain 401.
        if check_csrf(request):
            raise HttpError(403, "CSRF check failed: session-authenticated writes need the X-CSRFToken header.")
        return user


token_auth = TokenAuth()
session_auth = SessionAuth()
