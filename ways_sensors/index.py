"""The compiled rule index: what the hook reads instead of YAML.

One index per project, at `<cache>/indexes/<tail>-<fnv1a32>.idx`, replaced atomically
(temporary file, then rename) by whoever finds it stale: the hook itself, or any
command that loads rules. Its key is the path, size and mtime of every sensor file and
folder in the layers and of config.yaml, plus the package version and the project; a
key that differs, a file that fails the checks below, or no file at all means rebuild.

Layout (UTF-8 text; the hook parses only the first lines, without a JSON library):

    ways-sensors-index 1 <total bytes>
    async <section> <section> ...        sections some enabled async rule selects ("-": none)
    blocking <section> ...               the same for blocking rules
    key <n>
    <n key lines>                        v/p/d/f/c lines, see compute_key()
    rules
    <one JSON document>                  the resolved rules, for the dispatcher

The top half is stdlib-only and import-free (`posix`, `sys`); `build()` imports the
YAML loader lazily, because it only runs when the key changed. The hook builds in a
forked child under a time budget (`_build_within`); a build that fails or overruns it
leaves `<index>.bad` beside the index, holding the key it failed for (the same
newline-joined lines as the index's key), and hooks do not retry that key for a while.
"""

import sys

from . import __version__, roots
from .roots import posix

MAGIC = "ways-sensors-index 1"


def fnv1a32(text: str) -> str:
    h = 0x811C9DC5
    for b in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "%08x" % h


def index_path(project: str) -> str:
    tail = "".join(c if c.isalnum() else "-" for c in project[-40:]).strip("-") or "root"
    return roots.cache_root() + "/indexes/" + tail + "-" + fnv1a32(project) + ".idx"


def _folder_lines(folder: str, out: list[str]) -> None:
    try:
        st = posix.stat(folder)
    except OSError:
        out.append("d - " + folder)
        return
    out.append("d %d %s" % (st.st_mtime_ns, folder))
    try:
        entries = sorted(posix.listdir(folder))
    except OSError:
        return
    for name in entries:
        if name.endswith(".yaml") or name.endswith(".yml"):
            path = folder + "/" + name
            try:
                st = posix.stat(path)
            except OSError:
                continue
            out.append("f %d %d %s" % (st.st_size, st.st_mtime_ns, path))


def compute_key(project: str) -> str:
    """The index key for `project`: one line per stat, newline-joined."""
    lines = ["v " + __version__, "p " + project]
    _folder_lines(roots.shipped_sensor_dir(), lines)
    _folder_lines(roots.user_sensor_dir(), lines)
    _folder_lines(roots.project_sensor_dir(project), lines)
    cfg = roots.config_file()
    try:
        st = posix.stat(cfg)
        lines.append("c %d %d %s" % (st.st_size, st.st_mtime_ns, cfg))
    except OSError:
        lines.append("c - " + cfg)
    return "\n".join(line.replace("\n", "\\n") for line in lines)


class Index:
    """The parsed top half of an index file."""

    __slots__ = ("async_sections", "blocking_sections", "key", "rules_text")

    def __init__(
        self,
        async_sections: frozenset[str],
        blocking_sections: frozenset[str],
        key: str,
        rules_text: str,
    ) -> None:
        self.async_sections = async_sections
        self.blocking_sections = blocking_sections
        self.key = key
        self.rules_text = rules_text


def parse(data: str) -> Index | None:
    """Parse an index file's text; None when it is missing a part or has the wrong size."""
    head, sep, rest = data.partition("\n")
    if not sep or not head.startswith(MAGIC + " "):
        return None
    try:
        if int(head[len(MAGIC) + 1 :]) != len(data.encode("utf-8", "surrogateescape")):
            return None
        lines = rest.split("\n", 3)
        a, b, k = lines[0], lines[1], lines[2]
        if not (a.startswith("async ") and b.startswith("blocking ") and k.startswith("key ")):
            return None
        n = int(k[4:])
        body = lines[3].split("\n", n)
        key = "\n".join(body[:n])
        tail = body[n] if len(body) > n else ""
        if not tail.startswith("rules\n"):
            return None
    except (ValueError, IndexError):
        return None
    asyn = frozenset(a[6:].split()) - {"-"}
    block = frozenset(b[9:].split()) - {"-"}
    return Index(asyn, block, key, tail[6:])


