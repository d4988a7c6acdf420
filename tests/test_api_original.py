"""The original design's clients keep working: its own curl example sends JSON as a form."""

import json

import pytest
from django.test import Client

from memories.models import Memory
from memories.services.tokens import create_token


@pytest.fixture
def api(user):
    return Client(headers={"Authorization": f"Bearer {create_token(owner=user, name='script')[1]}"})


@pytest.mark.parametrize(
    "content_type",
    [
        "application/x-www-form-urlencoded",  # what curl -d sends when no type is given
        "text/plain",
        "application/octet-stream",
        "application/json; charset=utf-8",
    ],
)
def test_a_json_body_is_read_as_json_whatever_the_content_type(api, user, content_type):
    body = json.dumps({"text": "some info", "source": "curl"})
    response = api.post("/api/ingest", body, content_type=content_type)
    assert response.status_code == 201, response.content
    memory = Memory.objects.get(pk=response.json()["memory_id"])
    assert (memory.owner, memory.raw_text, memory.source) == (user, "some info", "curl")


def test_forms_and_refusals_still_work(api, user):
    # A real form is still a form.
    form = api.post("/api/ingest", "text=a+plain+form+note&source=html", content_type="application/x-www-form-urlencoded")
    assert form.status_code == 201 and Memory.objects.get(pk=form.json()["memory_id"]).raw_text == "a plain form note"
    # Broken JSON sent as a form is said to be broken JSON, not silently stored as a form.
    broken = api.post("/api/ingest", '{"text": "half', content_type="application/x-www-form-urlencoded")
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["detail"]
    # JSON that is not an object, and a body of another type that is not JSON, are refused as before.
    assert api.post("/api/ingest", '["some info"]', content_type="application/json").status_code == 422
    assert api.post("/api/ingest", "<note>some info</note>", content_type="application/xml").status_code == 415
    assert Memory.objects.filter(owner=user).count() == 1
