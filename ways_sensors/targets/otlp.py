"""The `otlp` target: records as OpenTelemetry log records (or spans), OTLP/HTTP.

`POST {endpoint}/v1/logs` (an endpoint already ending in `/v1/logs` is used as is, as
the OpenTelemetry exporters do with OTEL_EXPORTER_OTLP_LOGS_ENDPOINT), one request per
batch, optionally gzip-compressed. Header values may be `${ENV_NAME}`, as for the http
target. No OpenTelemetry SDK: it ignores partial success and brings a retry loop of its
own that would fight the rule's watchdog, so the request is written here by hand.
`encoding: protobuf` sends the same request in the protobuf wire format
(`application/x-protobuf`, formats/otlp_protobuf.py, also by hand); JSON is the default
(formats/otlp_json.py). Those two are the formats this target carries (`FORMATS`): a
record-by-record format (ocsf, ecs, splunk_hec) goes by http, file, command or syslog.

The request (an ExportLogsServiceRequest in OTLP's JSON mapping: lowerCamelCase keys,
64-bit integers as decimal strings, enums as numbers):

    {"resourceLogs": [{ one per agent in the batch (a batch is one session: one agent)
      "resource": {"attributes": [service.name, service.version, host.name,
                                  ways.agent.name (the records' `agent`: claude-code,
                                  codex, gemini, cursor, copilot; left out when the
                                  rule's `fields` drop it), the records' identity
                                  (user.id, enduser.id, user.email, user.full_name,
                                  user.roles, ways.user.team, host.id, ways.install.id),
                                  + the spec's `resource`]},
      "scopeLogs": [{"scope": {"name": "ways-sensors", "version": V},
        "logRecords": [one per section record, in batch order:
          {"timeUnixNano": the record's `timestamp`, "observedTimeUnixNano": now,
           "traceId", "spanId": the session's trace (the client's, once the session
             joined it: `traceparent`) and the record's span in it (traces/ids.py),
           "severityNumber", "severityText": the record's level (formats/severity.py:
             17 ERROR, 13 WARN, 10 INFO2, 9 INFO), "eventName": "ways.sensor.<section>",
           "body": {"stringValue": the record as canonical JSON, `chain` included},
           "attributes": [session.id, gen_ai.conversation.id, prompt.id?,
             gen_ai.agent.id? gen_ai.agent.name? (subagents), gen_ai.tool.name?
             gen_ai.tool.call.id? (tool sections), ways.agent.name?, ways.sensor, ways.rule,
             ways.rule_seq (int), ways.seq? (int), ways.section, ways.hook_event?,
             ways.test? (bool)]}]}]}]}

An attribute whose record field is absent (projected away, or null) is left out. No hook
payload carries the agent's version; a sensor file may add it under `resource`.

Responses, as the OTLP specification says:

    2xx                      accepted; a JSON body whose partialSuccess.rejectedLogRecords
                             is above 0 is still accepted, its count carried in
                             Outcome.rejected (counted as rejected, never retried)
    429, 502, 503, 504       retryable, honouring Retry-After (seconds or an HTTP date)
    401, 403                 retryable with the backoff (an expired or revoked credential
                             is an alarm about the consumer, not a verdict on the record)
    no connection, a torn    retryable (error); the deadline passing: retryable (timeout)
    response
    any other status         permanent (3xx are never followed); so is an unset header
                             variable or a header value HTTP cannot carry

The request is transport.py's, shared with the http target: at most BODY_CAP bytes of
a response are read (`Accept-Encoding: identity` asks for it uncompressed), under the
total deadline; asyncio and httpx wait for the first delivery.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from msgspec import Meta, Struct

from .. import formats
from ..formats.otlp_logs import attributes, log_record, otel_attributes, text
from . import tlsconf, transport
from .base import (
    REFUSED,
    Context,
    Item,
    Outcome,
    accepted,
    held_open,
    permanent,
    refused_url,
    retryable,
)
from .headers_helper import HeadersHelper
from .tlsconf import Tls

if TYPE_CHECKING:
    from .base import Advice


class OtlpTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Send records as OpenTelemetry log records to an OTLP/HTTP endpoint (JSON); header
    values may be ${ENV_NAME}; `resource` adds or overrides resource attributes."""

    endpoint: Annotated[
        str,
        Meta(pattern=r"^https?://", description="the collector, e.g. http://127.0.0.1:4318"),
    ]
    headers: dict[str, str] = {}
    tls: Tls | None = None  # tlsconf.py: verification and a client certificate
    headers_helper: HeadersHelper | None = None  # headers_helper.py: short-lived headers
    resource: dict[str, str] = {}
    compression: Literal["none", "gzip"] = "none"
    signal: Literal["logs", "traces"] = "logs"  # traces: the session as GenAI spans
    encoding: Literal["json", "protobuf"] = "json"  # protobuf: application/x-protobuf


