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


def create_token(*, owner, name: str) -> tuple[ApiToken, str]:
    """A new token for the owner. The plaintext is returned here and never stored."""
    name = " ".join((name or "").split())
    if not name:
        raise TokenError("Give the token a name, e.g. the script or agent that will use it.")
    if len(name) > 100:
        raise TokenError("A token name can be at most 100 characters.")
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(owner=owner, name=name, prefix=plaintext[:12], token_hash=hash_token(plaintext))
    return token, plaintext


def find_token(plaintext: str | None) -> ApiToken | None:
    """The active token (of an active user) with this plaintext, marked as used; else None."""
    if not plaintext or len(plaintext) > 200:
        return None
    token = (
        ApiToken.objects.select_related("owner").filter(token_hash=hash_token(plaintext.strip()), revoked_at__isnull=True).first()
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
    return bool(ApiToken.objects.filter(owner=owner, pk=token_id, revoked_at__isnull=True).update(revoked_at=timezone.now()))


def tokens_of(owner):
    return ApiToken.objects.filter(owner=owner).order_by("revoked_at", "-created_at")
