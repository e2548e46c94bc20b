#!/usr/bin/env bash
# Set everything up and start ISR Lab (see README).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec .venv/bin/python -m engine run "${1:-kip101-scenario-1-v0.10}" --summary
