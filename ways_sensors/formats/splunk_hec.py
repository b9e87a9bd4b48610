"""`splunk_hec`: each record in the Splunk HTTP Event Collector's event envelope.

    {"time": 1764718049.728, "host": "<this machine>", "source": "ways:<sensor>/<rule>",
     "sourcetype": "ways:record", "fields": {"session_id", "agent", "section",
     "rule_seq", "severity"}, "event": {the record}}

`time` is the record's timestamp in epoch seconds with milliseconds; `event` the
record exactly as the `json` format sends it (masked, chained); `fields` are indexed
fields for fast `tstats` searches, each a string; `severity` is the record's level
(severity.py: error, warning, notice or info), the one every other format carries. No
`index`: the HEC token's default index decides, as Splunk recommends. A batch is the
envelopes one after another, one per line, as HEC's `/services/collector/event`
endpoint reads them (its documented batch form is concatenated JSON objects; whitespace
between them is allowed).

The http target speaks the rest of HEC (targets/hec.py): the `Splunk <token>` header
comes from the spec's headers, HEC's status codes decide retryable or permanent.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from ..index import DEFAULT
from ._json import dumps
from .ocsf import epoch_ms, hostname
from .severity import level

MEDIA_TYPE: Final = "application/json"
BATCH: Final[Literal["array", "lines"]] = "lines"
SOURCETYPE: Final = "ways:record"


def envelope(record: dict[str, Any]) -> dict[str, Any]:
    fields = {
        "session_id": str(record.get("session_id", "")),
        "agent": str(record.get("agent") or DEFAULT),
        "section": str(record.get("section", "")),
        "rule_seq": str(record.get("rule_seq", "")),
        "severity": level(record),
    }
    return {
        "time": epoch_ms(record.get("timestamp")) / 1000,
        "host": hostname(),
        "source": f"ways:{record.get('sensor', '')}/{record.get('rule', '')}",
        "sourcetype": SOURCETYPE,
        "fields": fields,
    }


def encode(record: dict[str, Any], line: bytes) -> bytes:
    """The envelope with the record's own bytes spliced in as the last member, `event`
    (the record is not encoded twice)."""
    return dumps(envelope(record))[:-1] + b',"event":' + line + b"}"
