#!/usr/bin/env bash
# Set everything up and run the whole test suite; any skipped test fails the run.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
export ISRLAB_NO_SKIP=1
exec .venv/bin/python -m pytest "$@"
