"""Every error message the code raises is a msgid of the catalog (app/i18n/error_sources.py reads
them from the source): a new ``ScenarioError`` whose message is not in ``app/i18n/errors.py`` or
``error_messages.py`` fails here until ``scripts/error_messages.py`` and ``scripts/i18n.sh update``
have run and its msgstr is filled. Each one, with its slots filled, comes out Chinese."""
import re

import pytest

from app.i18n import errors
from app.i18n.error_messages import BY_SOURCE
from app.i18n.error_sources import SLOT, raised_messages, shape, template
from scripts.error_messages import EXCLUDE


HAN = re.compile(r"[\u4e00-\u9fff]")


def test_the_source_reader_names_slots_after_their_values():
    import ast
    node = ast.parse('f"{json.dumps(value)[:60]} is not an integer from {lo} to {spec[\'hi\']}"').body[0].value
    assert template(node) == "%(value)s is not an integer from %(lo)s to %(hi)s"
    assert template(ast.parse('"100% sure"').body[0].value) == "100% sure"
    assert shape("%(a)s to %(b)s") == shape("%(lo)s to %(hi)s")


def test_every_raised_message_is_listed():
    listed = {shape(m) for m in errors.HAND_PATTERNS + errors.PLAIN} | \
        {shape(m) for msgids in BY_SOURCE.values() for m in msgids}
    found = raised_messages()
    assert len(found) > 400
    missing = {m: where[0] for m, where in found.items()
               if shape(m) not in listed and m not in EXCLUDE and not re.search(r"\)s%\(", m)}
    assert not missing, f"run scripts/error_messages.py and scripts/i18n.sh update: {missing}"


def _sample(msgid):
    return SLOT.sub("7", msgid)


def test_every_listed_message_comes_out_chinese(app_context):
    english = [m for msgids in BY_SOURCE.values() for m in msgids
               if not HAN.search(errors.translate_message(_sample(m)))]
    assert not english, english[:10]


@pytest.fixture
def app_context():
    from app import create_app
    app = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "x"})
    with app.test_request_context("/?lang=zh-CN"):
        yield


def test_a_message_inside_a_message_is_translated(app_context):
    inner = "7 is out of range"
    assert errors.translate_message(f"holds a scenario that {inner}") == "其中的场景有误：7 超出范围"
    # a single word in a slot is a value, even when the catalog knows it as a word
    assert errors.translate_message("unknown topic text") == "未知主题 text"
