"""The ground-truth hook of the Gemini CLI and Codex end-to-end sessions: it records what
the agent sent, and how long its session file was at that moment.

    python agents_recorder.py LOG [EVENT]

Appends one line to LOG: {"payload": <stdin, parsed>, "size": <bytes in the payload's
transcript_path, or -1>, "event": EVENT or null}. Prints nothing, exits 0. The size
lets a test replay the session later with the session file as it stood at each hook.
"""

import json
import os
import sys


def main() -> None:
    raw = sys.stdin.buffer.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = raw.decode("utf-8", "replace")
    size = -1
    path = payload.get("transcript_path") if isinstance(payload, dict) else None
    if isinstance(path, str) and path:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = -1
    event = sys.argv[2] if len(sys.argv) > 2 else None
    line = json.dumps({"payload": payload, "size": size, "event": event}) + "\n"
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


main()
