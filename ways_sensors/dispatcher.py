"""The detached per-session dispatcher: `ways sensors dispatch --session ID`.

One process per session, holding `dispatch.lock` (a second one exits at once). The main
thread builds: it reads new spool frames, turns them into records (agents/, records.py),
numbers them `seq` and appends them to the session's journal, then commits the build
cursor (session.py says how that survives a SIGKILL). Each enabled async rule has its
own worker thread with its own cursor into the journal, so one stuck consumer never
delays another: the worker matches, numbers (`rule_seq`), masks, chains and delivers
under the rule's timeout (targets/). Rules are re-read from the index whenever its key
changes, so an edited sensor file takes effect without a restart.

Lifetime: exits after IDLE seconds with no new spool frames and every worker caught up
(or only retrying), or once drained after `session_end`. A session that ended with
nothing pending leaves its ledger and loses its folder; one with records still owed
leaves a pending marker, so its next hook event or any session's start restarts it.
Never writes to a terminal: the hook starts it with fds 0-2 on /dev/null.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from . import agents, chain, counters, delivery, events, index, lost, records, roots, spool
from .layers import LoadedRule
from .pipeline import dumps, finish, match
from .session import (
    JOURNAL_MAGIC,
    JOURNAL_SEGMENT_BYTES,
    Session,
    frame,
    journal_segments,
    next_segment,
    read_json,
    rule_id,
    write_json,
)
from .targets import Outcome

if TYPE_CHECKING:
    from .agents.protocols import SessionBuilder

IDLE = 60.0
RETRY_EVENT = "WaysRetry"  # a failed blocking at_least_once dispatch, spooled by the hook
RETRY_SECTION = "__retry__"
FAST_POLL, SLOW_POLL = 0.005, 0.1


def load_rules(project: str) -> tuple[str, dict[str, tuple[str, LoadedRule]]]:
    """(index key, {rule id: (sensor, rule)}): the enabled async rules, and the blocking
    at_least_once ones, whose workers deliver the hook's failed dispatches again."""
    idx = index.current(project)
    rules = index.enabled_rules(idx, mode="async")
    for rid, (sensor, rule) in index.enabled_rules(idx, mode="blocking").items():
        if rule.rule.delivery == "at_least_once":
            rules[rid] = (sensor, rule)
    return idx.key, rules


