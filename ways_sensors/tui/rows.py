"""The sensors tab's table as data: one row per sensor, rule, refused or broken file.

Kept free of Textual so the rows, their cells, the filter and the footer's lines are
plain values: the app renders them, and the live refresh changes only the count cells.
A sensor row's counts are the sum of its rules'. HELD counts records taken into a
trace span still open (no request made for them yet: not delivered, as `ways status`
counts them); HEALTH is services/health.py's word on the rule, as `ways status` judges
it (dead letters waiting, a consumer owed records and failing past the threshold), and
the footer carries its UNHEALTHY lines. Paths under the home folder are shown
with `~`. `signature` says cheaply when the files behind the table changed, and `Live`
when the state files behind its counts and footer did: an idle tab with 2,000 rules
then stats them once a second instead of reading and parsing 2,000 counters files.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from .. import index, roots
from ..services.catalog import Listing, RuleRow, SensorRow
from ..services.fire import FireResult
from ..services.health import Health
from ..services.status import Snapshot
from ..services.table import printable, printable_line
from ..state.layout import Layout, split_rule_label

COUNTS = (  # (column key, heading, counter kind or "dead" for dead letters)
    ("dispatched", "DISP", "dispatched"),
    ("delivered", "DELIV", "delivered"),
    ("held", "HELD", "held"),
    ("timeouts", "TMOUT", "timeouts"),
    ("kills", "KILL", "kills"),
    ("refusals", "REFUS", "refusals"),
    ("errors", "ERR", "errors"),
    ("drops", "DROP", "drops"),
    ("retries", "RETRY", "retries"),
    ("rejected", "REJ", "rejected"),
    ("lost", "LOST", "lost"),
    ("dead", "DEAD", "dead"),
)
COLUMNS = (  # the rule, whether and how it sends, where to; the counts; how it selects
    ("name", "SENSOR / RULE"),
    ("state", "STATE"),
    ("health", "HEALTH"),
    ("mode", "MODE"),
    ("delivery", "DELIVERY"),
    ("timeout", "TIMEOUT"),
    ("target", "TARGET"),
    ("layer", "LAYER"),
    ("off", "OFF-MACHINE"),
    *((k, h) for k, h, _ in COUNTS),
    ("sections", "SECTIONS"),
    ("where", "CONDITION"),
    ("chain", "CHAIN"),
    ("redact", "REDACT"),
    ("fields", "FIELDS"),
)
LIVE = (*(k for k, _, _ in COUNTS), "health")  # the cells a status snapshot rewrites
WIDE = 28  # a cell longer than this is cut with an ellipsis (the detail line has it all)


def home_short(path: str) -> str:
    home = os.path.expanduser("~").rstrip("/")
    if home and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path.replace(" " + home + "/", " ~/")


def file_shown(layer: str, path: str) -> str:
    """A sensor file for people: shipped ones by name (they live inside the package)."""
    return os.path.basename(path) if layer == "shipped" else home_short(path)


def cut(text: str, width: int = WIDE) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def sections_cell(sections: tuple[str, ...]) -> str:
    return ",".join(sections) if len(sections) <= 2 else f"{len(sections)} sections"


@dataclass
class Row:
    key: str  # "s:<sensor>", "r:<sensor>/<rule>", "x:<n>"
    kind: str  # sensor, rule, refused, error
    sensor: str | None
    cells: dict[str, str]
    detail: str
    rule: RuleRow | None = None
    sensor_row: SensorRow | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def rule_id(self) -> str | None:
        return self.rule.id if self.rule else None

    def text(self) -> str:
        """What the filter searches: every cell but the counts (health too: `/failing`
        narrows to the failing rules), and the detail."""
        counted = {k for k, _, _ in COUNTS}
        cells = (v for k, v in self.cells.items() if k not in counted)
        return " ".join([*cells, self.detail]).lower()


def _rule_state(r: RuleRow, sensor_on: bool) -> str:
    if r.waiting and not r.own_enabled:
        return "off, preview"
    if r.own_enabled and not sensor_on:
        return "off (sensor)"
    return "on" if r.enabled else "off"


def _rule_row(s: SensorRow, r: RuleRow, last: bool) -> Row:
    cells = {
        "name": ("└ " if last else "├ ") + r.name,
        "layer": r.layer,
        "state": _rule_state(r, s.enabled),
        "sections": sections_cell(r.sections),
        "where": cut(r.condition or "-"),
        "target": cut(home_short(r.destination)),
        "mode": r.mode,
        "timeout": f"{r.timeout:g}s",
        "delivery": r.delivery,
        "chain": "yes" if r.chain else "no",
        "redact": r.redact,
        "fields": r.fields,
        "off": r.off_text,
    }
    detail = (
        f"{r.id}  {_rule_state(r, s.enabled)}   {r.layer}: {file_shown(r.layer, r.file)}\n"
        f"mode: {r.mode}   delivery: {r.delivery}   timeout: {r.timeout:g}s   "
        f"chain: {'yes' if r.chain else 'no'}   redact: {r.redact}   fields: {r.fields}\n"
        f"sections: {', '.join(r.sections)}   where: {r.condition or 'every record'}\n"
        f"to: {home_short(r.destination)}"
    )
    if r.content_off_machine:
        detail += "   (session content may leave this machine)"
    elif r.off_machine:
        detail += "   (off this machine, projected to no session content)"
    if r.redact == "none":
        detail += "   (unmasked: redact none)"
    if r.waiting:
        detail += "   (its preview was never seen: p shows it)"
    return Row(f"r:{r.id}", "rule", s.name, cells, detail, rule=r, sensor_row=s)


def _sensor_row(s: SensorRow) -> Row:
    cells = {k: "" for k, _ in COLUMNS}
    cells.update(
        {
            "name": s.name,
            "layer": s.layer + (" (ro)" if s.shipped_only else ""),
            "state": "on" if s.enabled else "off",
            "sections": f"{len(s.rules)} rule" + ("" if len(s.rules) == 1 else "s"),
        }
    )
    files = ", ".join(f"{layer}: {file_shown(layer, f)}" for layer, f in s.files)
    detail = f"{s.name}: {s.description or '(no description)'}\n{files}"
    if s.shipped_only:
        detail += "\nshipped: read-only; c copies it to a sensor of your own"
    return Row(f"s:{s.name}", "sensor", s.name, cells, detail, sensor_row=s)


def build(listing: Listing) -> list[Row]:
    """Every row in table order: each sensor, then its rules; refused and broken last."""
    rows: list[Row] = []
    for s in listing.sensors:
        rows.append(_sensor_row(s))
        rows.extend(_rule_row(s, r, i == len(s.rules) - 1) for i, r in enumerate(s.rules))
    for i, ref in enumerate(listing.refused):
        cells = {k: "" for k, _ in COLUMNS}
        cells.update({"name": ref.name or "?", "layer": "project", "state": "refused"})
        cells["target"] = cut(home_short(ref.file))
        rows.append(Row(f"x:{i}", "refused", ref.name, cells, home_short(ref.reason)))
    for i, p in enumerate(listing.errors):
        cells = {k: "" for k, _ in COLUMNS}
        cells.update({"name": p.sensor or "?", "layer": p.layer or "", "state": "error"})
        cells["target"] = cut(home_short(p.path))
        detail = f"{home_short(p.path)}:{p.line}: {p.message}"
        rows.append(Row(f"x:e{i}", "error", p.sensor, cells, detail))
    for row in rows:
        for k in LIVE:
            row.cells.setdefault(k, "")
        # names, files and fields come from sensor files (a cloned repository's): their
        # control characters are shown as text, never sent to the terminal (table.py)
        row.cells = {k: printable_line(v) for k, v in row.cells.items()}
        row.detail = printable(row.detail)
    return rows


def count(rows: list[Row], snap: Snapshot) -> None:
    """Fill every row's counts from the snapshot (a sensor's are its rules' sums)."""
    sums: dict[str, dict[str, int]] = {}
    by_rule = {r.rule: r for r in snap.rules}  # not snap.rule(): a scan per row
    dead: dict[str, int] = {}
    for d in snap.dead_letters:
        dead[d.rule] = dead.get(d.rule, 0) + d.count
    for row in rows:
        if row.kind != "rule" or row.rule is None:
            continue
        st = by_rule.get(row.rule.id)
        c = {
            k: (
                dead.get(row.rule.id, 0)
                if kind == "dead"
                else (st.counters.get(kind, 0) if st else 0)
            )
            for k, _, kind in COUNTS
        }
        row.counts = c
        total = sums.setdefault(row.rule.sensor, dict.fromkeys(c, 0))
        for k, v in c.items():
            total[k] += v
    unhealthy = {s for s, _ in (split_rule_label(r) for r in snap.unhealthy)}
    for row in rows:
        if row.kind == "sensor" and row.sensor:
            row.counts = sums.get(row.sensor, {k: 0 for k, _, _ in COUNTS})
            row.cells["health"] = "unhealthy" if row.sensor in unhealthy else ""
        elif row.kind == "rule" and row.rule is not None:
            row.cells["health"] = health_cell(snap.health.get(row.rule.id))
        for k, _, _ in COUNTS:
            row.cells[k] = str(row.counts[k]) if row.counts else ""


