"""A story moved to another era says so (app/runner/story_text.py, issue 34 item 1)."""
from app.runner.limits import retarget
from app.runner.story_text import own_words
from engine.scenario.library import library


def test_a_story_moved_to_another_era_names_both_and_moving_back_restores_it():
    own = library()["kip101-scenario-1-v0.10"]
    moved, _ = retarget(own, "2.6")
    assert moved["name"] == own["name"] + " — rerun under 2.6"
    assert moved["description"].startswith("[Written for Kafka 0.10; rerun under 2.6, whose rules may tell "
                                           "another story] Before KIP-101")
    again, _ = retarget(moved, "3.7")             # replaced, not stacked
    assert again["name"] == own["name"] + " — rerun under 3.7"
    assert again["description"].count("[Written for") == 1 and "Kafka 0.10; rerun under 3.7" in again["description"]
    back, _ = retarget(again, "0.10")
    assert (back["name"], back["description"]) == (own["name"], own["description"])
    assert own_words(again)[2] == "0.10"


def test_from_zookeeper_to_kraft_the_guide_says_what_replaces_sessions():
    moved, _ = retarget(library()["broker-failure-clean-election"], "4.1")
    assert "KRaft has no ZooKeeper" in moved["description"]
    assert "broker.session.timeout.ms" in moved["description"]
    kraft_story, _ = retarget(library()["controller-failover-kraft"], "4.1")
    assert "KRaft has no ZooKeeper" not in kraft_story["description"]     # written for KRaft already


def test_the_same_era_leaves_the_words_alone():
    own = library()["isr-expansion"]
    same, _ = retarget(own, own["kafka_version"])
    assert (same["name"], same["description"]) == (own["name"], own["description"])
