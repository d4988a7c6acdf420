"""First run: getting the first person in without a default password.

One way in: `manage.py welcome` (run by `make run`) prints a one-time sign-in link for the
default owner while that account has no usable password (or `manage.py createsuperuser`).
Nothing reachable over the network can claim the owner without that link: whoever can reach
the port first is not the owner (see docs/security.md).
"""

from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.core import signing

from .owners import default_owner

SIGN_IN_LINK_SALT = "memories.setup.sign-in-link"
SIGN_IN_LINK_MAX_AGE = 24 * 60 * 60


class SetupError(ValueError):
    """The request was refused; the message says why and is safe to show."""


def _users_with_password():
    # make_password(None) stores "!" + random text; an empty field is unusable too.
    return get_user_model().objects.exclude(password__startswith="!").exclude(password="")


def needs_first_user() -> bool:
    """True until some account can sign in with a password."""
    return not _users_with_password().exists()


def _fingerprint(user) -> str:
    # Signing in updates last_login and setting a password changes the hash, so the
    # link stops working after its first use.
    state = f"{user.pk}:{user.password}:{user.last_login.isoformat() if user.last_login else ''}"
    return hashlib.sha256(state.encode()).hexdigest()[:32]


def make_sign_in_token(*, user) -> str:
    return signing.TimestampSigner(salt=SIGN_IN_LINK_SALT).sign_object({"u": user.pk, "f": _fingerprint(user)})


def user_for_sign_in_token(*, token: str, max_age: int = SIGN_IN_LINK_MAX_AGE):
    """The user a one-time link is for; SetupError when it is forged, expired or used."""
    try:
        data = signing.TimestampSigner(salt=SIGN_IN_LINK_SALT).unsign_object(token, max_age=max_age)
    except signing.SignatureExpired:
        raise SetupError("This sign-in link has expired. Run `manage.py welcome` for a new one.") from None
    except signing.BadSignature:
        raise SetupError("This sign-in link is not valid.") from None
    user = get_user_model().objects.filter(pk=data.get("u"), is_active=True).first()
    if user is None or _fingerprint(user) != data.get("f"):
        raise SetupError("This sign-in link has already been used. Sign in with your password, or run `manage.py welcome` again.")
    return user


def welcome_owner():
    """The owner the welcome link is for, and whether a link is needed at all."""
    owner = default_owner()
    return owner, not owner.has_usable_password()