def health_cell(h: Health | None) -> str:
    """A rule's health in a word or two: its problems (`failing`, `dead letters`), else
    `owed N` while records wait on a consumer not yet failing for long, else `ok`."""
    if h is None:
        return ""
    if h.problems:
        return ", ".join(p.replace("_", " ") for p in h.problems)
    return f"owed {h.owed}" if h.owed else "ok"


def widths(rows: list[Row]) -> dict[str, int]:
    """Each column's width from every row (not the shown ones) and its heading, so the
    columns keep their widths while the filter narrows the rows or a dialog is open."""
    out = {}
    for k, h in COLUMNS:
        out[k] = max([len(h), *(len(r.cells.get(k, "")) for r in rows)])
    for k, _, _ in COUNTS:
        out[k] = max(out[k], 5)  # room for a count that grows while the tab is open
    return out


def narrow(rows: list[Row], text: str) -> list[Row]:
    """The rows whose text holds every word of `text` (case-insensitive)."""
    words = text.lower().split()
    return [r for r in rows if all(w in r.text() for w in words)] if words else list(rows)


def live_lines(snap: Snapshot) -> list[str]:
    """The footer's lines: live dispatchers, owed sessions, dead letters, recent events."""
    if snap.dispatchers:
        shown = ", ".join(f"{d.session} ({d.age_s:g}s)" for d in snap.dispatchers[:4])
        more = f" and {len(snap.dispatchers) - 4} more" if len(snap.dispatchers) > 4 else ""
        lines = [f"live dispatchers: {len(snap.dispatchers)}: {shown}{more}"]
    else:
        lines = ["live dispatchers: none"]
    if snap.pending_sessions:
        lines[0] += f"   sessions owed records: {len(snap.pending_sessions)}"
    dead = sum(d.count for d in snap.dead_letters)
    if dead:
        lines[0] += f"   dead letters: {dead} in {len(snap.dead_letters)} file(s)"
    refused = snap.refused_line()
    if refused:
        lines.insert(0, refused)
    lines += [snap.health[rule].line(rule, snap.now) for rule in snap.unhealthy]
    if snap.events:
        lines += [event_line(e) for e in snap.events]
    else:
        lines.append("events.log: nothing logged yet")
    return lines


