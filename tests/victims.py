"""The victim harness of the attack tests (test_state_root, test_cache_root): a throwaway
install whose commands run as an ordinary user, and bait the attacker aims its links at.

CI runs as root: the victim is then an ordinary user made with `useradd` and every command
runs under `setpriv`; what the attacker plants is owned by `nobody`. Run as an ordinary
user, the tests' victim is the user itself.
"""

from __future__ import annotations

import json
import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ways_sensors.commands.reconcile import hook_command

from .conftest import LAUNCHER, Install

VICTIM = "ways-sensors-victim"
ATTACKER = 65534  # nobody: owns what the attacker plants (when the test runs as root)
SECRET = "ghp_" + "Zq8Lk2Rt5Vx9Pw3Nm6Hj1Gf4Ds7Ba0Ce" + "Yu2T"
PROMPT = f"deploy with token {SECRET} to the quokka cluster"
BAIT = b"the victim's own file: nothing of ways belongs here\n"


@pytest.fixture(scope="module")
def victim_ids() -> tuple[int, int] | None:
    """(uid, gid) of the ordinary user the commands run as; None: we are one already."""
    if os.geteuid() != 0:
        return None
    try:
        pw = pwd.getpwnam(VICTIM)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", VICTIM],
            capture_output=True,
        )  # a concurrent run may have made it first: look it up again either way
        pw = pwd.getpwnam(VICTIM)
    return pw.pw_uid, pw.pw_gid


def as_user(uid: int, gid: int) -> list[str]:
    """setpriv's argv prefix for running as the victim. When this interpreter lives
    where the victim may not look (CI's is under /root, 0700), the victim keeps one
    capability, DAC_READ_SEARCH (reading and searching any folder); writing, owning
    and every check under test stay an ordinary user's."""
    prefix = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    code = "import os; print(os.__file__)"
    probe = subprocess.run(
        [*prefix, "--", sys.executable, "-c", code], capture_output=True, text=True
    )
    if probe.stdout.strip() != os.__file__:  # not run, or fell back to another stdlib
        prefix += ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    return [*prefix, "--"]


