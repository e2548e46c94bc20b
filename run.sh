#!/usr/bin/env bash
# Set everything up and start ISR Lab's live web simulator on 127.0.0.1 (see README).
# Port: ISRLAB_PORT (default 5000) or ./run.sh --port 8080; it prints the URL to open.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec .venv/bin/isrlab serve "$@"
