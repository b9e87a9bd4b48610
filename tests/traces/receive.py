"""What the traces tests share: a traces rule pointed at a loopback OTLP/HTTP receiver
(servers.Server("otlp-traces"), which decodes each request with the official protobuf
definitions), the spans it received, and a span's attributes as a plain dict."""

from __future__ import annotations

from ..conftest import ALL_SECTIONS
from ..servers import Server


def attrs(span) -> dict:
    out = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        value = getattr(kv.value, kind)
        out[kv.key] = list(v.string_value for v in value.values) if kind == "array_value" else value
    return out


def all_spans(receiver) -> list:
    return [
        s
        for req in receiver.requests
        for rs in req.resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]


def rule(install, server: Server, batch: str = "", **fields: str) -> None:
    """`tr/spans`: every section, at_least_once, as spans to `server`; `batch` a line
    of its own, `fields` more of the rule's fields."""
    extra = "".join(f"    {k}: {v}\n" for k, v in fields.items())
    install.sensor(
        "tr",
        "rules:\n"
        "  spans:\n"
        f"    sections: [{', '.join(ALL_SECTIONS)}]\n"
        "    delivery: at_least_once\n"
        f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{server.port}', "
        "signal: traces}}\n" + batch + extra,
    )