def event_line(line: str) -> str:
    """An events-log line for a person: `12:03:04 dispatch.timeout sensor=x rule=y`."""
    import json

    try:
        data = json.loads(line)
    except ValueError:
        return cut(line, 200)
    if not isinstance(data, dict):
        return cut(line, 200)
    ts = str(data.pop("ts", ""))
    kind = str(data.pop("kind", "?"))
    rest = " ".join(f"{k}={v}" for k, v in data.items())
    return cut(f"{ts[11:19]} {kind} {rest}".strip(), 200)


def outcome_text(r: FireResult) -> str:
    """`delivered`, `refused (...)` or `timed out`, with the time it took and when."""
    what = r.describe()  # services/fire.py: the same words as `ways sensors fire`
    at = time.strftime("%H:%M:%S", time.localtime(r.at))
    return f"{r.rule}: {what} in {r.duration_ms:.0f} ms (timeout {r.timeout_s:g}s) at {at}"


def signature() -> tuple[Any, ...]:
    """What the table depends on, cheaply: names, sizes and times of the sensor
    folders' files, config.yaml and the preview record."""
    out: list[Any] = []
    folders = (
        roots.shipped_sensor_dir(),
        roots.user_sensor_dir(),
        roots.project_sensor_dir(index.project_dir()),
    )
    paths = [roots.config_file(), os.path.join(roots.state_root(), "previews.json")]
    for folder in folders:
        try:
            paths += [e.path for e in os.scandir(folder)]
        except OSError:
            out.append((folder, None))
    for path in sorted(paths):
        try:
            st = os.stat(path)
            out.append((path, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((path, None))
    return tuple(out)


RACY_NS = 1_000_000_000  # a file written this close to the last read is read again


def state_signature(layout: Layout | None = None) -> tuple[tuple[Any, ...], int]:
    """(what the counts and the footer read, as names, sizes, times and modes; the
    newest time among them). The live dispatchers are not in it: a lock is probed."""
    layout = layout or Layout()
    out: list[Any] = []
    newest = 0
    files = [layout.events_log(), layout.redaction_key(), layout.spool_faults()]
    for folder in (layout.counters_dir(), layout.deadletters_dir()):
        try:
            with os.scandir(folder) as it:
                files += [e.path for e in it]
        except OSError:
            out.append((folder, None))
    out.append(tuple(layout.pending_sessions()))
    for path in files:
        try:
            st = os.lstat(path)
        except OSError:
            out.append((path, None))
            continue
        out.append((path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid))
        newest = max(newest, st.st_mtime_ns)
    return tuple(out), newest


class Live:
    """Whether the tab must take a status snapshot again: some state file changed since
    the last one (a counter, a dead letter, events.log, a pending marker, the redaction
    key). A file written within RACY_NS of the last read is read again, since a write
    in the same tick of the file system's clock leaves its time as it was (as git
    treats a "racily clean" file)."""

    def __init__(self) -> None:
        self.sig: tuple[Any, ...] | None = None
        self.read_at = 0

    def changed(self) -> bool:
        sig, newest = state_signature()
        if sig == self.sig and newest < self.read_at - RACY_NS:
            return False
        self.sig, self.read_at = sig, time.time_ns()
        return True


def with_dispatchers(snap: Snapshot) -> Snapshot:
    """The snapshot with the live dispatchers probed again (their locks, not files)."""
    from dataclasses import replace

    from ..services.status import live_dispatchers

    now = live_dispatchers()
    return snap if now == snap.dispatchers else replace(snap, dispatchers=now)
