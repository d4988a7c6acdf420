from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import RedirectView

from memories.api import api
from memories.signin import ThrottledLoginView, ThrottledPasswordChangeForm


@csrf_exempt
async def mcp_endpoint(request):
    """/mcp, with the MCP SDK imported on the first call: it is a third of the start-up of
    every `manage.py` command (they load this URLconf for their checks) and of every worker,
    and only the web process that serves an agent needs it."""
    from memories.mcp.http import mcp_endpoint as serve

    return await serve(request)


urlpatterns = [
    path("admin/", admin.site.urls),
    # Sign-in (throttled), sign-out and password change. No password-reset pages: the
    # service sends no mail, so a reset is `manage.py changepassword USER` on the server.
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(form_class=ThrottledPasswordChangeForm),
        name="password_change",
    ),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("api/", api.urls),
    path("mcp", mcp_endpoint, name="mcp"),
    path("mcp/", mcp_endpoint),  # clients configured with a trailing slash: a POST cannot follow a redirect
    path("", include("memories.urls")),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin, the API docs).
    path("favicon.ico", RedirectView.as_view(url=static("memories/favicon.svg"), permanent=True)),
]

handler404 = "memories.views.not_found"
