from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from memories import token_views
from memories.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", api.urls),
    path("settings/tokens/", token_views.tokens, name="api_tokens"),
    path("settings/tokens/<int:token_id>/revoke/", token_views.revoke, name="api_token_revoke"),
    path("", include("memories.urls")),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin, the API docs).
    path("favicon.ico", RedirectView.as_view(url=static("memories/favicon.svg"), permanent=True)),
]

handler404 = "memories.views.not_found"