class Worker(threading.Thread):
    """Delivers one rule's records from the journal, in order."""

    def __init__(self, disp: Dispatcher, sensor: str, rule: LoadedRule):
        super().__init__(name=f"rule {sensor}/{rule.name}", daemon=True)
        self.disp = disp
        self.sensor = sensor
        self.rule = rule
        self.rid = rule_id(sensor, rule.name)
        self.tally = counters.Tally(self.rid)
        self.stop = threading.Event()
        self.path = disp.session.cursor_path(self.rid)
        self.state = self._load_state()
        self.retrying = False
        self.buffer: list[tuple[int, Any]] = []
        self.redelivers = rule.rule.mode == "blocking"  # only the hook's failed dispatches

    # --- state ----------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        st = read_json(self.path)
        seg, size = self.disp.journal_end()
        if not isinstance(st, dict):
            head = self.disp.ledger.get("rules", {}).get(f"{self.sensor}/{self.rule.name}")
            rule_seq, h = head if isinstance(head, list) and len(head) == 2 else (0, chain.GENESIS)
            st = {"rule_seq": rule_seq, "hash": h, "pending": None}
            st["segment"], st["offset"] = seg, size  # a new rule sees records from now on
        elif not st.get("active", True):
            st["segment"], st["offset"] = seg, size  # re-enabled: not what it missed
        st["active"] = True
        self._save(st)
        return st

    def _save(self, st: dict[str, Any] | None = None) -> None:
        write_json(self.path, st or self.state)

    def deactivate(self) -> None:
        self.state["active"] = False
        self._save()

    # --- the loop ---------------------------------------------------------------------

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                progressed = self.step()
            except Exception as exc:  # a bug must not kill the rule silently
                events.log(
                    "dispatch.worker_error",
                    sensor=self.sensor,
                    rule=self.rule.name,
                    session=self.disp.session.id,
                    error=type(exc).__name__,
                )
                progressed = False
                self.stop.wait(1.0)
            if not progressed:
                self.disp.wait_for_records(0.5)

    def _refill(self) -> bool:
        """Read the committed records after the cursor into the buffer; False if none."""
        while True:
            batch = self.disp.read_journal(self.state["segment"], self.state["offset"])
            if batch is None:  # the end of a finished segment: go on to the next
                nxt = self.disp.segment_after(self.state["segment"])
                if nxt is None:
                    return False
                self.state["segment"], self.state["offset"] = nxt, 0
                self._save()
                continue
            if not batch:
                return False
            r = self.rule.rule
            if r.delivery == "best_effort" and not self.redelivers:
                matching = [
                    i
                    for i, (_, rec) in enumerate(batch)
                    if rec is not None and match(self.rule, rec)
                ]
                drop = max(0, len(matching) - r.queue_cap)
                if drop:
                    for i in matching[:drop]:
                        batch[i] = (batch[i][0], "drop")
                    events.log(
                        "dispatch.drop",
                        sensor=self.sensor,
                        rule=self.rule.name,
                        session=self.disp.session.id,
                        count=drop,
                        cap=r.queue_cap,
                    )
            self.buffer = batch
            self.buffer.reverse()  # pop() from the end is the oldest
            return True

    def step(self) -> bool:
        if self.state.get("pending") is not None:
            self._deliver_pending()
            return True
        if not self.buffer and not self._refill():
            return False
        moved = False
        while self.buffer and not self.stop.is_set():
            end, rec = self.buffer.pop()
            self.state["offset"] = end
            moved = True
            if rec == "drop":
                self.state["rule_seq"] += 1  # the consumer sees the gap
                self.tally.count("drops")
                continue
            if self.redelivers:
                if not isinstance(rec, dict) or rec.get("retry_for") != self.rid:
                    continue
                self.state["pending"] = rec.get("record")  # numbered and chained already
                self._save()
                self._deliver_pending()
                return True
            try:
                if rec is None or not match(self.rule, rec):
                    continue
                out, h = finish(
                    rec, self.sensor, self.rule, self.state["rule_seq"] + 1, self.state["hash"]
                )
                dumps(out)  # a record that cannot be sent must not block the ones behind it
            except Exception as exc:  # hostile shapes: nesting deeper than recursion allows
                self.tally.count("lost")
                events.log(
                    "dispatch.unsendable_record",
                    sensor=self.sensor,
                    rule=self.rule.name,
                    session=self.disp.session.id,
                    error=type(exc).__name__,
                )
                continue
            self.state["rule_seq"] += 1
            self.state["hash"] = h
            self.state["pending"] = out
            self._save()  # numbered, chained and moved past in one atomic write
            self.tally.count("dispatched")
            if out.get("redactions"):
                self.tally.count("redactions", len(out["redactions"]))
            self._deliver_pending()
            return True
        if moved:
            self._save()
        return True

    def _deliver_pending(self) -> None:
        """Deliver the pending record until the rule is done with it (delivery.settle):
        accepted, lost (best_effort) or parked (permanent); otherwise back off and retry."""
        rec = self.state["pending"]
        backoff = delivery.BACKOFF_FIRST
        while True:
            outcome = self.deliver(rec)
            if delivery.settle(
                self.sensor,
                self.rule,
                [rec],
                outcome,
                session=self.disp.session.id,
                tally=self.tally,
            ):
                break
            self.retrying = True
            if self.stop.wait(delivery.next_wait(backoff, outcome)):
                return  # leave it pending on disk for the next dispatcher
            backoff = min(backoff * 2, delivery.BACKOFF_CAP)
        self.retrying = False
        self.state["pending"] = None
        self._save()

    def deliver(self, rec: dict[str, Any]) -> Outcome:
        """One attempt, under the rule's timeout; counted and logged (delivery.py)."""
        return delivery.attempt(
            self.sensor, self.rule, [rec], session=self.disp.session.id, tally=self.tally
        )

    def done(self) -> bool:
        """Nothing left to deliver: at the committed journal end, nothing pending."""
        seg, size = self.disp.journal_end()
        st = self.state
        return (
            st.get("pending") is None
            and not self.buffer
            and (st["segment"], st["offset"]) >= (seg, size)
        )

    @property
    def idle(self) -> bool:
        return self.retrying or self.done()

    @property
    def owes(self) -> bool:
        """Records this rule still has to deliver (at_least_once only keeps a debt)."""
        if self.rule.rule.delivery != "at_least_once":
            return False
        return not self.done()


