#!/usr/bin/env bash
# The gettext catalogs (app/i18n): `scripts/i18n.sh compile` builds translations/*/LC_MESSAGES/*.mo
# (build output, not committed; scripts/setup.sh runs it); `scripts/i18n.sh update` extracts every
# msgid of app/, templates/ and static/js/ (babel.cfg) and merges them into the .po files, whose new
# entries a translator then fills in (tests/app/test_i18n_catalog.py fails on an empty one).
set -euo pipefail
cd "$(dirname "$0")/.."
PYBABEL=${PYBABEL:-.venv/bin/pybabel}
# babel.cfg names an extractor of this checkout (app.i18n.library_extract)
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"
case "${1:-compile}" in
  compile)
    "$PYBABEL" -q compile -d translations ;;
  update)
    pot=$(mktemp --suffix=.pot)
    "$PYBABEL" -q extract -F babel.cfg -k N_ -k t -k tr --no-wrap --sort-by-file -o "$pot" .
    "$PYBABEL" -q update -i "$pot" -d translations --no-wrap --ignore-obsolete --no-fuzzy-matching
    rm -f "$pot" ;;
  *) echo "usage: scripts/i18n.sh [compile|update]" >&2; exit 2 ;;
esac
