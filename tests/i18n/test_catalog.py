"""The zh_CN catalog against the code: extraction run here (the same pybabel extraction as
scripts/i18n.sh, over app/, templates/ and static/js/ per babel.cfg) must find exactly the msgids
of translations/zh_CN/LC_MESSAGES/messages.po, each translated, with the same placeholders."""
import pathlib
import re

import pytest
from babel.messages.frontend import CommandLineInterface
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROOT = pathlib.Path(__file__).resolve().parents[2]
PO = ROOT / "translations" / "zh_CN" / "LC_MESSAGES" / "messages.po"
KEYWORDS = ["N_", "t", "tr"]          # besides pybabel's defaults (_, gettext, ngettext...)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    out = tmp_path_factory.mktemp("i18n") / "messages.pot"
    args = ["pybabel", "-q", "extract", "-F", str(ROOT / "babel.cfg"), "-o", str(out), "--no-wrap"]
    for k in KEYWORDS:
        args += ["-k", k]
    import os
    here = os.getcwd()
    os.chdir(ROOT)                      # the locations babel.cfg's patterns match are relative
    try:
        CommandLineInterface().run(args + ["."])
    finally:
        os.chdir(here)
    with open(out, "rb") as f:
        return read_po(f)


@pytest.fixture(scope="module")
def catalog():
    with open(PO, "rb") as f:
        return read_po(f, locale="zh_CN")


def ids(cat):
    return {m.id for m in cat if m.id}


def test_extraction_finds_the_live_pages_strings(extracted):
    found = ids(extracted)
    # one msgid from each place words come from: a template, a JS module, Python (errors, era notes)
    for msgid in ("What to watch", "Jump to cause", "Step to the next event", "%(value)s is out of range",
                  "ISR via ZooKeeper", "Save run", "Create cluster"):
        assert msgid in found, msgid
    assert len(found) > 450
    sources = {loc[0].split("/")[0] for m in extracted for loc in m.locations}
    assert sources == {"app", "engine", "static", "templates"}      # engine: the library's stories


def test_every_extracted_msgid_is_in_the_catalog(extracted, catalog):
    missing = sorted(ids(extracted) - ids(catalog))
    assert not missing, f"{len(missing)} msgid(s) not in {PO.name}: run scripts/i18n.sh update, then translate: {missing[:10]}"


def test_no_stale_entries(extracted, catalog):
    stale = sorted(ids(catalog) - ids(extracted))
    assert not stale, f"{len(stale)} entries the code no longer uses (scripts/i18n.sh update drops them): {stale[:10]}"
    assert not list(catalog.obsolete), "obsolete (#~) entries left in the catalog"


#: the words a Chinese msgstr may keep in Latin letters alone: Kafka's names, as the seed articles write them
KAFKA_WORDS = {"KIP", "AlterIsr", "AlterPartition", "KRaft", "ELR", "Broker", "id", "leader", "epoch",
               "acks", "all", "offset", "Quorum", "A", "B"}


def test_every_msgid_has_a_chinese_msgstr(catalog):
    empty = [m.id for m in catalog if m.id and not (m.string or "").strip()]
    fuzzy = [m.id for m in catalog if m.id and m.fuzzy]
    assert not empty, f"{len(empty)} untranslated: {empty[:10]}"
    assert not fuzzy, f"fuzzy entries (not compiled, so shown in English): {fuzzy[:10]}"
    # the words are Chinese: a msgstr without Chinese may only be made of Kafka's own names
    # (KIP-279, AlterIsr, Broker, offset), placeholders and punctuation
    han = re.compile(r"[\u4e00-\u9fff]")
    placeholder = re.compile(r"\{\w+\}|%\(\w+\)s")
    latin_only = [m for m in catalog if m.id and not han.search(m.string)]
    not_kafka = [(m.id, m.string) for m in latin_only
                 if set(re.findall(r"[A-Za-z]+", placeholder.sub("", m.string))) - KAFKA_WORDS]
    assert not not_kafka, not_kafka


SLOTS = [re.compile(r"\{(\w+)\}"), re.compile(r"%\((\w+)\)s"), re.compile(r"</?(\w+)[^>]*>")]


def test_translations_keep_every_placeholder_and_tag(catalog):
    wrong = []
    for m in catalog:
        if not m.id:
            continue
        for slot in SLOTS:
            if sorted(slot.findall(m.id)) != sorted(slot.findall(m.string)):
                wrong.append((m.id, m.string))
    assert not wrong, wrong[:5]
    # a literal % in a template's msgid is %% (Jinja formats every string): the same in Chinese
    assert all(m.string.count("%%") == m.id.count("%%") for m in catalog if m.id)


def test_kafka_names_stay_as_kafka_writes_them(catalog):
    """Config keys, request and error names, ISR/HW/LEO and znode paths are not translated."""
    names = re.compile(r"[a-z]+(?:\.[a-z]+){2,}|[A-Z][A-Z_]{3,}[A-Z]|\b(?:ISR|HW|LEO)\b|(?<!\w)/[a-z_]{3,}(?:/[a-z_]+)*|"
                       r"\b(?:LeaderAndIsr|UpdateMetadata|AlterIsr|AlterPartition|OffsetsForLeaderEpoch)\b")
    changed = [(m.id, n) for m in catalog if m.id for n in set(names.findall(m.id)) if n not in m.string]
    assert not changed, changed[:10]


def test_the_catalog_compiles(catalog, tmp_path):
    with open(tmp_path / "messages.mo", "wb") as f:
        write_mo(f, catalog)
    assert (tmp_path / "messages.mo").stat().st_size > 10_000


def test_the_scripts_extract_with_the_same_keywords():
    script = (ROOT / "scripts" / "i18n.sh").read_text()
    assert " ".join(f"-k {k}" for k in KEYWORDS) in script
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert "scripts/i18n.sh compile" in setup and "fonts-wqy-zenhei" in setup
    assert "*.mo" in (ROOT / ".gitignore").read_text()


def test_no_msgid_is_built_at_run_time():
    """t() takes a string literal: pybabel cannot see t(`…${x}`) or t(name), so they would never
    be translated."""
    bad = []
    for path in (ROOT / "static" / "js").rglob("*.js"):
        if path.name == "i18n.js":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r'(?<![\w.$])tr?\((?!")', line):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not bad, bad