class Dispatcher:
    def __init__(self, session_id: str, idle: float = IDLE):
        self.session = Session(session_id)
        self.idle = idle
        self.cond = threading.Condition()
        self.workers: dict[str, Worker] = {}
        self.ledger: dict[str, Any] = {}
        self.rules_key = ""
        self._lock_fd: int | None = None

    # --- the journal (read by workers, written by the main thread) ----------------------

    def journal_end(self) -> tuple[str, int]:
        j = self.build["journal"]
        return j[0], j[1]

    def segment_after(self, seg: str) -> str | None:
        names = journal_segments(self.session.journal)
        later = [n for n in names if n > seg]
        committed = self.build["journal"][0]
        return later[0] if later and later[0] <= committed else None

    def read_journal(self, seg: str, offset: int):
        """Committed records after (seg, offset): [(end offset, record | None)], [] when
        caught up, None at the end of a segment that has a successor."""
        import json

        end_seg, end_size = self.journal_end()
        if seg == end_seg:
            limit = end_size
        elif seg < end_seg:
            limit = None
        else:
            return []
        try:
            with open(os.path.join(self.session.journal, seg), "rb") as f:
                f.seek(offset)
                data = f.read() if limit is None else f.read(max(0, limit - offset))
        except FileNotFoundError:
            data = b""
        out = []
        for _, end, body in spool.scan_frames(data, JOURNAL_MAGIC):
            try:
                rec = json.loads(body) if body is not None else None
            except ValueError:
                rec = None
            out.append((offset + end, rec))
        if not out and seg != end_seg:
            return None
        return out

    def wait_for_records(self, timeout: float) -> None:
        with self.cond:
            self.cond.wait(timeout)

    # --- start and recovery ----------------------------------------------------------

    def acquire(self) -> bool:
        """Take the session's lock; False when another dispatcher has it, or when the
        session folder is gone (a late start after the previous dispatcher finished)."""
        try:
            fd = os.open(self.session.lock, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock_fd = fd
        if not os.path.exists(self.session.lock):  # removed while we waited for it
            os.close(fd)
            return False
        self.session.create()
        write_json(self.session.info, {"pid": os.getpid(), "started": time.time()})
        return True

    def recover(self) -> None:
        """Load the build cursor and cut the journal back to what it committed."""
        self.ledger = self.session.read_ledger()
        b = read_json(self.session.build)
        if not isinstance(b, dict):
            b = {
                "project": None,
                "spool": ["0000000001.seg", 0],
                "journal": ["0000000001.seg", 0],
                "seq": int(self.ledger.get("seq", 0)),
                "ended": False,
                "trackers": {},
            }
        self.build = b
        seg, size = b["journal"]
        for name in journal_segments(self.session.journal):
            path = os.path.join(self.session.journal, name)
            if name > seg:
                os.unlink(path)
            elif name == seg and os.path.getsize(path) > size:
                os.truncate(path, size)
        states = b.get("trackers") or {}
        old = b.pop("tracker", None)  # a build cursor from before agents: Claude Code's
        if old:
            states.setdefault(agents.DEFAULT, old)
        b["trackers"] = states
        self.builders: dict[str, SessionBuilder] = {}  # per agent, made at its first entry

    @property
    def project(self) -> str:
        return self.build.get("project") or roots.project_dir()

    # --- building ------------------------------------------------------------------------

    def build_step(self) -> int:
        """Build every complete spool frame not yet built; returns how many."""
        import json

        b = self.build
        seg, off = b["spool"]
        names = spool.segment_names(self.session.spool)
        path = os.path.join(self.session.spool, seg)
        try:
            with open(path, "rb") as f:
                f.seek(off)
                data = f.read()
        except FileNotFoundError:
            data = b""
        frames = list(spool.scan_frames(data))
        if not frames:
            later = [n for n in names if n > seg]
            if later and not data:  # this segment is finished: move on, drop it
                b["spool"] = [later[0], 0]
                self._commit(b"")
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
                return 0
            return 0
        self.sync_rules()  # a rule added since the last look sees these records too
        out = bytearray()
        built = 0
        for start, end, body in frames:
            entry = spool.parse_entry(body, seg, off + start)
            b["spool"] = [seg, off + end]
            if entry is None:
                events.log("dispatch.corrupt_spool_frame", session=self.session.id)
                continue
            built += 1
            if not b.get("project"):
                b["project"] = entry.project
            payload = records.parse_payload(entry.payload)
            if entry.event == RETRY_EVENT and payload is not None:
                out += frame(
                    json.dumps(
                        {
                            "section": RETRY_SECTION,
                            "retry_for": payload.get("rule"),
                            "record": payload.get("record"),
                        },
                        ensure_ascii=False,
                        separators=(",", ":"),
                    ).encode("utf-8", "surrogatepass")
                )
                continue
            if payload is None:
                events.log(
                    "dispatch.unreadable_payload", session=self.session.id, hook_event=entry.event
                )
                continue
            built_entry = self._drafts(entry, payload)
            if built_entry is None:
                continue
            event, drafts = built_entry
            seq, built_frames = b["seq"], []
            try:
                for d in drafts:
                    seq += 1
                    rec = records.envelope(d, seq, self.session.id, entry.project)
                    built_frames.append(
                        frame(
                            json.dumps(
                                rec, ensure_ascii=False, separators=(",", ":"), default=str
                            ).encode("utf-8", "surrogatepass")
                        )
                    )
            except Exception as exc:  # nesting too deep to encode: never block the spool
                events.log(
                    "dispatch.unencodable_entry",
                    session=self.session.id,
                    hook_event=event,
                    error=type(exc).__name__,
                )
                continue
            b["seq"] = seq
            out += b"".join(built_frames)
        self._commit(bytes(out))
        return built

    def _drafts(
        self, entry: spool.Entry, payload: dict[str, Any]
    ) -> tuple[str, list[records.Draft]] | None:
        """(event, drafts) of one entry, built by the adapter of the agent that wrote it
        (a way event: by records.py); None, logged, when it cannot be built."""
        event = entry.event
        try:
            if event == records.WAY_EVENT:  # `ways sensors emit`: ways' own, no agent's
                return event, records.way_event(payload, entry.ts_ns)
            builder = self._builder(entry.agent)
            face = agents.face(entry.agent)
            if builder is None or face is None:
                events.log("dispatch.unknown_agent", session=self.session.id, hook_event=event)
                return None
            event = agents.adapter(entry.agent).event_of(payload) or event
            if event == face.END_EVENT:
                self.build["ended"] = True
            elif event == face.START_EVENT:
                self.build["ended"] = False
            return event, builder.build(event, payload, entry.ts_ns, entry.transcript_size)
        except Exception as exc:
            events.log(
                "dispatch.build_error",
                session=self.session.id,
                hook_event=event,
                error=type(exc).__name__,
            )
            return None

    def _builder(self, agent: str) -> SessionBuilder | None:
        """The session's builder for `agent`'s entries, resumed from its saved state;
        None for an agent this version does not know."""
        builder = self.builders.get(agent)
        if builder is None and agent in agents.ADAPTERS:
            state = self.build["trackers"].get(agent)
            builder = agents.adapter(agent).new_builder(state)
            self.builders[agent] = builder
        return builder

    def _commit(self, data: bytes) -> None:
        """Append built records to the journal, then commit the build cursor."""
        b = self.build
        seg, size = b["journal"]
        if data:
            if size >= JOURNAL_SEGMENT_BYTES:
                seg, size = next_segment(seg), 0
            path = os.path.join(self.session.journal, seg)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.lseek(fd, size, os.SEEK_SET)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            size += len(data)
        b["journal"] = [seg, size]
        for agent, builder in self.builders.items():
            b["trackers"][agent] = builder.state()
        write_json(self.session.build, b)
        if data:
            with self.cond:
                self.cond.notify_all()

    # --- rules -----------------------------------------------------------------------------

    def sync_rules(self) -> None:
        key = index.compute_key(self.project)
        if key == self.rules_key:
            return
        self.rules_key, wanted = load_rules(self.project)
        for rid, worker in list(self.workers.items()):
            current = wanted.get(rid)
            if current is None or current[1].rule != worker.rule.rule:
                worker.stop.set()
                with self.cond:
                    self.cond.notify_all()
                worker.join()
                worker.tally.flush()
                if current is None:
                    worker.deactivate()
                del self.workers[rid]
        for rid, (sensor, rule) in wanted.items():
            if rid not in self.workers:
                w = Worker(self, sensor, rule)
                self.workers[rid] = w
                w.start()

    def clean_journal(self) -> None:
        if not self.workers:
            keep = self.build["journal"][0]
        else:
            keep = min(w.state["segment"] for w in self.workers.values())
        for name in journal_segments(self.session.journal):
            if name < keep:
                try:
                    os.unlink(os.path.join(self.session.journal, name))
                except FileNotFoundError:
                    pass

    # --- the main loop ---------------------------------------------------------------------

    def run(self) -> int:
        if not self.acquire():
            return 0  # another dispatcher holds this session
        reason = "idle"
        try:
            self.recover()
            self.sync_rules()
            events.log("dispatch.start", session=self.session.id, rules=len(self.workers))
            last_frame = last_sync = time.monotonic()
            ended_at = None
            while True:
                now = time.monotonic()
                if self.build_step():
                    last_frame = now
                if now - last_sync >= 1.0:
                    last_sync = now
                    self.sync_rules()
                    self.clean_journal()
                    for w in self.workers.values():
                        w.tally.flush()
                caught_up = self._spool_drained() and all(w.done() for w in self.workers.values())
                if self.build.get("ended"):
                    ended_at = ended_at or now
                    if caught_up:
                        reason = "session_end"
                        break
                    if all(w.idle for w in self.workers.values()) and now - ended_at > self.idle:
                        reason = "retrying_after_end"
                        break
                else:
                    ended_at = None
                idle = now - last_frame > self.idle and all(w.idle for w in self.workers.values())
                if idle and not lost.end_if_lost(self):  # True: a dead client's end to drain
                    reason = "idle"
                    break
                time.sleep(FAST_POLL if now - last_frame < 2.0 else SLOW_POLL)
        except Exception as exc:
            reason = "error"
            events.log("dispatch.error", session=self.session.id, error=type(exc).__name__)
        finally:
            self.shutdown(reason)
        return 0

    def _spool_drained(self) -> bool:
        seg, off = self.build["spool"]
        names = spool.segment_names(self.session.spool)
        if any(n > seg for n in names):
            return False
        try:
            return os.path.getsize(os.path.join(self.session.spool, seg)) <= off
        except FileNotFoundError:
            return True

    def shutdown(self, reason: str) -> None:
        for w in self.workers.values():
            w.stop.set()
        with self.cond:
            self.cond.notify_all()
        for w in self.workers.values():
            w.join()
            w.tally.flush()
        owes = any(w.owes for w in self.workers.values())
        ended = bool(getattr(self, "build", {}).get("ended"))
        if ended and not owes and reason == "session_end" and self._remove_if_quiet():
            self.session.mark_pending(False)
        else:
            self.session.mark_pending(owes)
        events.log("dispatch.exit", session=self.session.id, reason=reason, owes=owes)
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    def _remove_if_quiet(self) -> bool:
        """Leave the ledger and remove the session folder, unless a hook just wrote."""
        lock = os.open(os.path.join(self.session.dir, "spool.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not self._spool_drained():
                return False
            ledger = {"seq": self.build["seq"], "rules": dict(self.ledger.get("rules", {}))}
            # async rules keep their head in <id>.json; blocking ones in <id>.head,
            # which wins (their .json only tracks redelivery)
            for name in sorted(os.listdir(self.session.cursors), key=lambda n: n.endswith(".head")):
                rid, dot, ext = name.rpartition(".")
                st = read_json(os.path.join(self.session.cursors, name))
                if dot and ext in ("json", "head") and isinstance(st, dict):
                    sensor, _, rule = rid.partition(".")
                    if ext == "head" or st.get("rule_seq"):
                        ledger["rules"][f"{sensor}/{rule}"] = [st["rule_seq"], st["hash"]]
            self.session.write_ledger(ledger)
            self.session.remove()
            return True
        finally:
            os.close(lock)
