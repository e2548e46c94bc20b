"""The words of background work in the page's language (issue 33): static/js/jobs.js's toast —
the default title, Cancel, "waiting for a free worker…" and the stage when the server names none —
from the catalog (the job's stage_text is the server's: tests/app/test_i18n_jobs.py); the search
dialog, queued and then narrated; the import dialog's notes."""
import json

from tests.browser.conftest import open_page
from tests.browser.test_i18n_page import CJK, zh_page  # noqa: F401 (the fixture)

JOB_URL = "/api/jobs/i18n-test-job"
FOLLOW = """async (url) => {
  const { followJob } = await import("/static/js/jobs.js");
  window.__job = followJob({ ok: true, job: { id: "i18n-test-job", url, state: "queued" } });
}"""
TOAST = "() => { const el = document.querySelector('.job-toast'); return el && [el.querySelector('.ttitle').textContent, el.querySelector('.tbody').textContent, el.querySelector('button').textContent]; }"


def _follow(page, base, states):
    """Follow a made-up job whose polls answer ``states`` in turn (the last one repeats);
    returns the toast's (title, body, button) after each answer."""
    answers = iter(states)
    last = {"state": states[-1]}

    def answer(route):
        state = next(answers, last["state"])
        job = {"id": "i18n-test-job", "url": JOB_URL, "state": state, "progress": {}, "started": None}
        route.fulfill(status=200, content_type="application/json", body=json.dumps({"ok": True, "job": job}))

    page.route("**" + JOB_URL, answer)
    open_page(page, base)
    page.evaluate(FOLLOW, JOB_URL)
    page.wait_for_selector(".job-toast")
    first = page.evaluate(TOAST)
    page.wait_for_function("() => { const b = document.querySelector('.job-toast .tbody'); return b && !/等待|waiting/.test(b.textContent); }")
    return first, page.evaluate(TOAST)


def test_a_queued_then_running_job_in_chinese(zh_page, server):  # noqa: F811
    _, base = server
    queued, running = _follow(zh_page, base, ["queued", "running"])
    assert queued == ["处理中", "正在等待空闲的工作进程…", "取消"]
    assert running == ["处理中", "正在模拟…", "取消"]


def test_the_same_in_english(page, server):
    _, base = server
    queued, running = _follow(page, base, ["queued", "running"])
    assert queued == ["Working", "waiting for a free worker…", "Cancel"]
    assert running == ["Working", "simulating…", "Cancel"]
    assert not any(CJK.search(text) for text in queued + running)


def test_can_this_lose_data_in_chinese_queued_then_narrated(zh_page, server):  # noqa: F811
    """The search dialog: a queued search waits in Chinese, then the real search's narration,
    verdict and summary read in Chinese outside Kafka's names (app/i18n/narration.py)."""
    from playwright.sync_api import expect
    from tests.browser.conftest import pick_library
    from tests.counterexample.test_i18n_search import english_words
    app, base = server
    app.config["SEARCH_USE_SPARK"] = False
    polls = {"n": 0}

    def first_poll_queued(route):
        polls["n"] += 1
        if polls["n"] == 1:       # the first answer: still waiting for a worker
            route.fulfill(status=200, content_type="application/json",
                          body=json.dumps({"id": "x", "state": "queued", "progress": None, "report": None, "error": None}))
        else:
            route.continue_()

    zh_page.route("**/api/search/*", first_poll_queued)
    open_page(zh_page, base)
    pick_library(zh_page, "jepsen-partition-v0.10")
    zh_page.keyboard.press("c")
    zh_page.wait_for_selector("dialog#dlg-config[open] #search-start")
    zh_page.fill("#search-runs", "60")
    zh_page.click("#search-start")
    expect(zh_page.locator(".search-status")).to_have_text("正在等待空闲的工作进程…", timeout=10000)
    expect(zh_page.locator("#search-result .narration li").first).to_be_visible(timeout=120000)
    steps = zh_page.locator("#search-result .narration li").all_inner_texts()
    assert len(steps) >= 3
    for text in steps + [zh_page.locator("#search-result .search-found").inner_text()]:
        assert CJK.search(text) and not english_words(text), (text, english_words(text))


def test_the_import_dialogs_notes_in_chinese(zh_page, server):  # noqa: F811
    """The New cluster form's import: the notes beside the box in Chinese (app/i18n/import_notes.py),
    the partitions and ids as pasted."""
    from playwright.sync_api import expect
    from tests.app.test_i18n_import_notes import english
    from tests.browser.test_import import open_import
    from tests.engine.import_samples import DESCRIBE_3_7, as_pasted
    _, base = server
    open_page(zh_page, base)
    open_import(zh_page)
    zh_page.select_option("#nc-version", "3.7")
    zh_page.fill("#nc-import-describe", as_pasted(DESCRIBE_3_7))
    zh_page.click("#nc-import-read")
    notes = zh_page.locator("#nc-import-notes li")
    expect(notes).to_have_count(3)
    texts = notes.all_inner_texts()
    assert texts[0] == "导入时 Broker 1002 不在 1 个分区的 ISR 中（orders-2）；模拟开始时每个副本都处于同步状态"
    assert all(CJK.search(text) and not english(text) for text in texts), texts
