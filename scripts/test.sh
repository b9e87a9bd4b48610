#!/bin/sh
# The whole test suite: set everything up, lint and format-check, then every test.
. "$(dirname "$0")/setup.sh"
.venv/bin/ruff check ways_sensors tests bench scripts
.venv/bin/ruff format --check ways_sensors tests bench scripts
.venv/bin/python -m ways_sensors.schemas --check
.venv/bin/mypy
# the sensors tab's terminal test (tests/tui/test_tmux.py) draws it under tmux
if ! command -v tmux >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing tmux with apt-get (the sensors tab's terminal test needs it)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi
  $SUDO apt-get install -y -q tmux >/dev/null 2>&1 ||
    { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q tmux >/dev/null; } ||
    echo "test.sh: could not install tmux; tests/tui/test_tmux.py will fail" >&2
fi
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
