"""XML parsing that refuses what makes XML dangerous.

An uploaded XML, SVG or Word file is untrusted. Entity declarations are how "billion laughs"
bombs and external-entity reads work, so a document that declares any is refused outright
(the way defusedxml does it, without the extra dependency); a plain DOCTYPE line, as many
SVG exporters write, is harmless and allowed. External DTDs are never fetched.
Element count and depth are capped so a huge document cannot exhaust memory.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.parsers import expat

MAX_ELEMENTS = 200_000
MAX_DEPTH = 256


class XMLRefused(ValueError):
    """The document is not parsed: unsafe (entities) or malformed; the message says which."""


def parse(data: bytes | str, *, max_elements: int = MAX_ELEMENTS) -> ET.Element:
    """The root element of a well-formed document; XMLRefused otherwise."""
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate(namespace_separator="}")
    counts = {"elements": 0, "depth": 0}

    def refuse_entity(name, *args):
        raise XMLRefused(f"it declares the XML entity {name!r}; entity declarations are refused (they enable entity bombs)")

    def refuse_external(*args):
        raise XMLRefused("it refers to an external entity; those are never fetched")

    def start(tag, attrs):
        counts["elements"] += 1
        counts["depth"] += 1
        if counts["elements"] > max_elements:
            raise XMLRefused(f"it has more than {max_elements:,} elements")
        if counts["depth"] > MAX_DEPTH:
            raise XMLRefused(f"it nests deeper than {MAX_DEPTH} levels")
        builder.start(_clark(tag), {_clark(k): v for k, v in attrs.items()})

    def end(tag):
        counts["depth"] -= 1
        builder.end(_clark(tag))

    parser.EntityDeclHandler = refuse_entity
    parser.UnparsedEntityDeclHandler = refuse_entity
    parser.ExternalEntityRefHandler = refuse_external
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
        return builder.close()
    except XMLRefused:
        raise
    except (expat.ExpatError, AssertionError) as exc:
        raise XMLRefused(f"it is not well-formed XML ({exc})") from None


def _clark(name: str) -> str:
    # expat gives "uri}local"; ElementTree's own convention is "{uri}local".
    return "{" + name if "}" in name else name


def local(tag) -> str:
    """A tag without its namespace: "{http://www.w3.org/2000/svg}text" -> "text"."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
