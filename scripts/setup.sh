#!/usr/bin/env bash
# Idempotent setup for a fresh Debian machine: system packages (only when missing), a virtual
# environment in .venv, and the pinned Python requirements (reinstalled only when they change).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
# zookeeper: the real server that tests/engine/test_zk_differential.py replays the engine's calls on
# pypy3: sweeps simulate their runs in PyPy worker processes (tests/spark/test_pypy_workers.py)
# fonts-wqy-zenhei: the CJK glyphs of the Chinese pages, served by the app itself (app/i18n/fonts.py)
# redis-server: web processes sharing rooms through ISRLAB_MESSAGE_QUEUE (tests/app/test_message_queue.py
# starts its own on a free port; the Debian service it installs is not used by the tests)
for pkg in chromium libxerial-sqlite-jdbc-java libpostgresql-jdbc-java postgresql zookeeper pypy3 fonts-wqy-zenhei redis-server; do
  have_pkg "$pkg" || need_apt+=("$pkg")
done
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements.sha256
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python requirements"
  .venv/bin/pip install -q -r requirements.txt
  # the project itself, editable (the working tree runs): puts the `isrlab` command in .venv/bin
  .venv/bin/pip install -q --no-deps -e .
  echo "$want" > "$stamp"
fi

# the gettext catalogs of the pages in Chinese: translations/*.po -> .mo (build output, not committed)
scripts/i18n.sh compile

# Spark's driver JVM maps a class-data-sharing archive built once per machine (app/spark/class_archive.py):
# sessions then start in about half the time. Skipped when it exists; a failure only costs that speed.
.venv/bin/python -m app.spark.archive_build || echo "setup: no Spark class archive (sessions run without it)"