def read(project: str) -> Index | None:
    try:
        fd = posix.open(index_path(project), posix.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while True:
            chunk = posix.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        posix.close(fd)
    return parse(b"".join(chunks).decode("utf-8", "surrogateescape"))


def current(project: str, budget: float | None = None) -> Index:
    """The index for `project`, rebuilt first when its key changed or the file is bad;
    with a `budget` (the hook's), the rebuild is bounded by it (see _build_within)."""
    key = compute_key(project)
    idx = read(project)
    if idx is not None and idx.key == key:
        return idx
    settled = _settled.get(project)
    if settled is not None and settled.key == key:
        return settled  # this process already fell back for this key (the blocking path)
    if budget is None:
        return build(project, key)
    return _build_within(project, key, budget)


# --- the slow half: only when the key changed -----------------------------------------


def render(
    async_sections: set[str] | frozenset[str],
    blocking_sections: set[str] | frozenset[str],
    key: str,
    rules_json: str,
) -> str:
    body = (
        "async "
        + (" ".join(sorted(async_sections)) or "-")
        + "\n"
        + "blocking "
        + (" ".join(sorted(blocking_sections)) or "-")
        + "\n"
        + "key %d\n" % (key.count("\n") + 1)
        + key
        + "\n"
        + "rules\n"
        + rules_json
    )
    # the size line counts itself: try a width, widen if the number grows a digit
    for width in range(1, 12):
        head = MAGIC + " "
        total = len((head + "\n" + body).encode("utf-8", "surrogateescape")) + width
        if len(str(total)) == width:
            return head + str(total) + "\n" + body
    raise AssertionError("unreachable")


def build(project: str, key: str | None = None) -> Index:
    """Load the layers, compile the index for `project`, write it atomically, return it."""
    if "yaml" not in sys.modules and sys.flags.no_site:
        import site  # the hook runs with -S; the slow path needs site-packages

        site.main()
    import json

    import msgspec

    from .layers import load

    key = key or compute_key(project)
    cat = load(project)
    asyn: set[str] = set()
    block: set[str] = set()
    rules = []
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            r = rule.rule
            enabled = sensor.spec.enabled and r.enabled
            if enabled:
                (block if r.mode == "blocking" else asyn).update(r.sections)
            rules.append(
                {
                    "sensor": sensor.name,
                    "rule": rule.name,
                    "enabled": enabled,
                    "layer": rule.layer,
                    "file": rule.path,
                    "spec": msgspec.to_builtins(r),
                }
            )
    text = render(asyn, block, key, json.dumps({"project": project, "rules": rules}))
    path = index_path(project)
    try:
        roots.makedirs_private(path.rpartition("/")[0])
        tmp = "%s.%d.tmp" % (path, posix.getpid())
        fd = posix.open(tmp, posix.O_WRONLY | posix.O_CREAT | posix.O_TRUNC, 0o600)
        try:
            posix.write(fd, text.encode("utf-8", "surrogateescape"))
        finally:
            posix.close(fd)
        posix.rename(tmp, path)
    except OSError:
        pass  # a read-only cache only costs speed: the next run rebuilds again
    parsed = parse(text)
    assert parsed is not None
    return parsed


# --- the hook's rebuild, under a time budget -----------------------------------------

HOOK_BUDGET = 3.0  # seconds a hook waits for a rebuild; a normal one takes about 0.2 s
RETRY_AFTER = 60.0  # seconds hooks skip rebuilding a key whose rebuild failed
_settled: dict[str, Index] = {}  # project -> the fallback this process settled for


class _Everything(frozenset):
    """The sections of an index the hook could not build: all of them. The event is
    spooled, and the dispatcher, which builds without a budget, decides what it feeds."""

    def __contains__(self, item: object) -> bool:
        return True


def _build_within(project: str, key: str, budget: float) -> Index:
    """Build in a forked child and wait at most `budget` seconds, killing it then.

    The loader is bounded (layers.read_yaml), so this is the backstop for what it does
    not foresee: without it a sensor file that makes the build hang hangs every hook,
    since the index is never written. A failed or late build writes `<index>.bad`
    (holding the key) and every hook of that key skips rebuilding for RETRY_AFTER
    seconds; meanwhile hooks spool their events (see _Everything), blocking rules are
    skipped (logged), and the dispatcher's own rebuild writes the index when it can.
    The parent never imports the loader: the hook stays lean even on a key change.
    """
    from . import events

    bad = index_path(project) + ".bad"
    if _marked_bad(bad, key):
        events.log("index.build_skipped", retry_after_s=RETRY_AFTER)
        return _fallback(project, key)
    pid = posix.fork()
    if pid == 0:  # the child: build and write the index, then leave without cleanup
        code = 1
        try:
            build(project, key)
            code = 0
        except BaseException as exc:
            events.log("index.build_error", error=type(exc).__name__)
        posix._exit(code)
    status = _wait(pid, budget)
    if status == 0:
        idx = read(project)
        if idx is not None and idx.key == key:
            return idx
        return build(project, key)  # an unwritable cache; the build just took < budget
    if status is None:
        _remove("%s.%d.tmp" % (index_path(project), pid))
    _mark_bad(bad, key)
    kind = "index.build_over_budget" if status is None else "index.build_failed"
    events.log(kind, budget_s=budget, blocking_rules="skipped")
    return _fallback(project, key)


def _wait(pid: int, budget: float) -> int | None:
    """The child's exit code, or None when it was killed at the budget."""
    import time

    deadline = time.monotonic() + budget
    delay = 0.001
    while True:
        try:
            done, status = posix.waitpid(pid, posix.WNOHANG)
        except ChildProcessError:
            return 1
        if done:
            return posix.waitstatus_to_exitcode(status)
        left = deadline - time.monotonic()
        if left <= 0:
            posix.kill(pid, 9)
            posix.waitpid(pid, 0)
            return None
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.02)