class Victim:
    """A throwaway install whose commands run as the victim."""

    def __init__(self, base: Path, ids: tuple[int, int] | None) -> None:
        self.base = base
        self.ids = ids
        self.install = Install(base)
        self.root = self.install.state_root
        self.bait_file = base / "bait" / "file"
        self.bait_file2 = base / "bait" / "file2"
        self.bait_dir = base / "bait" / "dir"
        self.out = base / "out"
        self.links: dict[Path, str] = {}
        self.prefix: list[str] = []
        # the wired command (reconcile's) minus its `[ -x python ]` guard, which a
        # capability does not pass (access(2) drops them for an ordinary user)
        self.hook_argv = ["sh", "-c", hook_command(sys.executable, str(LAUNCHER))]
        if ids:
            self.prefix = as_user(*ids)
            if "--ambient-caps=+dac_read_search" in self.prefix:
                self.hook_argv = [sys.executable, "-S", str(LAUNCHER), "hook", "sensors"]
        self.bait_dir.mkdir(parents=True)
        self.out.mkdir()
        for f in (self.bait_file, self.bait_file2):
            f.write_bytes(BAIT)
            f.chmod(0o600)
        self.sensors()

    def sensors(self) -> None:
        i, out = self.install, self.out
        i.sensor(
            "files",
            f"rules:\n"
            f"  everything:\n"
            f"    sections: [user_prompt, tool_call, session_start, session_end]\n"
            f"    chain: true\n"
            f"    dispatch: {{file: {{path: '{out}/everything.jsonl'}}}}\n",
        )
        i.sensor(
            "blk",
            f"rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
            f"    chain: true\n"
            f"    dispatch: {{file: {{path: '{out}/blocking.jsonl'}}}}\n",
        )
        i.sensor(
            "dl",  # refused for good: parked as a dead letter (session c-dl only)
            "rules:\n  r:\n    sections: [user_prompt]\n    delivery: at_least_once\n"
            "    where: {session_id: c-dl}\n"
            "    dispatch: {command: {argv: [/nonexistent/consumer]}}\n",
        )
        i.sensor(
            "owed",  # refused for now: retried, so its dispatcher exits owing (c-pending)
            "rules:\n  r:\n    sections: [user_prompt]\n    delivery: at_least_once\n"
            "    where: {session_id: c-pending}\n"
            "    dispatch: {command: {argv: ['false']}}\n",
        )

    # --- as the victim ------------------------------------------------------------------

    def own(self) -> None:
        """Everything made so far belongs to the victim (links: to the attacker)."""
        if not self.ids:
            return
        uid, gid = self.ids
        for p in [self.base, *self.base.rglob("*")]:
            try:
                if p.is_symlink():
                    os.lchown(p, ATTACKER, ATTACKER)
                elif p.stat().st_uid == 0:
                    os.chown(p, uid, gid)
            except FileNotFoundError:
                continue  # a live dispatcher removed it meanwhile (a retired key, a batch)

    def run(self, argv: list[str], input: bytes = b"", timeout: float = 60):
        return subprocess.run(
            self.prefix + argv,
            env=self.install.env,
            input=input,
            capture_output=True,
            timeout=timeout,
            cwd=self.install.project,
        )

    def ways(self, *args: str):
        return self.run([str(Path(sys.executable).parent / "ways"), *args])

    def hook(self, sid: str, event: str, **fields: object) -> None:
        p = {"session_id": sid, "hook_event_name": event, "cwd": str(self.install.project)}
        p.update(fields)
        r = self.run(self.hook_argv, json.dumps(p).encode())
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b""), (sid, event, r)

    def session(self, sid: str, end: bool = True) -> None:
        self.hook(sid, "SessionStart", source="startup", model="m")
        self.hook(sid, "UserPromptSubmit", prompt=PROMPT)
        self.hook(
            sid,
            "PreToolUse",
            tool_name="Bash",
            tool_use_id="toolu_1",
            tool_input={"command": "ls"},
        )
        if end:
            self.hook(sid, "SessionEnd", reason="other")

    # --- the attacker -------------------------------------------------------------------

    def plant(self, rel: str, target: Path) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
        self.links[path] = str(target)
        return path

    def folder(self, rel: str, mode: int = 0o777) -> Path:
        """A folder the victim made with a careless umask."""
        path = self.root / rel
        path.mkdir(parents=True, exist_ok=True)
        for p in [path, *path.parents]:
            if p == self.root.parent:
                break
            p.chmod(mode)
        return path

    # --- what must hold ------------------------------------------------------------------

    def events(self) -> list[dict]:
        path = self.root / "events.log"
        if path.is_symlink() or not path.exists():
            return []
        return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]

    def refused(self) -> dict[str, str]:
        return {e["path"]: e["reason"] for e in self.events() if e["kind"] == "state.refused"}

    def assert_nothing_through_a_link(self) -> None:
        """The bait is as it was; each link is still there (or went with the session
        folder that held it, removed without being followed)."""
        assert self.bait_file.read_bytes() == BAIT
        assert self.bait_file2.read_bytes() == BAIT
        assert stat.S_IMODE(self.bait_file.stat().st_mode) == 0o600
        assert list(self.bait_dir.iterdir()) == []
        for path, target in self.links.items():
            if path.parent.name == "pending":
                continue  # replaced by a fresh marker at a dispatcher exit (bait untouched)
            if os.path.lexists(path):
                assert path.is_symlink() and os.readlink(path) == target, path

    def assert_private(self) -> None:
        """The root and every folder and file under it: ours and 0700 / 0600."""
        me = self.ids[0] if self.ids else os.geteuid()
        st = os.lstat(self.root)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
        assert st.st_uid == me
        for folder, dirs, files in os.walk(self.root):  # links are not followed
            for name in dirs + files:
                p = Path(folder) / name
                st = os.lstat(p)
                if stat.S_ISDIR(st.st_mode):
                    assert stat.S_IMODE(st.st_mode) == 0o700, p
                elif stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                    assert stat.S_IMODE(st.st_mode) == 0o600, p

    def assert_one_line(self, r, code: int = 5) -> str:
        err = r.stderr.decode()
        assert r.returncode == code and len(err.splitlines()) == 1, (r.returncode, err)
        assert err.startswith("ways: ") and "Traceback" not in err
        return err
