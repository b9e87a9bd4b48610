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


def text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text[:MAX_TEXT]


def attributes(pairs: Iterable[tuple[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for k, v in pairs:
        if v is None or v == "":
            continue
        if isinstance(v, bool):
            out.append({"key": k, "value": {"boolValue": v}})
        elif isinstance(v, int):
            out.append({"key": k, "value": {"intValue": str(v)}})
        elif isinstance(v, float):
            out.append({"key": k, "value": {"doubleValue": v}})
        elif isinstance(v, list):
            vals = [{"stringValue": text(x)} for x in v]
            out.append({"key": k, "value": {"arrayValue": {"values": vals}}})
        else:
            out.append({"key": k, "value": {"stringValue": text(v)}})
    return out


def seal(record: dict[str, Any]) -> list[tuple[str, Any]]:
    chain = record.get("chain")
    digest = chain.get("hash") if isinstance(chain, dict) else None
    return [("ways.rule_seq", record.get("rule_seq")), ("ways.chain.hash", digest)]
