"""Requests the way htmx sends them, for the Django test client."""

HX = {"HTTP_HX_REQUEST": "true"}


def hx(client, method, url, data=None, target=None, **extra):
    headers = dict(HX)
    if target:
        headers["HTTP_HX_TARGET"] = target
    return getattr(client, method)(url, data or {}, **headers, **extra)
