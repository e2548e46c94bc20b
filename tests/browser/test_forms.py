"""Forms say what is wrong where it is wrong (issue 34): the new-cluster form shows every error
beside its field, in words, with the field marked; the server's one error goes beside the field
its path names; the sweep form shows its error once, beside its field."""
import re

from playwright.sync_api import expect

from tests.browser.conftest import open_page


INVALID = re.compile(r"\binvalid\b")


def open_new_cluster(page):
    page.click("#scenario-button")
    page.click(".dlg-tabs button[data-tab=new]")


def field_error(page, field):
    return page.locator(f"#dlg-picker .field-err[data-field='{field}']")


def test_new_cluster_form_shows_every_error_beside_its_field(page, server):
    _app, base = server
    open_page(page, base)
    open_new_cluster(page)
    page.fill(".nc-trf", "4")
    page.fill("#nc-brokers", "3")
    page.fill("#nc-duration", "0")
    page.fill("#nc-minisr", "")
    page.click("#nc-create")
    expect(field_error(page, "topics[0].replication_factor")).to_have_text(
        "Replication factor of topic orders: 4 is more than the 3 brokers")
    expect(field_error(page, "duration_ms")).to_contain_text("Duration: 0 s is not from 1 s")
    expect(field_error(page, "config.min.insync.replicas")).to_contain_text("min.insync.replicas")
    for sel in (".nc-trf", "#nc-duration", "#nc-minisr"):
        expect(page.locator(sel)).to_have_class(INVALID)
    expect(page.locator("#nc-brokers")).not_to_have_class(INVALID)
    expect(page.locator("#nc-error")).to_have_text("3 fields to correct (marked in red)")
    assert "topics[0]" not in page.locator("#dlg-picker").inner_text()
    # corrected, the marks go; a broker count the topic fits in is accepted
    page.fill(".nc-trf", "3")
    page.fill("#nc-duration", "30")
    page.fill("#nc-minisr", "1")
    page.click("#nc-create")
    page.wait_for_selector("dialog#dlg-picker:not([open])", state="attached")
    page.wait_for_function("() => window.isrlab.store.meta && window.isrlab.store.meta.name === 'my cluster'")


def test_the_servers_error_goes_beside_the_field_it_names(page, server):
    """The server answers one ScenarioError named by its field path (topics[0].partitions): its
    words go beside that field, not as a path under the form (the answer is stubbed: every error
    the server would find in this form the page already finds itself)."""
    _app, base = server
    open_page(page, base)
    open_new_cluster(page)
    # the page's own check is bypassed, the server's answer is what shows
    page.evaluate("""() => { window.__load = window.isrlab.load;
      window.isrlab.load = async () => ({ok: false, error: {field: 'topics[0].partitions', message: '5000 is out of range', allowed: 'an integer from 1 to 1000'}}); }""")
    page.click("#nc-create")
    expect(field_error(page, "topics[0].partitions")).to_have_text("5000 is out of range (allowed: an integer from 1 to 1000)")
    expect(page.locator(".nc-tparts")).to_have_class(INVALID)
    page.evaluate("() => { window.isrlab.load = window.__load; }")


def test_the_sweep_form_shows_its_error_once_beside_its_field(page, server):
    _app, base = server
    page.goto(base + "/analytics")
    page.wait_for_selector("#f-axes .an-axis")
    page.fill("#f-brokers", "0")
    page.click("#sweep-form button[type=submit]")
    note = page.locator("#fields-view .field-err")
    expect(note).to_have_count(1)
    expect(note).to_have_text('"0" is not an integer from 1')
    assert note.get_attribute("data-field") == "base.brokers"
    expect(page.locator("#f-brokers")).to_have_class(INVALID)
    # once: not again under the fields nor beside the button
    assert page.inner_text("#f-summary").strip() == "" and page.inner_text("#form-message").strip() == ""
    assert page.locator("body").inner_text().count("is not an integer from 1") == 1
    page.fill("#f-brokers", "3")
    expect(note).to_have_count(0)
    # the server's refusal goes beside the field its path names
    page.route("**/analytics/api/sweeps", lambda route: route.fulfill(status=400, json={"ok": False, "error": {
        "field": "base.topics[0].replication_factor", "message": "4 is more than the 3 brokers"}})
        if route.request.method == "POST" else route.continue_())
    page.fill("#f-rf", "4")
    page.click("#sweep-form button[type=submit]")
    expect(page.locator("#fields-view .field-err[data-field='base.topics[0].replication_factor']")).to_have_text("4 is more than the 3 brokers")
    assert page.inner_text("#form-message").strip() == ""
    page.errors[:] = [e for e in page.errors if "status of 400" not in e]
