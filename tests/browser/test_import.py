"""Import from kafka-topics.sh --describe (issue 32): paste a describe output into the New cluster
form, read the notes beside the box, start the run; the page shows the pasted brokers and the
partitions with their replicas, and the simulator's own kafka-topics.sh --describe (the CLI
corner) gives back the same topics, partitions and replicas. At 1024 and 1920 px."""
import pytest
from playwright.sync_api import expect

from engine.scenario.import_describe import parse_describe
from engine.scenario.import_tools import parse_api_versions
from engine.scenario.import_text import numbered_lines
from tests.browser.conftest import ARTIFACTS, open_page, store, wait_store
from tests.browser.layout import layout_problems
from tests.engine.import_samples import API_VERSIONS_2_6, DESCRIBE_2_6, DESCRIBE_3_7, as_pasted

WIDTHS = [(1024, 768), (1920, 1080)]


def open_import(page):
    page.click("#scenario-button")
    page.click(".dlg-tabs button[data-tab=new]")
    page.click("#nc-import > summary")


def replicas_of(text):
    """{topic: {partition: replicas}} of a describe output, read by the importer's own parser."""
    return {t.name: {p: d.replicas for p, d in sorted(t.partitions.items())}
            for t in parse_describe(numbered_lines(text, "describe"))}


@pytest.mark.parametrize("size", WIDTHS, ids=[f"{w}px" for w, _ in WIDTHS])
def test_paste_describe_read_the_notes_and_start_the_run(page, server, size):
    _app, base = server
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_page(page, base)
    open_import(page)
    page.select_option("#nc-version", "3.7")
    page.fill("#nc-import-describe", as_pasted(DESCRIBE_3_7))          # tabs as spaces, as a terminal pastes
    page.click("#nc-import-read")
    expect(page.locator("#nc-import-summary")).to_have_text(
        "3 brokers (1001, 1002, 1003), 1 topic, 3 partitions · kafka_version 3.7 · 3 notes:")
    notes = page.locator("#nc-import-notes li")
    expect(notes).to_have_count(3)
    assert notes.nth(0).inner_text().startswith("at import, broker 1002 was out of the ISR of 1 partition (orders-2)")
    assert "retention.bytes" in notes.nth(2).inner_text()
    assert layout_problems(page, ["#dlg-picker .dlg-body", "#nc-import"], clip=["#nc-import", "#dlg-picker"]) == []
    assert page.evaluate("() => { const d = document.querySelector('#dlg-picker .dlg-body');"
                         " return d.scrollWidth <= d.clientWidth + 1; }"), "the form scrolls sideways"
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#dlg-picker").screenshot(path=str(ARTIFACTS / f"import-box-{size[0]}.png"))
    # start: the page shows the pasted cluster
    page.click("#nc-import-start")
    page.wait_for_selector("dialog#dlg-picker:not([open])", state="attached")
    wait_store(page, "s.meta && s.meta.name === 'imported cluster' && s.brokers.size === 3 && s.partitions.size === 3")
    assert store(page, "[...s.brokers.keys()].sort((a, b) => a - b)") == [1001, 1002, 1003]
    for broker in (1001, 1002, 1003):
        expect(page.locator(f".broker[data-broker='{broker}']")).to_be_visible()
    assert store(page, "s.meta.kafka_version") == "3.7"
    assert "broker 1002 was out of the ISR" in page.locator("#story-text").inner_text()     # the notes stay
    wait_store(page, "[...s.partitions.values()].every(p => p.leader === p.replicas[0])")
    # the simulator's own kafka-topics.sh --describe gives back the pasted topics and replicas
    page.click(".tabs button[data-tab=cli]")
    page.fill("#cli-input", "kafka-topics.sh --describe")
    page.keyboard.press("Enter")
    expect(page.locator("#cli-out")).to_contain_text("Topic: orders\tPartitionCount: 3\tReplicationFactor: 3")
    out = page.locator("#cli-out").inner_text()
    printed = out[out.index("Topic: orders\tPartitionCount"):]
    assert replicas_of(printed) == replicas_of(DESCRIBE_3_7) == {
        "orders": {0: [1001, 1002, 1003], 1: [1002, 1003, 1001], 2: [1003, 1001, 1002]}}


