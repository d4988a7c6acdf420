from django.urls import path

from . import views

app_name = "memories"

urlpatterns = [
    path("", views.ingest, name="ingest"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("ingest/text/", views.ingest_text, name="ingest_text"),
    path("ingest/files/", views.ingest_files, name="ingest_files"),
    path("ingest/history/", views.ingest_history, name="ingest_history"),
    path("query/", views.query, name="query"),
    path("memories/", views.memory_list, name="list"),
    path("memories/deleted/", views.deleted, name="deleted"),
    path("memories/delete-selected/", views.memory_bulk_delete, name="bulk_delete"),
    path("memories/facets/<str:column>/", views.memory_facets, name="facets"),
    path("memories/<int:memory_id>/", views.memory_detail, name="detail"),
    path("memories/<int:memory_id>/edit/", views.memory_edit, name="edit"),
    path("memories/<int:memory_id>/history/", views.memory_history, name="history"),
    path("memories/<int:memory_id>/not-an-update/", views.memory_not_update, name="not_update"),
    path("memories/<int:memory_id>/purge/", views.memory_purge, name="purge"),
    path("memories/<int:memory_id>/approve/", views.memory_approve, name="approve"),
    path("memories/<int:memory_id>/reject/", views.memory_reject, name="reject"),
    path("memories/<int:memory_id>/card/", views.memory_card, name="card"),
    path("memories/<int:memory_id>/delete/", views.memory_delete, name="delete"),
    path("memories/<int:memory_id>/restore/", views.memory_restore, name="restore"),
    path("memories/<int:memory_id>/retry/", views.memory_retry, name="retry"),
    path("memories/<int:memory_id>/file/", views.memory_file, name="file"),
    path("review/", views.review, name="review"),
    path("graph/", views.graph, name="graph"),
    path("timeline/", views.timeline, name="timeline"),
    path("stats/", views.stats, name="stats"),
    path("consolidations/", views.consolidations, name="consolidations"),
    path("consolidations/run/", views.consolidate_now, name="consolidate_now"),
    path("consolidations/status/", views.consolidation_status, name="consolidation_status"),
    path("status/", views.status, name="status"),
    path("danger/clear/", views.clear, name="clear"),
    path("settings/tokens/", views.tokens, name="tokens"),
    path("settings/tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("welcome/password/", views.set_password, name="set_password"),
    path("welcome/<str:token>/", views.welcome_link, name="welcome_link"),
]
