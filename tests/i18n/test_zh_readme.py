"""docs/zh-CN/README.md (issue 33, item 5) against the product: the two commands, the first four
walkthroughs of the English README with the story titles the Chinese page shows, a row for every
tab of the live page, and the command line it quotes."""
import pathlib
import re

from babel.support import Translations
from click.testing import CliRunner

from app.cli import cli
from app.i18n.catalog import ensure_compiled
from app.i18n.text import use_lang
from engine.scenario.library import library

ROOT = pathlib.Path(__file__).resolve().parents[2]
ZH_README = (ROOT / "docs" / "zh-CN" / "README.md").read_text(encoding="utf-8")


def _zh():
    ensure_compiled(str(ROOT / "translations"), "zh_CN")
    return Translations.load(str(ROOT / "translations"), ["zh_CN"]).gettext


def test_the_two_commands():
    assert "./run.sh     #" in ZH_README and "./test.sh    #" in ZH_README
    for script in ("run.sh", "test.sh"):
        assert "scripts/setup.sh" in (ROOT / script).read_text()


def test_the_first_four_walkthroughs_name_stories_as_the_chinese_page_does():
    zh = _zh()
    section = ZH_README.split("## 试试这些", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^(\d)\. \*\*", section, re.M)
    assert items == ["1", "2", "3", "4"]
    for name in ("isr-shrink-slow-follower", "kip101-scenario-1-v0.10", "isr-shrink-zookeeper-vs-controller"):
        title = zh(library()[name]["name"])
        assert title != library()[name]["name"] and title in section, (name, title)
    assert "NOT_ENOUGH_REPLICAS" in section and "min.insync.replicas" in section


def test_every_tab_of_the_live_page_has_a_row():
    zh = _zh()
    page = (ROOT / "templates" / "index.html").read_text(encoding="utf-8")
    tabs = re.findall(r'role="tab" data-tab="(\w+)"[^>]*>(.*?)</button>', page)
    assert len(tabs) >= 6
    rows = {line.split("|")[1].strip() for line in ZH_README.splitlines() if line.startswith("| ")}
    for tab, label in tabs:
        word = re.search(r'_\("([^"]+)"\)', label)
        name = zh(word.group(1)) if word else re.sub(r"<[^>]+>", "", label).strip()
        assert any(name in row or (tab == "zk" and "ZooKeeper" in row) or (tab == "cli" and "命令行" in row)
                   for row in rows), (tab, name, rows)


def test_the_command_line_it_quotes_speaks_chinese():
    assert "LANG=zh_CN.UTF-8 .venv/bin/isrlab --help" in ZH_README
    try:
        out = CliRunner().invoke(cli, ["--help"], env={"LANG": "zh_CN.UTF-8", "LANGUAGE": None, "LC_ALL": None}).output
    finally:
        use_lang("en")
    assert out.startswith("用法：")