def test_two_topics_round_trip_through_the_cli_corner(page, server):
    _app, base = server
    open_page(page, base)
    open_import(page)
    page.select_option("#nc-version", "2.6")
    page.fill("#nc-import-describe", DESCRIBE_2_6)
    page.click("#nc-import-read")
    expect(page.locator("#nc-import-notes li")).not_to_have_count(0)
    page.click("#nc-import-start")
    page.wait_for_selector("dialog#dlg-picker:not([open])", state="attached")
    wait_store(page, "s.meta && s.meta.name === 'imported cluster' && s.partitions.size === 3")
    page.click(".tabs button[data-tab=cli]")                # the live describe of the CLI corner
    expect(page.locator("#describe")).to_contain_text("Topic: moving")
    describe = page.locator("#describe").inner_text()
    assert replicas_of(describe) == replicas_of(DESCRIBE_2_6) == {
        "orders": {0: [1, 2, 3], 1: [2, 3, 1]}, "moving": {0: [1, 2, 3]}}


def test_racks_round_trip_through_kafka_broker_api_versions(page, server):
    """describe + kafka-broker-api-versions.sh -> a run -> the CLI corner's own
    kafka-broker-api-versions.sh names the same brokers in the same racks (read back by the
    importer's own parser), and the map draws one zone box per rack."""
    _app, base = server
    open_page(page, base)
    open_import(page)
    page.select_option("#nc-version", "2.6")
    page.fill("#nc-import-describe", DESCRIBE_2_6)
    page.click("#nc-import .import-more > summary")
    page.fill("#nc-import-brokers", API_VERSIONS_2_6)
    page.click("#nc-import-read")
    expect(page.locator("#nc-import-start")).to_be_visible()
    page.click("#nc-import-start")
    page.wait_for_selector("dialog#dlg-picker:not([open])", state="attached")
    wait_store(page, "s.meta && s.meta.name === 'imported cluster' && s.znodes.has('/brokers/ids/3')")
    page.click(".tabs button[data-tab=cli]")
    out = page.locator("#cli-out")
    before = out.locator(":scope > div").count()
    page.fill("#cli-input", "kafka-broker-api-versions.sh --bootstrap-server broker-1:9092")
    page.keyboard.press("Enter")
    expect(out.locator(":scope > div")).to_have_count(before + 2)
    printed = out.locator(":scope > div").last.inner_text()
    heads = "\n".join(line for line in printed.splitlines() if " -> " in line)
    assert heads, printed
    # the parser wants each node's API list after "-> ("; the node lines alone are read as nodes
    # that answered with an error, which carry the same id and rack
    racks = parse_api_versions(numbered_lines(heads.replace(" -> (", " -> ERROR: x"), "api-versions")).racks
    assert racks == parse_api_versions(numbered_lines(API_VERSIONS_2_6, "api-versions")).racks \
        == {1: "az-a", 2: "az-b", 3: "az-c"}
    assert sorted(page.locator("#nodes .zone[data-rack]").evaluate_all("els => els.map(e => e.dataset.rack)")) \
        == ["az-a", "az-b", "az-c"]


def test_a_malformed_line_shows_beside_the_box_and_starts_nothing(page, server):
    _app, base = server
    open_page(page, base)
    before = store(page, "s.run")
    open_import(page)
    page.fill("#nc-import-describe", DESCRIBE_2_6.replace("Isr: 3,1", "Isr: 3,one"))
    page.click("#nc-import-read")
    error = page.locator("#nc-import-error")
    expect(error).to_contain_text("describe line 3: 'one' is not a whole number")
    expect(page.locator("#nc-import-describe")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#nc-import-start")).to_be_hidden()
    box = page.locator("#nc-import-describe").bounding_box()
    below = error.bounding_box()
    assert 0 <= below["y"] - (box["y"] + box["height"]) < 80, "the error is right under the box"
    assert store(page, "s.run") == before
    # the same paste in good order clears the error
    page.fill("#nc-import-describe", DESCRIBE_2_6)
    page.click("#nc-import-read")
    expect(error).to_be_hidden()
    expect(page.locator("#nc-import-start")).to_be_visible()
    # the browser logs the refused request (400) as a failed resource: that one was expected
    page.errors[:] = [e for e in page.errors if not ("status of 400" in e and "/api/import/describe" in e)]
