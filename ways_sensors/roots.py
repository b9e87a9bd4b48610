"""Where ways keeps its files: the config, cache and state roots, and the sensor layers.

XDG on Linux and macOS alike; platformdirs only on Windows, where XDG has no meaning.
This module is on the hook's fast path, so it imports nothing but `posix` and `sys`
(both already loaded when Python starts with -S): no `os`, no `pathlib`.

| root    | default                                   | holds                                   |
|---------|-------------------------------------------|-----------------------------------------|
| config  | ${XDG_CONFIG_HOME:-~/.config}/agent-ways  | config.yaml, sensors/<name>.yaml (user) |
| cache   | ${XDG_CACHE_HOME:-~/.cache}/agent-ways    | indexes/ (compiled rule index),         |
|         |                                           | settings/ (kept listings: listcache.py),|
|         |                                           | regex/ (compiled patterns: regex.py)    |
| state   | ${XDG_STATE_HOME:-~/.local/state}/agent-ways | see layout.py: its every path           |

The project layer is `<project>/.claude/ways-sensors/`, where `<project>` is the
agent's project variable (its face's PROJECT_ENV: `$CLAUDE_PROJECT_DIR` for Claude
Code), else the working directory (the payload's `cwd` follows the agent's `cd`, so it
never picks sensors).
"""

import sys

if sys.platform == "win32":  # pragma: no cover - the hook path is POSIX; Windows uses os
    import os as posix
else:
    import posix as posix  # re-exported: the fast path imports `posix` from here

APP = "agent-ways"
SHIPPED_DIRNAME = "_shipped"
_SID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")

TYPE_CHECKING = False  # type checkers read this as True; `typing` stays off the fast path
if TYPE_CHECKING:
    from typing import TypeGuard


def site_packages() -> None:
    """Make installed packages importable, once, in a process started with -S (the
    hook, whose fast path never needs them). The hook's slower paths call it right
    before their first third-party import (msgspec, yaml, re2): a blocking rule that
    needs none of them never pays for site's processing (bench/RESULTS.md, Blocking
    path cost)."""
    global _site_done
    if sys.flags.no_site and not _site_done:
        import site

        site.main()
    _site_done = True


_site_done = False


def valid_session_id(sid: "str | None") -> "TypeGuard[str]":
    """Session ids become folder names under the state root (layout.py), so only
    [A-Za-z0-9_-], 1 to 128 characters. Here rather than in layout.py, which re-exports
    it: the hook checks an id before it knows it needs any path of the layout."""
    return sid is not None and 0 < len(sid) <= 128 and all(c in _SID_CHARS for c in sid)


def env(name: str) -> str | None:
    """An environment variable as str, or None when unset or empty."""
    environ = posix.environ
    if environ and isinstance(next(iter(environ)), bytes):
        value = environ.get(name.encode())
        if not value:
            return None
        return value.decode("utf-8", "surrogateescape")
    value = environ.get(name)  # type: ignore[call-overload]  # pragma: no cover - Windows: str keys
    return value or None


def home() -> str:
    h = env("HOME")
    if h:
        return h.rstrip("/") or "/"
    import pwd  # rare: HOME unset

    return pwd.getpwuid(posix.getuid()).pw_dir


def _xdg(var: str, fallback: str) -> str:
    base = env(var)
    if not base or not base.startswith("/"):  # XDG: relative values are ignored
        base = home() + "/" + fallback
    return base.rstrip("/") + "/" + APP


def config_root() -> str:
    if sys.platform == "win32":  # pragma: no cover
        import platformdirs

        return platformdirs.user_config_dir(APP, appauthor=False)
    return _xdg("XDG_CONFIG_HOME", ".config")


def cache_root() -> str:
    if sys.platform == "win32":  # pragma: no cover
        import platformdirs

        return platformdirs.user_cache_dir(APP, appauthor=False)
    return _xdg("XDG_CACHE_HOME", ".cache")


