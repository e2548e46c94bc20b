"""Follower fetching on the page (KIP-392, docs/model.md §21.8): the Clients tab's consumer row and
the map's consumer node name the replica each consumer reads — the follower of its rack — at 1024
and 1920 px, without clipping."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, wait_store

SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
DOC = {"name": "follower fetching", "seed": 1, "kafka_version": "3.7", "brokers": 3, "duration_ms": 60000,
       "description": "A consumer in az-b reads orders-0 from the az-b follower.",
       "racks": {"0": "az-a", "1": "az-b", "2": "az-c"}, "inter_rack_latency_ms": 3,
       "config": {"replica.selector.class": SELECTOR},
       "topics": [{"name": "orders", "partitions": 1, "replication_factor": 3, "assignment": {"0": [0, 1, 2]}}],
       "clients": [{"name": "p1", "type": "producer", "topic": "orders", "acks": "all", "rate_per_s": 20},
                   {"name": "reader-b", "type": "consumer", "topic": "orders", "client.rack": "az-b",
                    "auto.offset.reset": "earliest"},
                   {"name": "plain", "type": "consumer", "topic": "orders", "auto.offset.reset": "earliest"}],
       "timeline": []}


@pytest.mark.parametrize("width", [1024, 1920])
def test_consumer_row_and_map_name_the_follower_read(page, server, width):
    _app, base = server
    page.set_viewport_size({"width": width, "height": 900})
    reply = page.request.post(base + "/api/rooms", data={"scenario": DOC}).json()
    assert reply["ok"], reply
    page.goto(base + reply["url"])
    page.wait_for_function("() => window.isrlab && window.isrlab.store.meta && window.isrlab.store.clients.size === 3")
    wait_store(page, "(s.clients.get('reader-b').reads || {})['orders-0'] && "
                     "s.clients.get('reader-b').reads['orders-0'].role === 'follower'", timeout=30000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")

    # the map's consumer node: "read N ← b1", and the whole sentence in its title
    node = page.locator("#nodes .node.client.consumer", has_text="reader-b")
    expect(node).to_contain_text("← b1")
    assert "reads orders-0 from b1 (follower, rack az-b)" in node.get_attribute("title")
    plain = page.locator("#nodes .node.client.consumer", has_text="plain")
    assert "←" not in plain.inner_text()
    assert page.evaluate("(el) => el.scrollWidth <= el.clientWidth + 1", node.element_handle())

    # the Clients tab's consumer row
    page.click(".tabs button[data-tab=clients]")
    row = page.locator("#panel-clients tr", has_text="reader-b")
    expect(row.locator("td").first).to_contain_text("rack az-b")
    reads = row.locator(".consumer-reads")
    expect(reads).to_have_text("reads orders-0 from b1 (follower, rack az-b)")
    assert page.locator("#panel-clients tr", has_text="plain").locator(".consumer-reads").count() == 0
    box = reads.bounding_box()
    panel = page.locator("#panel-clients").bounding_box()
    assert box["x"] >= panel["x"] - 1 and box["x"] + box["width"] <= panel["x"] + panel["width"] + 1, (box, panel)
    assert page.evaluate("(el) => el.scrollWidth <= el.clientWidth + 1", reads.element_handle())
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"follower-fetch-{width}.png"))
