from django.contrib import admin
from django.urls import include, path

from memories import token_views
from memories.api import api
from memories.mcp.http import mcp_endpoint

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", api.urls),
    path("mcp", mcp_endpoint, name="mcp"),
    path("mcp/", mcp_endpoint),  # clients configured with a trailing slash: a POST cannot follow a redirect
    path("settings/tokens/", token_views.tokens, name="api_tokens"),
    path("settings/tokens/<int:token_id>/revoke/", token_views.revoke, name="api_token_revoke"),
    path("", include("memories.urls")),
]
