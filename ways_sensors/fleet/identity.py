"""Who made a record: the user, this install of ways, this machine.

Every record's envelope carries

    "identity": {"user": {"id", "email"?, "name"?, "team"?, "groups"?},
                 "install_id": "<32 hex>", "host": {"id"?, "name"}}

* `user` comes from `ways.identity` in config.yaml (the managed layer's, typically:
  config/managed.py, where the administrator can lock it):

      ways:
        identity:
          email: ${CORP_EMAIL}          # a value may be one ${ENV_NAME}, read at resolve time
          team: platform
          command: [/usr/local/bin/corp-identity]   # prints a JSON object of the same keys

  The command runs without a shell for at most COMMAND_TIMEOUT seconds; its stdout (at
  most COMMAND_MAX bytes) is a JSON object with any of id, email, name, team, groups.
  Values written in the config win over the command's, the command's over the
  default: `id` is the login name of the account the dispatcher runs as. A command
  that fails, times out or prints no object is logged (`identity.command_failed`, the
  reason only) and its values are left out; the record still carries the rest.
* `install_id`: 32 random hex digits made once per state root (`<state>/install_id`,
  0600), so a central store tells installs of one user apart and sees a reinstall.
* `host.id` is /etc/machine-id (OpenTelemetry's `host.id` on Linux; absent where the
  file is missing), `host.name` the host name.

The dispatcher resolves once per process (current()) and keeps the result in
`<state>/identity.json` (0600); the blocking path, which runs inside the agent's hook,
reads that file (cached()) and never runs the command: before any dispatcher has run it
carries the default user.
"""

from __future__ import annotations

import os

from .. import jsoncore, roots

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing, json and socket stay off a blocking hook's path (cached())
    from typing import Any

COMMAND_TIMEOUT = 5.0
COMMAND_MAX = 64 * 1024
FIELDS = ("id", "email", "name", "team", "groups")
MACHINE_ID = ("/etc/machine-id", "/var/lib/dbus/machine-id")

_current: dict[str, Any] | None = None


def _login() -> str:
    """getpass.getuser()'s answer without getpass (contextlib and warnings on a blocking
    hook's path): the login variables, else the account's name, else the uid."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        value = os.environ.get(name)
        if value:
            return value
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):  # no name for this uid (a container without /etc/passwd)
        return str(os.getuid())


def machine_id() -> str | None:
    for path in MACHINE_ID:
        try:
            with open(path, encoding="ascii", errors="replace") as f:
                value = f.read(256).strip()
        except OSError:
            continue
        if value:
            return value
    return None


def install_id(state: str | None = None) -> str:
    """This state root's install id, made on first use (O_EXCL: two first users agree)."""
    path = os.path.join(state or roots.state_root(), "install_id")
    for _ in range(2):
        try:
            with open(path, encoding="ascii") as f:
                value = f.read(64).strip()
            if len(value) == 32:
                return value
        except FileNotFoundError:
            pass
        roots.makedirs_private(os.path.dirname(path))
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue  # another process made it: read theirs
        with os.fdopen(fd, "w") as f:
            f.write(os.urandom(16).hex() + "\n")
    with open(path, encoding="ascii") as f:
        return f.read(64).strip()


def _value(v: Any) -> Any:
    """A config value: `${NAME}` alone is the environment variable's value (None when
    unset); a list of groups keeps its strings."""
    if isinstance(v, str) and v.startswith("${") and v.endswith("}"):
        return os.environ.get(v[2:-1]) or None
    if isinstance(v, list):
        return [str(x) for x in v if isinstance(x, (str, int))] or None
    if isinstance(v, (str, int)):
        return str(v)
    return None


def _from_command(argv: Any) -> dict[str, Any]:
    from ..state.events import log

    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        log("identity.command_failed", reason="not a list of strings")
        return {}
    import subprocess

    try:
        r = subprocess.run(
            argv, capture_output=True, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        log("identity.command_failed", reason="timeout")
        return {}
    except OSError as exc:
        log("identity.command_failed", reason=exc.strerror or type(exc).__name__)
        return {}
    if r.returncode != 0:
        log("identity.command_failed", reason=f"exit {r.returncode}")
        return {}
    try:
        got = jsoncore.loads(r.stdout[:COMMAND_MAX]) if len(r.stdout) <= COMMAND_MAX else None
    except ValueError:
        got = None
    if not isinstance(got, dict):
        log("identity.command_failed", reason="no JSON object on stdout")
        return {}
    return {k: got[k] for k in FIELDS if k in got}


def resolve(config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The identity from `config` (default: the effective config.yaml), running its
    command."""
    if config is None:
        from ..config.userconfig import data

        config = data()
    ways = config.get("ways")
    spec = ways.get("identity") if isinstance(ways, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    user: dict[str, Any] = {"id": _login()}
    if "command" in spec:
        user.update({k: v for k, v in _from_command(spec["command"]).items()})
    user.update({k: spec[k] for k in FIELDS if k in spec})
    user = {k: v for k, v in ((k, _value(user.get(k))) for k in FIELDS) if v}
    return {"user": user, "install_id": install_id(), "host": _host()}


def _host() -> dict[str, str]:
    host = {"name": os.uname().nodename or "localhost"}  # socket.gethostname()'s answer
    mid = machine_id()
    if mid:
        host = {"id": mid, **host}
    return host


def current() -> dict[str, Any]:
    """The identity this process stamps, resolved once, and kept for the blocking path."""
    global _current
    if _current is None:
        _current = resolve()
        from ..state.files import replace_atomically

        path = os.path.join(roots.state_root(), "identity.json")
        try:
            replace_atomically(path, jsoncore.dumps(_current, sort_keys=True) + "\n")
        except OSError:
            pass  # the blocking path then carries the default user: nothing else is lost
    return _current


def cached() -> dict[str, Any]:
    """What the last dispatcher resolved (cheap: one small file), else the default."""
    try:
        with open(os.path.join(roots.state_root(), "identity.json"), encoding="utf-8") as f:
            got = jsoncore.loads(f.read(1 << 16))
        if isinstance(got, dict) and isinstance(got.get("user"), dict):
            return got
    except (OSError, ValueError):
        pass
    return {"user": {"id": _login()}, "install_id": install_id(), "host": _host()}
