"""Settings: connecting an agent (MCP configuration to paste) and the API tokens page (make a
token, shown once; see and revoke your tokens)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..models import ApiToken
from ..services.connect import agent_config
from ..services.tokens import TokenError, create_token, parse_expiry, revoke_token, tokens_of

EXPIRIES = [("", "never"), ("7d", "in 7 days"), ("30d", "in 30 days"), ("90d", "in 90 days"), ("1y", "in a year")]


def _mcp_url(request) -> str:
    return request.build_absolute_uri(reverse("mcp"))


@login_required
@require_GET
def settings_page(request):
    """Where a newcomer connects an agent: the MCP entries for this install, and the way to a token."""
    config = agent_config(owner=request.user, mcp_url=_mcp_url(request))
    return render(request, "memories/settings.html", {"config": config, "tokens": tokens_of(request.user)})


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    """Make a token (shown once), see and revoke your tokens."""
    context = {"new_token": None, "error": "", "name": "", "scopes": ApiToken.Scope.choices, "expiries": EXPIRIES}
    context.update(scope=ApiToken.Scope.ADMIN, expires="")
    status = 200
    if request.method == "POST":
        context["name"] = request.POST.get("name", "")
        context["scope"] = request.POST.get("scope") or ApiToken.Scope.ADMIN
        context["expires"] = request.POST.get("expires", "")
        try:
            token, plaintext = create_token(
                owner=request.user, name=context["name"], scope=context["scope"], expires_in=parse_expiry(context["expires"])
            )
        except TokenError as exc:
            context["error"], status = str(exc), 400
        else:
            # Rendered straight into this response, not redirected: the plaintext must not be
            # stored anywhere (a session or message cookie) to survive a redirect.
            context["new_token"], context["new_token_obj"], context["name"] = plaintext, token, ""
            context["config"] = agent_config(owner=request.user, mcp_url=_mcp_url(request), token=plaintext)
    context["tokens"] = tokens_of(request.user)
    response = render(request, "memories/tokens.html", context, status=status)
    if context["new_token"]:
        response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request, token_id: int):
    if revoke_token(owner=request.user, token_id=token_id):
        messages.success(request, "Token revoked; requests that use it now get 401.")
    else:
        messages.error(request, "No such active token of yours.")
    return redirect("memories:tokens")
