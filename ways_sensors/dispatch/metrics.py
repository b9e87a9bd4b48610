"""The Prometheus textfile: every rule's totals, for node_exporter's textfile collector.

`ways.metrics_textfile: PATH` in the user's config.yaml names the file (absolute, or
starting with ~; usually `<node_exporter's --collector.textfile.directory>/ways.prom`).
Each dispatcher rewrites it (`tick`) at most every INTERVAL seconds and once more when it
exits: a temporary file in the same folder (not ending in .prom, so the collector never
reads half a file), mode 0644, renamed over PATH. Every writer renders the same totals
from the state root, so it does not matter which dispatcher wrote last. `ways status
--prometheus` prints the same text. A failed write is logged content-free
(`metrics.write_failed`) once until a write succeeds again.

The rename replaces whatever is at PATH, so PATH is checked first (`check_path`): a
path inside the state, config or cache root (links resolved) is refused, and so is
one that holds anything but a textfile of ours: not a regular file (a link, a folder),
or a non-empty file that does not begin with MAGIC. A mistyped setting pointed at
`redaction.key`, `config.yaml` or someone's notes leaves them as they were
(`metrics.write_failed` with `error: RefusedPath` and a `reason`).

The text (exposition format 0.0.4; no sample timestamps, never a session id):

    # HELP ways_sensors_<kind>_total <what it counts>      one family per counters.KINDS
    # TYPE ways_sensors_<kind>_total counter
    ways_sensors_<kind>_total{sensor="<sensor>",rule="<rule>"} <n>
    # HELP ways_sensors_dead_letters ...                    gauge, per sensor and rule:
    # TYPE ways_sensors_dead_letters gauge                  lines in its dead-letter file
    ways_sensors_dead_letters{sensor="<sensor>",rule="<rule>"} <n>
    ways_sensors_dispatchers <n>                            gauge: live dispatchers
    ways_sensors_pending_sessions <n>                       gauge: sessions still owed records
    ways_sensors_refused_files <n>                          gauge: sensor files the last
                                                            index build refused (refusals.py)
    ways_sensors_last_delivery_timestamp_seconds{...}       gauges per sensor and rule, from
    ways_sensors_last_error_timestamp_seconds{...}          the health marks (counters.py);
    ways_sensors_failing_since_timestamp_seconds{...}       0: never, or not failing
    ways_sensors_owed_records{...}                          `ways status --prometheus` only
    ways_sensors_oldest_owed_age_seconds{...}               (counting them reads the journals:
                                                            services/owed.py)
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from typing import Any

from .. import roots
from ..config import refusals, userconfig
from ..pipeline import deadletters
from ..state import counters, events
from ..state.layout import Layout

INTERVAL = 5.0
PREFIX = "ways_sensors_"
MAGIC = b"# HELP " + PREFIX.encode()  # how every textfile of ours begins (render)
SETTING = ("ways", "metrics_textfile")
HELP = {
    "dispatched": "Records numbered for the rule and handed to delivery.",
    "delivered": "Records the consumer accepted.",
    "held": "Records taken into a span still open (traces): nothing sent for them yet.",
    "unconfirmed": "Records sent without an acknowledgement (syslog over UDP): "
    "nothing says they arrived.",
    "timeouts": "Delivery attempts cut at the rule's timeout.",
    "kills": "Consumer process groups killed at the deadline.",
    "refusals": "Delivery attempts the consumer refused (an HTTP status, a non-zero exit).",
    "errors": "Delivery attempts that never reached the consumer.",
    "drops": "Records dropped at the rule's queue cap (best_effort).",
    "retries": "Delivery attempts that will be tried again (at_least_once).",
    "rejected": "Records refused for good (dead letters) or dropped by the consumer "
    "(OTLP partial success).",
    "lost": "Records given up: failed best_effort deliveries, unsendable records.",
    "redactions": "Secrets masked in dispatched records.",
}


# --- what is counted ---------------------------------------------------------------------


def live_dispatchers(layout: Layout | None = None) -> list[dict[str, Any]]:
    """[{session, pid, age_s}] of every dispatcher holding its session's lock."""
    from ..state.session import read_json

    layout = layout or Layout()
    out: list[dict[str, Any]] = []
    for sid in layout.sessions():
        lock = layout.dispatch_lock(sid)
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            continue  # nobody holds it
        except BlockingIOError:
            info = read_json(layout.dispatcher_info(sid), {}) or {}
            out.append(
                {
                    "session": sid,
                    "pid": info.get("pid"),
                    "age_s": round(time.time() - info.get("started", time.time()), 1),
                }
            )
        finally:
            os.close(fd)
    return out


