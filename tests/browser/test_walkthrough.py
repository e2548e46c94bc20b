"""A walkthrough in 中文 on the live page (issue 33, item 3), in Debian's Chromium: a reader of the
seed articles opens ``/?story=isr-shrink-slow-follower&lang=zh-CN``, jumps to the step where the
leader's isr-expiration task removes follower 2 (45006 ms, ReplicaManager#maybeShrinkIsr) and
sees it highlighted with its Chinese title; jumping back to the 30 s check (an earlier moment: the
run restarts and runs to it) moves the highlight back. The band does not overlap the other panels
at 1024 and 1920 px."""
from tests.browser.conftest import ARTIFACTS, open_page, wait_store
from tests.browser.layout import check_sizes
from tests.browser.test_layout import LIVE, LIVE_CLIP

SHOTS = ARTIFACTS / "walkthrough"
URL = "/?story=isr-shrink-slow-follower&lang=zh-CN"
SHRINK = "领导者把追随者 2 移出 ISR"
CHECK = "30 s 时的检查：还不收缩"


def _current(page):
    return page.evaluate("""() => { const b = document.querySelector('#guide .gstep.current');
      return b && { i: Number(b.dataset.i), name: b.querySelector('.gname').textContent,
        visible: b.querySelector('.gname').getClientRects().length > 0, aria: b.getAttribute('aria-current'),
        title: document.querySelector('#guide .gsteptitle').textContent,
        kafka: document.querySelector('#guide .gkafka').textContent }; }""")


def _jump(page, index, t_ms):
    page.click(f'#guide .gstep[data-i="{index}"]')
    wait_store(page, f"s.clock.t_ms === {t_ms} && !s.clock.playing", timeout=60000)
    page.wait_for_function(f"() => {{ const b = document.querySelector('#guide .gstep.current'); return b && b.dataset.i === '{index}'; }}")


def test_a_walkthrough_in_chinese_follows_the_clock(page, server):
    _, base = server
    open_page(page, base, URL)
    page.wait_for_selector("#guide:not([hidden]) .gstep")
    assert page.text_content("#guide .what") == "分步讲解"
    assert page.locator("#guide .gstep").count() == 7
    _jump(page, 3, 45006)
    cur = _current(page)
    assert cur == {"i": 3, "name": SHRINK, "visible": True, "aria": "step", "title": SHRINK,
                   "kafka": "ReplicaManager#maybeShrinkIsr"}
    # the run on screen agrees: follower 2 is out of the ISR at this very moment
    assert page.evaluate("() => window.isrlab.store.partitions.get('orders-0').isr") == [0, 1]
    _jump(page, 1, 30006)                        # back in time: restart, then run to 30 s
    cur = _current(page)
    assert cur["i"] == 1 and cur["name"] == CHECK and cur["kafka"] == "replica.lag.time.max.ms"
    assert page.locator("#guide .gstep.done").count() == 1
    assert page.errors == []


def test_the_guide_band_does_not_overlap_at_1024_and_1920(page, server):
    def ready(p):
        p.wait_for_function("() => window.isrlab && window.isrlab.store.clock")
        p.wait_for_selector("#guide:not([hidden]) .gstep")
        _jump(p, 3, 45006)
    _, base = server
    problems = check_sizes(page, base + URL, LIVE + ["#guide", "#guide .ghead", "#guide .gsteps"],
                           clip=LIVE_CLIP + ["#guide .ghead"], ready=ready, shots=SHOTS, name="live-zh")
    assert problems == {}
