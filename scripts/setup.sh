# Sourced by main.sh and test.sh: a virtual environment in .venv with the package
# (editable), its test tools and the sensors tab (the tui extra). Needs only Python
# 3.10+ on PATH (python3, or $PYTHON).
set -eu
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || {
  echo "ways sensors needs Python 3.10 or newer; set PYTHON=/path/to/python3.1x" >&2
  exit 1
}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PYTHON" --version 2>&1)" >&2
  "$PYTHON" -m venv .venv || {
    echo "could not create .venv; on Debian/Ubuntu install python3-venv first" >&2
    exit 1
  }
fi
echo "setup: updating pip in .venv" >&2
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
echo "setup: installing ways sensors (editable), the sensors tab and the test tools into" \
  ".venv with pip (the first time, about a minute)" >&2
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,tui]'
# the midnight tests run the hook and dispatcher under a moved clock: Debian's faketime
if ! command -v faketime >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get install -y -q faketime >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q faketime >/dev/null 2>&1; } \
    || echo "could not install faketime (apt-get install faketime); tests/test_midnight.py needs it" >&2
fi
# the syslog tests start their own rsyslogd on loopback (TLS through its OpenSSL driver,
# certificates made with the openssl command; RELP through rsyslog-relp's imrelp)
if { ! command -v rsyslogd >/dev/null 2>&1 && [ ! -x /usr/sbin/rsyslogd ]; } \
  || ! ls /usr/lib/*/rsyslog/lmnsd_ossl.so >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1 \
  || ! ls /usr/lib/*/rsyslog/imrelp.so >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -q rsyslog rsyslog-openssl rsyslog-relp openssl >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 \
           && apt-get install -y -q rsyslog rsyslog-openssl rsyslog-relp openssl >/dev/null 2>&1; } \
      || echo "could not install rsyslog (apt-get install rsyslog rsyslog-openssl rsyslog-relp openssl); tests/targets/test_syslog.py and test_relp.py need it" >&2
  fi
fi
# the sensors tab's terminal test (tests/tui/test_tmux.py) draws it under tmux
if ! command -v tmux >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing tmux with apt-get (the sensors tab's terminal test)" >&2
  apt-get install -y -q tmux >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q tmux >/dev/null 2>&1; } \
    || echo "could not install tmux (apt-get install tmux); tests/tui/test_tmux.py needs it" >&2
fi
# the session replay's test (tests/store/test_replay_chromium.py) renders the page in
# Debian's headless Chromium
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing chromium with apt-get (the session replay's page test)" >&2
  apt-get install -y -q chromium >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; } \
    || echo "could not install chromium (apt-get install chromium); tests/store/test_replay_chromium.py needs it" >&2
fi
# the team store's tests (tests/store/test_postgres.py) start Debian's PostgreSQL server
# themselves (initdb in a temporary folder, a private socket); pg_trgm comes with it
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
  && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing postgresql with apt-get (the team store's tests)" >&2
  apt-get install -y -q postgresql >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q postgresql >/dev/null 2>&1; } \
    || echo "could not install postgresql (apt-get install postgresql); tests/store/test_postgres.py needs it" >&2
fi
# byte-compile the package as a wheel install would: the hook runs on every tool call
echo "setup: byte-compiling the package" >&2
.venv/bin/python -m compileall -q ways_sensors
echo "setup: done; the command is .venv/bin/ways" >&2