Spec = OtlpTarget
SECRET_FIELDS: tuple[str, ...] = ("headers",)
BATCH_DEFAULT = (512, 0.2)  # (max_records, max_delay seconds) when the rule sets no batch
FORMAT_FIELD = "encoding"
FORMATS = {"json": "otlp_json", "protobuf": "otlp_protobuf"}  # encoding: the format sent

LOGS_PATH = "/v1/logs"
TRACES_PATH = "/v1/traces"
SERVICE_NAME = "ways-sensors"
RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
AUTH_STATUS = frozenset({401, 403})  # retried with backoff: about the credential, not the record


def logs_url(endpoint: str, path: str = LOGS_PATH) -> str:
    base = endpoint.rstrip("/")
    return base if base.endswith(path) else base + path


def url_of(spec: OtlpTarget) -> str:
    """The signal's URL: `{endpoint}/v1/logs` or `{endpoint}/v1/traces`."""
    return logs_url(spec.endpoint, TRACES_PATH if spec.signal == "traces" else LOGS_PATH)


def resource_attrs(
    spec: OtlpTarget, agent: str | None = None, identity: Any = None
) -> list[dict[str, Any]]:
    """The resource of the records of one agent (the record's `agent`, which names the
    client whose hooks produced it; None when the rule's fields dropped it), and of the
    user, install and host their `identity` names (fleet/identity.py)."""
    import socket

    from .. import __version__

    base: dict[str, Any] = {
        "service.name": SERVICE_NAME,
        "service.version": __version__,
        "host.name": socket.gethostname(),
        "ways.agent.name": agent or "",
    }
    base.update(otel_attributes(identity))
    base.update(spec.resource)  # the sensor file overrides, service.name included
    groups = base.pop("user.roles", None)
    out = attributes(list(base.items()))
    if groups:
        values = [{"stringValue": text(g)} for g in groups]
        out.append({"key": "user.roles", "value": {"arrayValue": {"values": values}}})
    return out


def request(spec: OtlpTarget, batch: Sequence[Item]) -> dict[str, Any]:
    """The ExportLogsServiceRequest for a batch, as a JSON-ready mapping."""
    from .. import __version__

    observed = time.time_ns()
    by_agent: dict[str | None, list[dict[str, Any]]] = {}
    joined = _joined(batch)
    who: dict[str | None, Any] = {}  # one identity per dispatcher: the first record's
    for item in batch:
        agent = item.record.get("agent")
        key = agent if isinstance(agent, str) and agent else None
        by_agent.setdefault(key, []).append(log_record(item.record, observed, joined))
        who.setdefault(key, item.record.get("identity"))
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": resource_attrs(spec, agent, who[agent])},
                "scopeLogs": [
                    {
                        "scope": {"name": SERVICE_NAME, "version": __version__},
                        "logRecords": logs,
                    }
                ],
            }
            for agent, logs in by_agent.items()
        ]
    }


def _joined(batch: Sequence[Item]) -> str | None:
    """The client's trace the session joined, for a checkpoint record (which carries
    none): its batch's records', else the session's trace.json (traces/joined.py)."""
    if not any(i.record.get("section") == "checkpoint" for i in batch):
        return None
    for item in reversed(batch):
        value = item.record.get("traceparent")
        if isinstance(value, str) and value:
            return value
    from ..state.layout import Layout
    from ..traces import joined

    sid = batch[0].record.get("session_id") if batch else None
    try:
        return joined.read(Layout(), sid) if isinstance(sid, str) and sid else None
    except ValueError:  # not a session id a folder can have (a hostile record)
        return None


