"""Sign-in throttling: failed passwords slow the next attempt down, with delays that grow
(ratelimit.backoff_*), counted three ways: per account and client address together (the
guesser at one address), per account from anywhere (guessing from many addresses) and per
address for any account (spraying many accounts). While a delay runs, sign-in for that
account or from that address is refused before any password is checked, so guessing stops
even when the right password comes next. A delay never refuses the owner for long: from
another address they wait at most ACCOUNT_CAP, and where everyone shares one address (a
loopback or single-proxy install) at most PAIR_CAP; a fixed window would have locked them
out for the rest of the hour. A successful sign-in clears its own account-and-address count.

It sits in the authentication backend, so the sign-in page and the admin's are both
covered; one-time welcome links count their failures per address in the views, and the
old password asked by the password-change pages counts against the account (its forms)."""

from __future__ import annotations

import hashlib

from django.contrib.admin.forms import AdminAuthenticationForm, AdminPasswordChangeForm
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import PermissionDenied, ValidationError

from . import ratelimit
from .middleware import client_address
from .services.setup import needs_first_user

BACKEND = "memories.signin.ThrottledModelBackend"
PAIR, ACCOUNT, ADDRESS = "login_pair", "login_account", "login_address"
# The longest wait each count can impose. The pair's is the guesser's pace (one try per
# five minutes once its free failures are used); the others are shared with people who did
# nothing wrong, so they stay short.
PAIR_CAP, ACCOUNT_CAP, ADDRESS_CAP = 300, 60, 60
CAPS = {PAIR: PAIR_CAP, ACCOUNT: ACCOUNT_CAP, ADDRESS: ADDRESS_CAP}


def _account_key(username: str) -> str:
    # Hashed: a username an attacker types never becomes a raw cache key.
    return hashlib.sha256(" ".join(str(username or "").split()).lower().encode()).hexdigest()[:32]


def _counts(request, username: str | None) -> list[tuple[str, str]]:
    address = client_address(request) if request is not None else None
    account = _account_key(username) if username else None
    counts = []
    if address:
        counts.append((ADDRESS, address))
    if account:
        counts.append((ACCOUNT, account))
    if address and account:
        counts.append((PAIR, f"{account}:{hashlib.sha256(address.encode()).hexdigest()[:16]}"))
    return counts


def refused_for(request, username: str | None = None) -> int:
    """Seconds until sign-in is allowed again for this account or address; 0 when allowed."""
    return max((ratelimit.backoff_wait(scope, ident) for scope, ident in _counts(request, username)), default=0)


def record_failure(request, username: str | None = None) -> None:
    for scope, ident in _counts(request, username):
        ratelimit.backoff_failure(scope, ident, cap=CAPS[scope])


def record_success(request, username: str) -> None:
    for scope, ident in _counts(request, username):
        if scope == PAIR:
            ratelimit.backoff_reset(scope, ident)


def wait_message(seconds: int) -> str:
    if seconds < 90:
        when = f"{seconds} second{'s' if seconds != 1 else ''}"
    else:
        minutes = round(seconds / 60)
        when = f"about {minutes} minutes"
    return (
        f"Too many failed sign-ins for this account or from this address. Try again in {when}; "
        "a forgotten password is reset with `manage.py changepassword`."
    )


class ThrottledModelBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(self._username_field())
        if wait := refused_for(request, username):
            if request is not None:
                request.signin_refused_for = wait
            raise PermissionDenied(wait_message(wait))  # stops authenticate() before any check
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            record_failure(request, username)
        else:
            record_success(request, username)
        return user

    @staticmethod
    def _username_field() -> str:
        from django.contrib.auth import get_user_model

        return get_user_model().USERNAME_FIELD


class _SaysThrottled:
    """A sign-in form that says "too many attempts" instead of "wrong password" when the
    backend refused (the site's form and the admin's)."""

    throttled = ""

    def clean(self):
        try:
            return super().clean()
        except ValidationError:
            if wait := getattr(self.request, "signin_refused_for", 0):
                self.throttled = wait_message(wait)
                raise ValidationError(self.throttled, code="throttled") from None
            raise


class ThrottledAuthenticationForm(_SaysThrottled, AuthenticationForm):
    pass


class ThrottledLoginView(LoginView):
    form_class = ThrottledAuthenticationForm

    def get_context_data(self, **kwargs):
        # Before anyone can sign in, the page says how the owner account is claimed instead.
        return {**super().get_context_data(**kwargs), "needs_owner": needs_first_user()}

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.throttled:
            response.status_code = 429
            response["Retry-After"] = str(self.request.signin_refused_for)
        return response


class ThrottledAdminAuthenticationForm(_SaysThrottled, AdminAuthenticationForm):
    pass


class ThrottledPasswordChangeForm(PasswordChangeForm):
    """The old password asked before a change is a password guess like a sign-in: counted
    against the account and refused the same way, so someone at a signed-in session left
    open cannot try passwords until one works and then lock the owner out. (Per account
    only: the form is not given the request.)"""

    def clean_old_password(self):
        username = self.user.get_username()
        if wait := refused_for(None, username):
            raise ValidationError(wait_message(wait), code="throttled")
        try:
            return super().clean_old_password()
        except ValidationError:
            record_failure(None, username)
            raise


class ThrottledAdminPasswordChangeForm(ThrottledPasswordChangeForm, AdminPasswordChangeForm):
    pass
