#!/bin/sh
# The whole test suite: set everything up, lint and format-check, then every test.
. "$(dirname "$0")/setup.sh"
.venv/bin/ruff check ways_sensors tests bench scripts
.venv/bin/ruff format --check ways_sensors tests bench scripts
.venv/bin/python -m ways_sensors.config.schemas --check
.venv/bin/mypy
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
