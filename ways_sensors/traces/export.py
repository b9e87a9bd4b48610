"""One batch of a rule's records as an OTLP ExportTraceServiceRequest (JSON mapping).

    {"resourceSpans": [{"resource": {"attributes": the otlp target's resource},
      "scopeSpans": [{"scope": {"name": "ways-sensors", "version": V},
                      "spans": spans.py's spans, in record order}]}]}

The span state is read before and saved after (state.py), under the session's cursors
folder; a batch that yields no span (tool calls whose results are still to come) sends
no request. A session without a state folder (a `ways sensors fire` record) keeps its
state in memory only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..state import events
from ..state.layout import Layout
from . import state as store
from .spans import Spans
from .state import State

SCOPE = "ways-sensors"


def request(
    records: Sequence[dict[str, Any]],
    session_id: str,
    sensor: str,
    rule: str,
    resource: list[dict[str, Any]],
    version: str,
    layout: Layout | None = None,
) -> dict[str, Any] | None:
    """The request for `records` (one session's, in rule_seq order), or None when they
    make no span yet."""
    if not records:
        return None
    layout = layout or Layout()
    file = store.path(layout, session_id, sensor, rule)
    persist = os.path.isdir(os.path.dirname(file))
    # checkpoint records (evidence/) stand outside the chain, with no rule_seq
    seqs = [r.get("rule_seq") for r in records if isinstance(r.get("rule_seq"), int)]
    first, last = (seqs[0], seqs[-1]) if seqs else (None, None)
    st = store.before(file, first) if persist else State()
    spans = Spans(session_id, st).of(records)
    if persist:
        try:
            store.save(file, last, st)
        except OSError as exc:  # the spans still go; a resend may start from older state
            events.log(
                "traces.state_unsaved", session=session_id, rule=rule, error=type(exc).__name__
            )
    if not spans:
        return None
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource},
                "scopeSpans": [{"scope": {"name": SCOPE, "version": version}, "spans": spans}],
            }
        ]
    }