def state_root() -> str:
    if sys.platform == "win32":  # pragma: no cover
        import platformdirs

        return platformdirs.user_state_dir(APP, appauthor=False)
    return _xdg("XDG_STATE_HOME", ".local/state")


def config_file() -> str:
    return config_root() + "/config.yaml"


def user_sensor_dir() -> str:
    return config_root() + "/sensors"


def managed_roots() -> "list[str]":
    """The managed layer's folders (`<dir>/agent-ways`), applied in this order: the
    folders of $XDG_CONFIG_DIRS, least important (last) first, and /etc/xdg always, as
    the least important of all. The environment can add a folder, never drop the
    administrator's: a lock in /etc/xdg holds against every file applied after it."""
    dirs = [d.rstrip("/") for d in (env("XDG_CONFIG_DIRS") or "").split(":") if d[:1] == "/"]
    if "/etc/xdg" not in dirs:
        dirs.append("/etc/xdg")
    return [d + "/" + APP for d in reversed(dirs)]


def package_dir() -> str:
    return __file__.rpartition("/")[0] or "."


def shipped_sensor_dir() -> str:
    """Shipped sensors: inside the installed package, or the repository's `sensors/`.

    A wheel carries them as `ways_sensors/_shipped`; an editable install runs from the
    source tree, where they sit beside the package.
    """
    pkg = package_dir()
    inside = pkg + "/" + SHIPPED_DIRNAME
    try:
        posix.stat(inside)
        return inside
    except OSError:
        return pkg.rpartition("/")[0] + "/sensors"


def project_dir(var: str) -> str:
    """The project whose sensors apply: the variable `var` (an agent's PROJECT_ENV; the
    hook passes its agent's, index.project_dir the default agent's), else the working
    directory."""
    p = env(var)
    if not p:
        try:
            p = posix.getcwd()
        except OSError:
            p = "/"
    return p.rstrip("/") or "/"


def project_sensor_dir(project: str) -> str:
    return project.rstrip("/") + "/.claude/ways-sensors"


def makedirs_private(path: str) -> None:
    """Create `path` and missing parents 0700; an existing folder is left as it is."""
    try:
        posix.stat(path)
        return
    except OSError:
        pass
    parent = path.rpartition("/")[0]
    if parent and parent != path:
        makedirs_private(parent)
    try:
        posix.mkdir(path, 0o700)
    except FileExistsError:
        pass


_NOFOLLOW = getattr(posix, "O_NOFOLLOW", 0) | getattr(posix, "O_CLOEXEC", 0) | posix.O_NONBLOCK
_FMT, _DIR, _REG = 0o170000, 0o040000, 0o100000


def _ours(st: "posix.stat_result", kind: int) -> bool:
    """A `kind` (folder or regular file) of ours that nobody else can write (a file:
    with one link, so it is no alias of a file elsewhere)."""
    return (
        st.st_mode & _FMT == kind
        and st.st_uid == posix.geteuid()
        and not st.st_mode & 0o022
        and (kind == _DIR or st.st_nlink == 1)
    )


def trusted_fd(path: str) -> int | None:
    """A read-only descriptor on the cache file `path` when it is a regular file of
    ours with one link that nobody else can write, opened without following links;
    else None. The cache is treated like the state root (secure.py): a file another
    user planted, or one anybody else could change, is never trusted, whatever key it
    holds; the slow path rebuilds it, taking the folders back (0700) and refusing,
    logged, what is not ours. Only the file is checked here, through its descriptor
    (one fstat: the hook runs this every event): a folder another user can write lets
    them remove or replace our file, never make one of theirs pass for ours."""
    try:
        fd = posix.open(path, posix.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    try:
        if _ours(posix.fstat(fd), _REG):
            return fd
    except OSError:
        pass
    posix.close(fd)
    return None


def sensor_files(folder: str) -> list[str]:
    """The sensor files of a layer's folder, in the order the layer reads them."""
    try:
        names = sorted(posix.listdir(folder))
    except OSError:
        return []
    return [folder + "/" + n for n in names if n.endswith((".yaml", ".yml"))]