def traces_request(
    spec: OtlpTarget, batch: Sequence[Item], ctx: Context | None
) -> dict[str, Any] | None:
    """The ExportTraceServiceRequest for a batch (traces/export.py), None when the batch
    makes no span yet."""
    from .. import __version__
    from ..traces import export

    first = batch[0].record if batch else {}
    return export.request(
        [item.record for item in batch],
        (ctx.session_id if ctx else "") or str(first.get("session_id") or ""),
        (ctx.sensor if ctx else "") or str(first.get("sensor") or ""),
        (ctx.rule if ctx else "") or str(first.get("rule") or ""),
        resource_attrs(spec, None, first.get("identity")),
        __version__,
    )


def encode(spec: OtlpTarget, batch: Sequence[Item], ctx: Context | None = None) -> bytes:
    """The request body in the spec's encoding (formats/), gzip-compressed when the spec
    asks; b"" when a traces batch makes no span."""
    req = traces_request(spec, batch, ctx) if spec.signal == "traces" else request(spec, batch)
    if req is None:
        return b""
    body = formats.request(FORMATS[spec.encoding]).encode(req)
    if spec.compression == "gzip":
        import gzip

        body = gzip.compress(body, compresslevel=6, mtime=0)
    return body


# --- the response ------------------------------------------------------------------------


def rejected_of(body: bytes, protobuf: bool = False) -> tuple[int, str]:
    """(rejected records or spans, the error message) of a 2xx body's partial success,
    read by the request's format; the answer to a protobuf request is protobuf (a server
    that answers it in JSON anyway is read as JSON)."""
    if protobuf and not body.lstrip().startswith(b"{"):
        return formats.request("otlp_protobuf").partial(body)
    return formats.request("otlp_json").partial(body)


def classify(
    status: int, retry_after_header: str | None, body: bytes, protobuf: bool = False
) -> Outcome:
    if 200 <= status < 300:
        count, _ = rejected_of(body, protobuf)
        if count:
            return accepted(f"{status}, partial success: {count} rejected", rejected=count)
        return accepted(str(status))
    detail = f"HTTP {status}"
    if status in AUTH_STATUS:  # an expired or revoked credential: the alarm is ours
        return retryable(REFUSED, detail + ": credentials refused")
    if status in RETRYABLE_STATUS:
        return retryable(REFUSED, detail, transport.retry_after(retry_after_header))
    if 300 <= status < 400:
        return permanent(REFUSED, detail + " (redirects are not followed)")
    return permanent(REFUSED, detail)


def deliver(spec: OtlpTarget, batch: Sequence[Item], ctx: Context, deadline: float) -> Outcome:
    headers = transport.headers(spec.headers, spec.headers_helper)
    if isinstance(headers, Outcome):
        return headers
    protobuf = spec.encoding == "protobuf"
    headers["content-type"] = formats.request(FORMATS[spec.encoding]).MEDIA_TYPE
    headers["accept-encoding"] = "identity"
    if spec.compression == "gzip":
        headers["content-encoding"] = "gzip"
    body = encode(spec, batch, ctx)
    if not body:  # tool calls whose results are still to come: their span goes later
        return held_open("no span yet")
    answer = transport.send(url_of(spec), headers, body, deadline, spec.tls)
    if not isinstance(answer, Outcome) and answer.status == 401 and spec.headers_helper:
        fresh = transport.headers(spec.headers, spec.headers_helper, renew=True)
        if isinstance(fresh, Outcome):
            return fresh
        answer = transport.send(url_of(spec), {**headers, **fresh}, body, deadline, spec.tls)
    if isinstance(answer, Outcome):
        return answer
    return classify(answer.status, answer.retry_after, answer.body, protobuf)


def close() -> None:
    transport.close()


def destination(spec: OtlpTarget) -> str:
    return f"otlp {url_of(spec)}"


def off_machine(spec: OtlpTarget) -> bool:
    return not transport.is_loopback_url(spec.endpoint)


def warnings(spec: OtlpTarget, at_least_once: bool) -> list[Advice]:
    return tlsconf.warnings(spec.tls)


def unreachable(spec: OtlpTarget, timeout: float) -> str | None:
    return refused_url(spec.endpoint, timeout)
