"""Building the compiled rule index (index.py holds the reading half: the hook's).

Run when an index's key changed: by the hook in a forked child under a time budget
(`_build_within`), by the dispatcher and the commands without one. rules.enabled turns
an index back into rules, for the dispatcher and the blocking path.

The index: one per project, at `<cache>/indexes/<tail>-<fnv1a32>.idx`,
replaced atomically (a temporary file made O_EXCL beside it, then renamed:
secure.replace_private) by whoever finds it stale: the hook itself, or any command that
loads rules. The cache is treated like the state root (secure.py): the root and
`indexes/` are made 0700 and must be real folders of ours (a looser one of ours is
tightened, another user's is refused and logged, when an index is written), and an
index is trusted only when it is a regular file of ours with one link, opened without
following links (roots.trusted_fd): its key names only what `stat` shows, so a file
anybody else could have written is never read as rules. The key is the path, size and
mtime of every sensor file and folder in the layers and of config.yaml, plus the
package version and the project; a key that differs, a file that fails the checks
below or roots.trusted_fd's, or no file at all means rebuild.

Layout (UTF-8 text; the hook parses only the first lines, without a JSON library):

    ways-sensors-index 2 <total bytes>
    async <section> <section> ...        sections some enabled async rule selects ("-": none)
    blocking <section> ...               the same for blocking rules
    key <n>
    <n key lines>                        v/p/d/f/c lines, see compute_key()
    filters <m>
    <m lines>                            one per enabled blocking rule (prefilter.py)
    rules
    <one JSON document>                  the resolved rules, for the dispatcher
                                         ({"project", "rules": [{sensor, rule, enabled,
                                         layer, file, spec, plain?}]}: `plain`, every field
                                         of an enabled blocking rule, for the hook)

index.py reads it (`fresh`); this module, imported only when the key changed
(current: read, else rebuild), writes it (`render`): it loads the YAML layers; the hook
builds in a forked child under a time budget; a build that fails or overruns it leaves
`<index>.bad` beside the index, holding the key it failed for (the same newline-joined
lines as the index's key), and hooks do not retry that key for a while.
"""

from .. import roots
from ..index import MAGIC, Index, compute_key, fresh, index_path, parse, read
from ..roots import posix


def current(project: str, budget: float | None = None) -> Index:
    """The index for `project`, rebuilt first when its key changed or the file is bad;
    with a `budget` (the hook's), the rebuild is bounded by it (see _build_within)."""
    idx, key = fresh(project)
    return idx if idx is not None else rebuild(project, key, budget)


def rebuild(project: str, key: str, budget: float | None) -> Index:
    """The index for `project` under `key`, built now (within `budget` seconds, for the
    hook), or the fallback this process already settled for that key."""
    settled = _settled.get(project)
    if settled is not None and settled.key == key:
        return settled  # this process already fell back for this key (the blocking path)
    if budget is None:
        return build(project, key)
    return _build_within(project, key, budget)


def render(
    async_sections: set[str] | frozenset[str],
    blocking_sections: set[str] | frozenset[str],
    key: str,
    rules_json: str,
    filters: list[str] | None = None,
) -> str:
    filters = filters or []
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
        + "filters %d\n" % len(filters)
        + "".join(line + "\n" for line in filters)
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
    roots.site_packages()  # the hook runs with -S; the slow path needs yaml and msgspec
    import json

    import msgspec

    from .. import prefilter
    from . import refusals
    from .layers import load

    key = key or compute_key(project)
    cat = load(project)
    refusals.note(cat)  # a refused file is logged once per change of it, never silent
    asyn: set[str] = set()
    block: set[str] = set()
    filters = []
    rules = []
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            r = rule.spec
            enabled = sensor.spec.enabled and r.enabled
            if enabled:
                (block if r.mode == "blocking" else asyn).update(r.sections)
            if enabled and r.mode == "blocking":
                filters.append(prefilter.line_for(r.sections, r.where, r.match))
            item = {
                "sensor": sensor.name,
                "rule": rule.name,
                "enabled": enabled,
                "layer": rule.layer,
                "file": rule.path,
                "spec": msgspec.to_builtins(r),
            }
            if enabled and r.mode == "blocking":
                item["plain"] = plain(r)  # the hook reads it without spec.py (rules.blocking)
            rules.append(item)
    text = render(asyn, block, key, json.dumps({"project": project, "rules": rules}), filters)
    try:
        _write(index_path(project), text)
    except OSError:
        pass  # a read-only or refused cache only costs speed: the next run rebuilds again
    parsed = parse(text)
    assert parsed is not None
    return parsed


def plain(value: object) -> object:
    """A validated spec struct as JSON with every field, its defaults included (msgspec's
    to_builtins leaves them out), so a reader needs no struct to know them."""
    import msgspec

    if isinstance(value, msgspec.Struct):
        return {f: plain(getattr(value, f)) for f in value.__struct_fields__}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


# --- the hook's rebuild, under a time budget -----------------------------------------

RETRY_AFTER = 60.0  # seconds hooks skip rebuilding a key whose rebuild failed
_settled: dict[str, Index] = {}  # project -> the fallback this process settled for


class _Everything(frozenset[str]):
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
    from ..state import events

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
        _remove_temporaries(index_path(project))
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

    fd = roots.trusted_fd(bad)
    if fd is None:
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
    try:
        _write(bad, key)
    except OSError:
        pass


def _write(path: str, text: str) -> None:
    """Replace the cache file `path` as a state file is replaced (secure.py): its
    folders checked up from the cache root (0700, ours, no links), a temporary file
    made O_EXCL and renamed over a target that must be absent or a file of ours. A
    planted link at any name is refused and logged, never written through."""
    from ..state import secure

    root = roots.cache_root()
    secure.ensure_private_dir(path.rpartition("/")[0], root)
    secure.replace_private(path, text.encode("utf-8", "surrogateescape"), root)


def _remove_temporaries(path: str) -> None:
    """The temporary files a killed build left beside `path` (secure.replace_private's
    `.<name>.<random>.tmp`); a concurrent build whose file goes only fails its rename."""
    folder, _, name = path.rpartition("/")
    try:
        names = posix.listdir(folder)
    except OSError:
        return
    for n in names:
        if n.startswith("." + name + ".") and n.endswith(".tmp"):
            try:
                posix.unlink(folder + "/" + n)
            except OSError:
                pass
