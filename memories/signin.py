"""Sign-in throttling: failed passwords are counted per account and per client address
(the same fixed-window counters as the API's rate limits, in the shared cache). Once
either count reaches its limit, sign-in for that account or from that address is refused
with a clear message until the window ends, before any password is checked, so guessing
stops even when the right password comes next.

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
ACCOUNT, ADDRESS = "login_account", "login_address"


def _account_key(username: str) -> str:
    # Hashed: a username an attacker types never becomes a raw cache key.
    return hashlib.sha256(" ".join(str(username or "").split()).lower().encode()).hexdigest()[:32]


def refused_for(request, username: str | None = None) -> int:
    """Seconds until sign-in is allowed again for this account or address; 0 when allowed."""
    waits = []
    if request is not None:
        waits.append(ratelimit.exhausted(ADDRESS, client_address(request)).retry_after)
    if username:
        waits.append(ratelimit.exhausted(ACCOUNT, _account_key(username)).retry_after)
    return max(waits, default=0)


def record_failure(request, username: str | None = None) -> None:
    if request is not None:
        ratelimit.hit(ADDRESS, client_address(request))
    if username:
        ratelimit.hit(ACCOUNT, _account_key(username))


def wait_message(seconds: int) -> str:
    minutes = max(1, round(seconds / 60))
    return (
        f"Too many failed sign-ins for this account or from this address. Try again in about {minutes} "
        f"minute{'s' if minutes != 1 else ''}; a forgotten password is reset with `manage.py changepassword`."
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
