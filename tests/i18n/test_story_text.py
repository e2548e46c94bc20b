"""The library's stories in 中文 (issue 33): their titles and guides are msgids of the one catalog
(app/i18n/library_extract.py, registered in babel.cfg), the browser gets them with its share of the
catalog, and static/js/i18n_story.js reads the markers app/runner/story_text.py writes when a story
runs in another era."""
import io
import json
import pathlib
import re

from babel.messages.pofile import read_po

from app.i18n.catalog import js_catalog
from app.i18n.library_extract import extract_library
from app.runner import story_text
from engine.scenario.library import library

ROOT = pathlib.Path(__file__).resolve().parents[2]
PO = ROOT / "translations" / "zh_CN" / "LC_MESSAGES" / "messages.po"
JS = (ROOT / "static" / "js" / "i18n_story.js").read_text()
HAN = re.compile(r"[\u4e00-\u9fff]")


def test_the_extractor_yields_a_storys_name_and_description_with_their_lines():
    doc = {"name": "A story", "seed": 1, "description": "What to watch."}
    text = json.dumps(doc, indent=2).encode()
    found = list(extract_library(io.BytesIO(text), [], [], {}))
    assert [(line, message) for line, _, message, _ in found] == [(2, "A story"), (4, "What to watch.")]
    assert list(extract_library(io.BytesIO(b'{"name": ""}'), [], [], {})) == []


def test_every_story_is_in_the_catalog_in_chinese():
    with open(PO, "rb") as f:
        catalog = read_po(f, locale="zh_CN")
    stories = library()
    assert len(stories) >= 30
    for name, doc in stories.items():
        for field in ("name", "description"):
            entry = catalog.get(doc[field])
            assert entry is not None and HAN.search(entry.string), (name, field)
            assert any(path == f"engine/scenario/library/{name}.json" for path, _ in entry.locations), (name, field)


def test_the_browser_gets_the_stories_with_its_catalog():
    words = js_catalog(str(ROOT / "translations"), "zh_CN")
    doc = library()["isr-shrink-slow-follower"]
    assert words[doc["name"]] == "停止 fetch 的追随者被移出 ISR"
    assert "isr-expiration" in words[doc["description"]] and "replica.lag.time.max.ms / 2 = 15 s" in words[doc["description"]]
    assert js_catalog(str(ROOT / "translations"), "en") == {}


def test_the_page_reads_the_markers_story_text_writes():
    doc = dict(library()["isr-shrink-slow-follower"])
    story_text.retell(doc, "3.9-kraft")
    # the suffix and the description's head, as i18n_story.js's RERUN and WRITTEN_FOR read them
    assert re.search(r" — rerun under (\S+)$", doc["name"]).group(1) == "3.9-kraft"
    head = re.match(r"^\[Written for Kafka ([^\]\s]+); rerun under ([^\]]+?), whose rules may tell another story\] ",
                    doc["description"])
    assert head and head.groups() == ("2.6", "3.9-kraft")
    assert r"/ — rerun under (\S+)$/" in JS
    assert r"/^\[Written for Kafka ([^\]\s]+); rerun under ([^\]]+?), whose rules may tell another story\] /" in JS
    # the KRaft note follows the head word for word
    assert f'N_("{story_text.KRAFT_NOTE.strip()}")' in JS
    assert doc["description"][head.end():].startswith(story_text.KRAFT_NOTE)
