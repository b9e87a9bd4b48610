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
YAML loader lazily, because it only runs when the key changed.
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

    def __init__(self, async_sections, blocking_sections, key, rules_text):
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


def current(project: str) -> Index:
    """The index for `project`, rebuilt first when its key changed or the file is bad."""
    key = compute_key(project)
    idx = read(project)
    if idx is not None and idx.key == key:
        return idx
    return build(project, key)


# --- the slow half: only when the key changed -----------------------------------------


def render(async_sections, blocking_sections, key: str, rules_json: str) -> str:
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


def enabled_rules(idx: Index, mode: str | None = None) -> dict:
    """{rule id: (sensor, LoadedRule)} of the index's enabled rules (optionally one mode)."""
    import json

    from .conditions import compile_where
    from .layers import LoadedRule
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
        out[item["sensor"] + "." + item["rule"]] = (item["sensor"], loaded)
    return out
