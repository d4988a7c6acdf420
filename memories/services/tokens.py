"""API tokens: made once, stored as a hash, checked on every API request."""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta

from django.db import DatabaseError
from django.utils import timezone

from ..models import ApiToken

log = logging.getLogger(__name__)

TOKEN_PREFIX = "mem_"
# last_used_at is for the settings page ("used 3 minutes ago"), not an audit log: writing it
# at most once a minute keeps a busy script from turning every read into a SQLite write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenError(ValueError):
    """The token request was refused; the message is safe to show."""


def hash_token(plaintext: str) -> str:
    # A token is 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force
    # that a slow password hash would protect, and lookups stay a single indexed query.
    return hashlib.sha256(plaintext.encode("utf-8", errors="replace")).hexdigest()


SCOPES = tuple(ApiToken.Scope.values)
EXPIRY_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1), "y": timedelta(days=365)}


def parse_expiry(value: str | None) -> timedelta | None:
    """ "30d", "12h", "2w", "1y" as a duration; empty or "never" as None."""
    text = (value or "").strip().lower()
    if text in ("", "never", "0"):
        return None
    number, unit = text[:-1], text[-1:]
    if unit not in EXPIRY_UNITS or not number.isdigit() or not 0 < int(number) <= 100_000:
        raise TokenError(f"Expiry {value!r}: use a number and h, d, w or y (30d, 12h, 1y), or never.")
    try:
        return int(number) * EXPIRY_UNITS[unit]
    except OverflowError:
        raise TokenError(f"Expiry {value!r} is too far away.") from None


def create_token(
    *, owner, name: str, scope: str = ApiToken.Scope.ADMIN, expires_in: timedelta | None = None
) -> tuple[ApiToken, str]:
    """A new token for the owner. The plaintext is returned here and never stored. `scope`:
    read, write or admin (each includes the ones before it); `expires_in`: refused after that."""
    name = " ".join((name or "").split())
    if not name:
        raise TokenError("Give the token a name, e.g. the script or agent that will use it.")
    if len(name) > 100:
        raise TokenError("A token name can be at most 100 characters.")
    if scope not in SCOPES:
        raise TokenError(f"A token's scope is one of {', '.join(SCOPES)}.")
    if expires_in is not None and expires_in <= timedelta(0):
        raise TokenError("A token's expiry must be in the future.")
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        owner=owner,
        name=name,
        prefix=plaintext[:12],
        token_hash=hash_token(plaintext),
        scope=scope,
        expires_at=timezone.now() + expires_in if expires_in is not None else None,
    )
    return token, plaintext


def scope_refusal(token: ApiToken | None, needed: str) -> str:
    """Why this token may not do what needs `needed` ("" when it may; a session has no token
    and is its user, who may do everything in their own space)."""
    if token is None or token.allows(needed):
        return ""
    return (
        f"This API token ({token.name!r}) has the {token.scope} scope; this needs {needed}. "
        "Make a token with that scope on /settings/tokens/."
    )


def find_token(plaintext: str | None) -> ApiToken | None:
    """The active, unexpired token (of an active user) with this plaintext, marked as used; else None."""
    if not plaintext or len(plaintext) > 200:
        return None
    token = (
        ApiToken.objects.select_related("owner")
        .filter(token_hash=hash_token(plaintext.strip()), revoked_at__isnull=True)
        .exclude(expires_at__lte=timezone.now())
        .first()
    )
    if token is None or not token.owner.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        try:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
        except DatabaseError:  # a busy database: the request goes on, the next one writes it
            log.warning("could not note that token %s was used", token.prefix, exc_info=True)
    return token


def authenticate(plaintext: str | None):
    """The active user the token belongs to, or None for an unknown, revoked or malformed token."""
    token = find_token(plaintext)
    return token.owner if token else None


def revoke_token(*, owner, token_id: int) -> bool:
    """Revoke one of the owner's tokens; False when they have no such active token."""
    return bool(ApiToken.objects.owned_by(owner).filter(pk=token_id, revoked_at__isnull=True).update(revoked_at=timezone.now()))


def tokens_of(owner):
    return ApiToken.objects.owned_by(owner).order_by("revoked_at", "-created_at")