_lines: dict[str, tuple[int, int, int]] = {}  # dead-letter file -> (inode, size, lines)


def dead_letter_counts(layout: Layout | None = None) -> dict[str, int]:
    """{rule id: parked records, its rotated older file included}; a file that only
    grew is counted from where it was last seen, so a big dead-letter file costs its
    new bytes only."""
    out: dict[str, int] = {}
    folder = deadletters.deadletter_folder(layout)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        key = name[: -len(".jsonl")] if name.endswith(".jsonl") else None
        if name.endswith(".jsonl" + deadletters.ROTATED):
            key = name[: -len(".jsonl" + deadletters.ROTATED)]
        if key is None:
            continue
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                ino, size, count = _lines.get(path, (st.st_ino, 0, 0))
                if ino != st.st_ino or size > st.st_size:
                    size, count = 0, 0  # replaced or cut: count again
                f.seek(size)
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    count += chunk.count(b"\n")
                    size += len(chunk)
        except OSError:
            continue
        _lines[path] = (st.st_ino, size, count)
        out[key] = out.get(key, 0) + count
    return out


# --- the text ------------------------------------------------------------------------------


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(rid: str) -> str:
    sensor, _, rule = rid.partition(".")
    return f'{{sensor="{_label(sensor)}",rule="{_label(rule)}"}}'


def render(
    layout: Layout | None = None, owed: dict[str, tuple[int, float | None]] | None = None
) -> str:
    """The whole textfile, from the totals on disk; with `owed` ({rule key: (records
    owed, the oldest one's age in seconds)}, services/health.py), those too."""
    layout = layout or Layout()
    totals = counters.read_all(layout)
    lines: list[str] = []
    for kind in counters.KINDS:
        name = f"{PREFIX}{kind}_total"
        lines += [f"# HELP {name} {HELP.get(kind, kind)}", f"# TYPE {name} counter"]
        lines += [f"{name}{_labels(rid)} {c.get(kind, 0)}" for rid, c in sorted(totals.items())]
    name = PREFIX + "dead_letters"
    lines += [
        f"# HELP {name} Records parked in the rule's dead-letter file.",
        f"# TYPE {name} gauge",
    ]
    lines += [f"{name}{_labels(rid)} {n}" for rid, n in sorted(dead_letter_counts(layout).items())]
    for gauge, value, text in (
        (
            "dispatchers",
            len(live_dispatchers(layout)),
            "Live dispatchers (one per active session).",
        ),
        ("pending_sessions", len(layout.pending_sessions()), "Sessions with records still owed."),
        (
            "refused_files",
            len({f.get("file") for f in refusals.read(layout)}),
            "Sensor files refused by the last index build: their rules record nothing.",
        ),
    ):
        lines += [
            f"# HELP {PREFIX}{gauge} {text}",
            f"# TYPE {PREFIX}{gauge} gauge",
            f"{PREFIX}{gauge} {value}",
        ]
    return "\n".join(lines + _health(layout, owed)) + "\n"


HEALTH_GAUGES = (
    ("last_delivery_timestamp_seconds", "last_delivered_ns", "When a consumer last accepted."),
    ("last_error_timestamp_seconds", "last_error_ns", "When an attempt last failed."),
    (
        "failing_since_timestamp_seconds",
        "failing_since_ns",
        "The first failure after the last delivery (0: the last attempt passed).",
    ),
)


