"""The metrics' explanations and units in 中文 (issue 33): each metric's ``what`` and ``unit`` in
``engine/metrics/catalog.py`` is a msgid (app/i18n/metrics_extract.py, registered in babel.cfg),
the browser gets it with its share of the catalog (the Metrics tab shows it with known(): read in
tests/browser/test_i18n_panels.py)."""
import pathlib
import re

from app.i18n.catalog import js_catalog
from app.i18n.metrics_extract import extract_metrics
from engine.metrics.catalog import METRICS

ROOT = pathlib.Path(__file__).resolve().parents[2]
CATALOG = ROOT / "engine" / "metrics" / "catalog.py"
HAN = re.compile(r"[\u4e00-\u9fff]")


def _extracted():
    with open(CATALOG, "rb") as f:
        return list(extract_metrics(f, [], [], {}))


def test_the_extractor_yields_every_metrics_words_and_no_symbol():
    words = {message for _, _, message, _ in _extracted()}
    expected = {m[k] for m in METRICS for k in ("what", "unit")} - {"ms"}
    assert words == expected
    # each one at the line that writes it, so the catalog's location points at the metric
    lines = CATALOG.read_text().splitlines()
    assert all(f'"{message}"' in lines[line - 1] for line, _, message, _ in _extracted())


def test_the_browser_gets_them_in_chinese():
    browser = js_catalog(ROOT / "translations", "zh_CN")
    for m in METRICS:
        assert HAN.search(browser.get(m["what"], "")), m["what"]
        assert m["unit"] == "ms" or HAN.search(browser.get(m["unit"], "")), m["unit"]
    assert js_catalog(ROOT / "translations", "en") == {}

