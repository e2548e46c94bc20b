"""User text reaches the page only as text: a scenario named <img src=x onerror=alert(1)>, a topic
of that name in the new-cluster form and in the Kafka shell all show up literally, and nothing runs.
(The test context bypasses the CSP, so this checks the page itself, not the header.)"""
import json

from playwright.sync_api import expect

from tests.browser.conftest import open_page, wait_store

EVIL = "<img src=x onerror=alert(1)>"


def test_user_text_is_rendered_as_text(page, server):
    _app, base = server
    open_page(page, base)
    # 1. a scenario document named with markup, loaded through the Import JSON dialog
    page.click("#scenario-button")
    page.click(".dlg-tabs button[data-tab=import]")
    doc = {"name": EVIL, "description": EVIL + " <b>bold?</b>", "brokers": 3,
           "topics": [{"name": "orders", "partitions": 1, "replication_factor": 3}]}
    page.fill("#import-json", json.dumps(doc))
    page.click("#import-load")
    wait_store(page, f"s.meta.name === {json.dumps(EVIL)}")
    expect(page.locator("#scenario-name")).to_have_text(EVIL)
    assert EVIL in page.locator("#story-text").inner_text()
    assert page.locator("#story-text b").count() == 0
    # 2. a topic named with markup in the new-cluster form: refused, and the error shows it literally
    page.click("#scenario-button")
    page.click(".dlg-tabs button[data-tab=new]")
    page.fill(".nc-tname", EVIL)
    page.click("#nc-create")
    page.wait_for_selector(".field-err[data-field='topics[0].name']")
    error = page.locator(".field-err[data-field='topics[0].name']").inner_text()
    assert EVIL in error and "is not a legal Kafka topic name" in error
    page.keyboard.press("Escape")
    # 3. the same name typed into the Kafka shell
    page.click(".tabs button[data-tab=cli]")
    page.fill("#cli-input", f"kafka-topics.sh --describe --topic {EVIL}")
    page.keyboard.press("Enter")
    page.fill("#cli-input", f"get /brokers/topics/{EVIL}")
    page.keyboard.press("Enter")
    # the shell splits words on spaces, as a shell does; what it echoes back is literal text
    expect(page.locator("#cli-out")).to_contain_text("Node does not exist: /brokers/topics/<img")
    out = page.locator("#cli-out").inner_text()
    assert f"$ get /brokers/topics/{EVIL}" in out and "Topic '<img' does not exist" in out
    page.wait_for_timeout(300)
    assert page.locator("img").count() == 0, "no element was created from user text"
    assert page.dialogs == []
