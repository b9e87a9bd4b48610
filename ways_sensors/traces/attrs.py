"""Span attributes in OTLP's JSON mapping, bounded, and which GenAI attribute names to
use (OTEL_SEMCONV_STABILITY_OPT_IN)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

STABILITY_ENV = "OTEL_SEMCONV_STABILITY_OPT_IN"
MAX_TEXT = 64 << 10  # characters of one attribute's text


def legacy_names() -> bool:
    """Whether to add the attributes older GenAI conventions used (`gen_ai.system`) beside
    1.37's: yes unless OTEL_SEMCONV_STABILITY_OPT_IN asks for the latest GenAI
    conventions only (`gen_ai_latest_experimental`)."""
    opt = os.environ.get(STABILITY_ENV, "")
    return "gen_ai_latest_experimental" not in {p.strip() for p in opt.split(",")}


# one encoder made once: json.dumps with these options builds a new one at every call
_JSON = json.JSONEncoder(default=str, ensure_ascii=False)


def text(value: Any) -> str:
    text = value if isinstance(value, str) else _JSON.encode(value)
    return text[:MAX_TEXT]


def attributes(pairs: Iterable[tuple[str, Any]]) -> list[dict[str, Any]]:
    """OTLP attributes of (key, value) pairs; None and "" are left out. Most values are
    plain strings, tested first by their exact type (this runs for every attribute of
    every span); a subclass (bool is an int) takes the general path."""
    out: list[dict[str, Any]] = []
    add = out.append
    for k, v in pairs:
        kind = type(v)
        if kind is str:
            if v:
                add({"key": k, "value": {"stringValue": v[:MAX_TEXT]}})
        elif v is None:
            continue
        elif kind is int:
            add({"key": k, "value": {"intValue": str(v)}})
        elif isinstance(v, bool):
            add({"key": k, "value": {"boolValue": v}})
        elif isinstance(v, int):
            add({"key": k, "value": {"intValue": str(v)}})
        elif isinstance(v, float):
            add({"key": k, "value": {"doubleValue": v}})
        elif isinstance(v, list):
            vals = [{"stringValue": text(x)} for x in v]
            add({"key": k, "value": {"arrayValue": {"values": vals}}})
        elif v != "":
            add({"key": k, "value": {"stringValue": text(v)}})
    return out


def seal(record: dict[str, Any]) -> list[tuple[str, Any]]:
    chain = record.get("chain")
    digest = chain.get("hash") if isinstance(chain, dict) else None
    return [("ways.rule_seq", record.get("rule_seq")), ("ways.chain.hash", digest)]
