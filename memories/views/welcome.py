"""First run and sign-in: the one-time welcome link and setting a first password."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from .. import signin
from ..services.setup import SetupError, user_for_sign_in_token


@require_http_methods(["GET", "POST"])
def welcome_link(request, token: str):
    """GET shows a button and POST signs in, so a link previewer fetching the URL cannot use it up."""
    if wait := signin.refused_for(request):
        return render(request, "memories/error.html", {"message": signin.wait_message(wait), "anonymous": True}, status=429)
    try:
        user = user_for_sign_in_token(token=token)
    except SetupError as exc:
        signin.record_failure(request)  # guessing links counts like guessing passwords
        return render(request, "memories/error.html", {"message": str(exc), "anonymous": True}, status=400)
    if request.method == "GET":
        response = render(request, "registration/welcome.html", {"welcome_user": user})
        # The link is a password: never in a Referer sent to another site, not in any cache.
        # "same-origin", not "no-referrer": under no-referrer Chromium posts the button's form
        # with `Origin: null`, and Django's CSRF check refuses it (403) -- nobody could get in.
        response["Referrer-Policy"] = "same-origin"
        response["Cache-Control"] = "no-store"
        return response
    login(request, user, backend=signin.BACKEND)
    response = redirect("memories:set_password")
    response["Referrer-Policy"] = "same-origin"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def set_password(request):
    if request.user.has_usable_password():
        return redirect("password_change")
    form = SetPasswordForm(request.user, request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            user = form.save()
            update_session_auth_hash(request, user)
            messages.success(request, "Password set. Welcome to your memory.")
            return redirect("memories:ingest")
        return render(request, "registration/set_password.html", {"form": form}, status=400)
    return render(request, "registration/set_password.html", {"form": form})
