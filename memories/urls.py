from django.urls import path

from . import views

app_name = "memories"

urlpatterns = [
    path("", views.home, name="home"),
]