def _health(layout: Layout, owed: dict[str, tuple[int, float | None]] | None) -> list[str]:
    lines: list[str] = []
    marks = counters.read_health(layout)
    for gauge, key, text in HEALTH_GAUGES:
        name = PREFIX + gauge
        lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge"]
        for rid, m in sorted(marks.items()):
            value = m.get(key)
            lines.append(f"{name}{_labels(rid)} {int(value) / 1e9 if value else 0:.3f}")
    if not owed:
        return lines
    owed_text = "Records built for the rule and not yet settled (a floor past the scan's bound)."
    for gauge, text in (
        ("owed_records", owed_text),
        ("oldest_owed_age_seconds", "How long the oldest owed record has waited."),
    ):
        name = PREFIX + gauge
        lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge"]
        for rid, (records, age) in sorted(owed.items()):
            value = records if gauge == "owed_records" else (age or 0)
            lines.append(f"{name}{_labels(rid)} {value}")
    return lines


# --- the file ------------------------------------------------------------------------------


def textfile_path(config: dict[str, Any]) -> str | None:
    """`ways.metrics_textfile` of a config mapping, expanded; None when unset.
    ValueError when it is set but not an absolute path (or ~)."""
    ways = config.get("ways")
    value = ways.get(SETTING[1]) if isinstance(ways, dict) else None
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.startswith(("/", "~")):
        raise ValueError("ways.metrics_textfile must be an absolute path or start with ~")
    return os.path.expanduser(value)


class RefusedPath(Exception):
    """A textfile path that must never be replaced; `reason` says why (content-free)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _inside(path: str, root: str) -> bool:
    root = os.path.realpath(root).rstrip("/")
    return path == root or path.startswith(root + "/")


def check_path(path: str) -> None:
    """RefusedPath unless replacing `path` destroys nothing: it is outside ways' own
    roots, and nothing is there, or an empty regular file, or a textfile of ours."""
    real = os.path.join(os.path.realpath(os.path.dirname(path) or "."), os.path.basename(path))
    for name, root in (
        ("state_root", roots.state_root()),
        ("config_root", roots.config_root()),
        ("cache_root", roots.cache_root()),
    ):
        if _inside(real, root):
            raise RefusedPath("inside_" + name)
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise RefusedPath("not_a_regular_file")
    if st.st_size == 0:
        return
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        head = os.read(fd, len(MAGIC))
    finally:
        os.close(fd)
    if head != MAGIC:
        raise RefusedPath("not_a_metrics_file")


def write(path: str, text: str) -> None:
    """Temporary file in the same folder, mode 0644, renamed over `path` (after
    check_path: RefusedPath when that would destroy something)."""
    import tempfile

    check_path(path)
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            os.fchmod(f.fileno(), 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Textfile:
    """The dispatcher's writer: the path re-read when config.yaml changes, the file
    rewritten at most every INTERVAL seconds, a failure logged once until it clears."""

    def __init__(self) -> None:
        self.next = 0.0
        self.stamp: tuple[int, int] | None = None
        self.path: str | None = None
        self.failing = ""

    def _current_path(self) -> str | None:
        cfg = roots.config_file()
        stamp = userconfig.stamp(cfg)
        if stamp != self.stamp:
            self.stamp, self.path = stamp, None
            self.path = textfile_path(userconfig.data(cfg))
        return self.path

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self.next:
            return
        self.next = now + INTERVAL
        try:
            path = self._current_path()
            if path:
                write(path, render())
            self.failing = ""
        except Exception as exc:  # a missing folder, a bad path: never stop the dispatcher
            kind = type(exc).__name__
            reason = exc.reason if isinstance(exc, RefusedPath) else None
            if f"{kind}:{reason}" != self.failing:
                self.failing = f"{kind}:{reason}"
                if reason:
                    events.log("metrics.write_failed", error=kind, reason=reason)
                else:
                    events.log("metrics.write_failed", error=kind)


_textfile = Textfile()


def tick(force: bool = False) -> None:
    """Rewrite the textfile if it is due (`force`: now, as a dispatcher exits)."""
    _textfile.tick(force)
