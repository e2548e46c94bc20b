"""``isrlab`` in 中文 (issue 33): the locale (``LANG=zh_CN.UTF-8``, ``LC_ALL``, ``LANGUAGE``) or
``--lang`` chooses the language of click's help, of the commands' results and errors, and of the
progress stages, from the one catalog; English otherwise, and English again after the command."""
import io
import json
import re

import pytest
from click.testing import CliRunner

from app.cli import cli
from app.commandline import Progress
from app.i18n.command_line import lang_from_argv, lang_from_environment
from app.i18n.text import _, process_lang, use_lang

HAN = re.compile(r"[\u4e00-\u9fff]")
ZH_ENV = {"LANG": "zh_CN.UTF-8", "LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None}
EN_ENV = {"LANG": "en_US.UTF-8", "LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None}


@pytest.fixture
def runner():
    yield CliRunner()
    use_lang("en")


@pytest.mark.parametrize("environ, tag", [
    ({"LANG": "zh_CN.UTF-8"}, "zh-CN"), ({"LC_ALL": "zh_CN.utf8", "LANG": "en_US.UTF-8"}, "zh-CN"),
    ({"LANGUAGE": "zh_CN:en", "LANG": "C"}, "zh-CN"), ({"LANGUAGE": "fr:zh_CN"}, "zh-CN"),
    ({"LC_ALL": "en_GB.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"), ({"LANG": "C"}, "en"), ({}, "en"),
    ({"LANG": "de_DE.UTF-8"}, "en"), ({"LC_MESSAGES": "zh_CN@pinyin"}, "zh-CN")])
def test_the_language_of_the_locale(environ, tag):
    assert lang_from_environment(environ) == tag


def test_lang_on_the_command_line():
    assert lang_from_argv(["run", "x", "--lang", "zh-CN"]) == "zh-CN"
    assert lang_from_argv(["--lang=en", "serve"]) == "en"
    assert lang_from_argv(["run", "--", "--lang", "zh-CN"]) is None


def test_help_in_chinese_from_the_locale(runner):
    out = runner.invoke(cli, ["--help"], env=ZH_ENV).output
    assert out.startswith("用法：") and "ISR Lab：一个可视化、确定性的 Apache Kafka 复制模拟器。" in out
    assert "显示此帮助并退出。" in out and "帮助和消息的语言" in out
    assert "Show this message" not in out and "Usage:" not in out
    english = runner.invoke(cli, ["--help"], env=EN_ENV).output
    assert english.startswith("Usage:") and not HAN.search(english.replace("中文", ""))
    assert process_lang() == "en"                        # the process speaks English again


def test_every_commands_help_in_chinese_and_english(runner):
    for name, command in cli.commands.items():
        zh = runner.invoke(cli, [name, "--help", "--lang", "zh-CN"], env=EN_ENV)
        assert zh.exit_code == 0, (name, zh.output)
        assert HAN.search(zh.output.split("\n\n")[1]), (name, zh.output)          # the description
        for param in command.params:
            if getattr(param, "help", None):
                assert HAN.search(param.help), (name, param.name, param.help)    # every option's help
                assert param.help_msgid not in zh.output
        en = runner.invoke(cli, [name, "--help", "--lang", "en"], env=ZH_ENV)
        assert en.exit_code == 0 and not HAN.search(en.output), (name, en.output)


def test_a_run_reports_in_chinese(runner):
    zh = runner.invoke(cli, ["run", "isr-expansion", "--lang", "zh-CN"], env=EN_ENV)
    en = runner.invoke(cli, ["run", "isr-expansion"], env=EN_ENV)
    assert zh.exit_code == en.exit_code == 0
    first, records = zh.output.splitlines()[:2]
    assert first.startswith("ISR 扩张：") and "（kafka_version 2.6，种子 2）" in first and "个事件" in first
    assert records.startswith("消息：共 3001 条，已确认 3000")
    # the same numbers, the wall time aside
    strip = lambda text: re.sub(r"in \d+ ms,|用 \d+ ms", "", text)  # noqa: E731
    assert re.findall(r"\d+", strip(zh.output)) == re.findall(r"\d+", strip(en.output))
    assert json.loads(runner.invoke(cli, ["run", "isr-expansion", "--json", "--lang", "zh-CN"]).output)["acked"] == 3000


def test_an_invalid_scenario_in_chinese_with_its_english_field(runner, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"brokers": 0}))
    result = runner.invoke(cli, ["run", str(path)], env={**EN_ENV, "LC_ALL": "zh_CN.UTF-8"}, standalone_mode=False)
    assert result.return_value == 2             # isrlab's exit status (app.commandline.invoke)
    assert "错误：场景无效：brokers: 0 超出范围（允许：1 到 64 之间的整数）" in result.output
    result = runner.invoke(cli, ["run", "--bogus"], env=ZH_ENV)
    assert result.exit_code == 2 and "错误：没有选项 '--bogus'。" in result.output and "用 'cli run --help' 查看帮助。" in result.output


def test_import_cluster_errors_in_chinese(runner, tmp_path):
    path = tmp_path / "describe.txt"
    path.write_text("nothing a tool printed\n")
    result = runner.invoke(cli, ["import-cluster", str(path), "--kafka-version", "3.7"], env=ZH_ENV,
                           standalone_mode=False)
    assert result.return_value == 2 and result.output.startswith("错误：无法导入：describe"), result.output


def test_progress_stages_in_chinese_and_json_in_english():
    use_lang("zh-CN")
    try:
        stream = io.StringIO()
        Progress("bar", stream=stream)({"stage": "starting Spark"})
        assert stream.getvalue().strip() == "正在启动 Spark……"
        out = io.StringIO()
        Progress("json", stream=out)({"stage": "searching"})
        assert json.loads(out.getvalue()) == {"progress": {"stage": "searching"}}      # for scripts
    finally:
        use_lang("en")
    assert _("searching") == "searching"


def test_an_invalid_sweep_in_chinese(runner, tmp_path):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"id": "Bad Id!"}))
    result = runner.invoke(cli, ["sweep", str(path), "--lang", "zh-CN"], standalone_mode=False)
    assert result.return_value == 2
    assert result.output.strip() == ('错误：扫描无效：id: "Bad Id!" 不是扫描 id（允许：1 到 40 个字符，取自 a-z 0-9 -，'
                                     '以字母或数字开头）')
