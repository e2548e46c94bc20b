"""Panels that agree with the cluster, KRaft eras (issue 34): a stopped voter shows what it holds,
and kafka-metadata-quorum.sh prints the fetch times the leader keeps."""
from playwright.sync_api import expect

from tests.browser.conftest import store
from tests.browser.test_kraft import QUORUM_TAB, kraft_doc, load, run_until, server  # noqa: F401 (server: fixture)


def test_a_stopped_voter_keeps_its_log_end_but_not_a_high_watermark(page, server):  # noqa: F811
    _app, base = server
    load(page, base, kraft_doc("3.9-kraft"))
    run_until(page, "s.quorum.active !== null && s.quorum.high_watermark > 5 && s.clock.t_ms > 3000")
    follower = store(page, "s.quorum.voters.find(v => v.id !== s.quorum.active).id")
    page.evaluate("(id) => window.isrlab.command({op: 'crash', controller: id}, 'crash')", follower)
    page.wait_for_function("(id) => window.isrlab.store.quorum.voters.find(v => v.id === id).state === 'stopped'", arg=follower)
    leo = store(page, f"s.quorum.voters.find(v => v.id === {follower}).log_end_offset")
    assert leo > 0
    page.click(QUORUM_TAB)
    row = page.locator(f".qvoter[data-voter='{follower}'] .qv3")
    expect(row).to_contain_text(f"LEO {leo} · HW unknown (stopped)")
    node = page.locator(f".node.voter[data-voter='{follower}'] .vrow2")
    assert "HW 0" not in node.inner_text() and f"LEO {leo}" in node.inner_text()


def test_describe_replication_prints_the_fetch_times_the_leader_keeps(page, server):  # noqa: F811
    """kafka-metadata-quorum.sh describe --replication: every replica's LastFetchTimestamp and
    LastCaughtUpTimestamp in ms of the simulated clock (the leader's own row: now), not -1."""
    _app, base = server
    load(page, base, kraft_doc("3.9-kraft"))
    run_until(page, "s.quorum.active !== null && s.clock.t_ms > 4000")
    now, active = store(page, "[s.clock.t_ms, s.quorum.active]")
    page.click(".tabs button[data-tab=cli]")
    page.fill("#cli-input", "kafka-metadata-quorum.sh describe --replication")
    page.press("#cli-input", "Enter")
    table = [r.split() for r in page.locator("#cli-out > div").last.inner_text().splitlines()]
    assert table[0] == ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]
    leader = table[1]
    assert leader[0] == str(active) and leader[-1] == "Leader" and leader[4] == leader[5] == str(now)
    rows = table[2:]
    assert [r[-1] for r in rows] == ["Follower", "Follower", "Observer", "Observer", "Observer"]
    for r in rows:
        fetch, caught = int(r[4]), int(r[5])
        assert 0 < fetch <= now and 0 < caught <= fetch, r