def _fallback(project: str, key: str) -> Index:
    idx = Index(_Everything(), frozenset(), key, '{"rules": []}')
    _settled[project] = idx
    return idx


def _marked_bad(bad: str, key: str) -> bool:
    import time

    try:
        fd = posix.open(bad, posix.O_RDONLY)
    except OSError:
        return False
    try:
        age = time.time() - posix.fstat(fd).st_mtime
        text = posix.read(fd, len(key.encode("utf-8", "surrogateescape")) + 2)
    except OSError:
        return False
    finally:
        posix.close(fd)
    return 0 <= age < RETRY_AFTER and text.decode("utf-8", "surrogateescape") == key


def _mark_bad(bad: str, key: str) -> None:
    tmp = "%s.%d.tmp" % (bad, posix.getpid())
    try:
        roots.makedirs_private(bad.rpartition("/")[0])
        fd = posix.open(tmp, posix.O_WRONLY | posix.O_CREAT | posix.O_TRUNC, 0o600)
        try:
            posix.write(fd, key.encode("utf-8", "surrogateescape"))
        finally:
            posix.close(fd)
        posix.rename(tmp, bad)
    except OSError:
        _remove(tmp)


def _remove(path: str) -> None:
    try:
        posix.unlink(path)
    except OSError:
        pass


def enabled_rules(idx: Index, mode: str | None = None) -> dict:
    """{rule id: (sensor, LoadedRule)} of the index's enabled rules (optionally one mode)."""
    import json

    from .conditions import compile_where
    from .layers import LoadedRule
    from .layout import rule_key
    from .spec import decode_rule

    out = {}
    for item in json.loads(idx.rules_text).get("rules", []):
        if not item.get("enabled"):
            continue
        rule = decode_rule(item["spec"])
        if mode and rule.mode != mode:
            continue
        loaded = LoadedRule(
            item["rule"], rule, compile_where(rule.where, rule.match), item["layer"], item["file"]
        )
        out[rule_key(item["sensor"], item["rule"])] = (item["sensor"], loaded)
    return out
