"""The documentation in docs/ is the project's own and stays in step with the code.

* Every section the code cites (``§2.2``, ``§8.1b``, ``§15.2 item 9``) has a heading of that number
  in docs/model.md — or, when the citation says "scenario format §N", in docs/scenario-format.md.
* The README links each document, every relative link in the README and docs/ names a file of
  this repository, and no tracked file points at documentation outside the repository.

The collectors are plain functions so the last tests can show that they do find citations and
do report a missing section (a check that cannot fail is no check).
"""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MODEL = DOCS / "model.md"
SCENARIO_FORMAT = DOCS / "scenario-format.md"
THIS_FILE = pathlib.Path(__file__).resolve()

#: Where code cites sections (tests too: they cite the rule they pin).
CITING_DIRS = ("engine", "app", "static", "scripts", "tests")
SOURCE_SUFFIXES = {".py", ".js", ".html", ".css", ".sh", ".json"}
SKIP_PARTS = {"__pycache__", "vendor", "node_modules"}

#: ``§`` then a dotted number and an optional lower-case letter: §9, §2.2, §8.1b, §15.2.
CITATION = re.compile(r"§(\d+(?:\.\d+)*[a-z]?)")
#: A heading that starts with a section number (``## 9. Controller``, ``### 9.1 Controller ...``)
#: or a bold paragraph that does (``**8.1a — ...**``).
HEADING = re.compile(r"^(?:#{1,6}\s+|\*\*)(\d+(?:\.\d+)*[a-z]?)\.?(?=[\s*—:-])", re.M)
#: Text that says which document a citation refers to; the nearest one before it on the line wins.
SCENARIO_MARK = re.compile(r"scenario[ -]format", re.I)
MODEL_MARK = re.compile(r"reference|model\.md", re.I)

DOCUMENTS = ("docs/model.md", "docs/scenario-format.md", "docs/api.md", "docs/architecture.md",
             "docs/deploy.md", "docs/sweeps.md", "docs/performance.md", "docs/kafka-parity.md")
#: Spelled in two pieces so that this file does not match its own check.
OUTSIDE_POINTERS = ("shared" + "/docs", "../" + "shared")


def source_files(dirs=CITING_DIRS):
    for name in dirs:
        for path in sorted((ROOT / name).rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES and not SKIP_PARTS & set(path.parts) \
                    and path.resolve() != THIS_FILE:
                yield path


def citations_in(text):
    """[(line number, section, document)] for every § citation in ``text``; ``document`` is
    "scenario-format" when the nearest marker before it on its line names the scenario format,
    else "model"."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for match in CITATION.finditer(line):
            before = line[:match.start()]
            scen = [m.end() for m in SCENARIO_MARK.finditer(before)]
            model = [m.end() for m in MODEL_MARK.finditer(before)]
            doc = "scenario-format" if scen and (not model or scen[-1] > model[-1]) else "model"
            out.append((lineno, match.group(1), doc))
    return out


def collect_citations(files=None):
    """{(document, section): ["path:line", ...]} over the source files."""
    found = {}
    for path in (files if files is not None else source_files()):
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, section, doc in citations_in(text):
            where = f"{path.relative_to(ROOT)}:{lineno}"
            found.setdefault((doc, section), []).append(where)
    return found


def sections_of(markdown):
    """The section numbers a markdown text has headings for."""
    return set(HEADING.findall(markdown))


def missing_sections(citations, documents):
    """The citations whose section has no heading: ["§N (document) cited at path:line, ..."]."""
    missing = []
    for (doc, section), places in sorted(citations.items()):
        if section not in documents[doc]:
            shown = ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3 else "")
            missing.append(f"§{section} ({doc}) cited at {shown}")
    return missing


def documents():
    return {"model": sections_of(MODEL.read_text(encoding="utf-8")),
            "scenario-format": sections_of(SCENARIO_FORMAT.read_text(encoding="utf-8"))}


def tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        names = [n for n in out.stdout.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not {".git", ".venv", "instance", "__pycache__"} & set(p.relative_to(ROOT).parts)]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


# -- the checks -----------------------------------------------------------------------------------------
def test_every_cited_section_has_a_heading():
    missing = missing_sections(collect_citations(), documents())
    for line in missing:
        print("missing:", line)
    assert missing == [], "sections cited in the code without a heading:\n" + "\n".join(missing)


def test_the_model_keeps_the_numbering_the_code_uses():
    model = documents()["model"]
    for section in ("0", "1.1", "1.2", "1.3", "1.4", "2.1", "2.2", "2.3", "3", "4.2", "5.1", "5.2", "5.3",
                    "6", "7", "8.1", "8.1a", "8.1b", "8.1c", "8.2", "8.3", "8.4", "8.5", "9.1", "9.9", "10",
                    "12", "13", "15.2", "15.3", "16"):
        assert section in model, section
    text = MODEL.read_text(encoding="utf-8")
    assert re.search(r"^## 16\. Simplifications", text, re.M)
    for era in ('"0.10"', '"1.1"', '"2.0"', '"2.0.1"', '"2.4"', '"2.6"'):
        assert era in text, era


def test_the_readme_links_every_document():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in DOCUMENTS:
        assert f"]({doc})" in readme, f"README.md does not link {doc}"


def test_relative_links_stay_inside_the_repository():
    bad = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue                              # http(s):, mailto:, in-page anchors
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if ROOT not in path.parents or not path.exists():
                bad.append(f"{page.relative_to(ROOT)} -> {target}")
    assert bad == []


def test_no_tracked_file_points_outside_the_repository():
    offenders = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue                                  # binary files (the screenshot)
        for pointer in OUTSIDE_POINTERS:
            if pointer in text:
                offenders.append(f"{path.relative_to(ROOT)} mentions {pointer}")
    assert offenders == []


# -- the checks can fail ----------------------------------------------------------------------------------
def test_the_collector_finds_citations_the_code_makes():
    found = collect_citations([ROOT / "engine" / "server" / "partition.py", ROOT / "engine" / "result.py"])
    assert ("model", "2.2") in found
    assert ("model", "8.1b") in found
    assert ("scenario-format", "5") in found             # "The run result document (scenario format §5)"
    assert any(place.startswith("engine/server/partition.py:") for place in found[("model", "2.2")])


def test_a_citation_without_a_section_is_reported():
    fake = {("model", "99.9"): ["engine/nowhere.py:1"], ("model", "2.2"): ["engine/server/partition.py:35"],
            ("scenario-format", "9"): ["engine/nowhere.py:2"]}
    missing = missing_sections(fake, documents())
    assert missing == ["§99.9 (model) cited at engine/nowhere.py:1",
                       "§9 (scenario-format) cited at engine/nowhere.py:2"]


def test_citations_are_read_with_their_letter_and_document():
    text = ('"""§8.1b (0.11-1.1): see §15.2 item 9 and §9.2-9.4."""\n'
            "Names follow the scenario format §5; background in the reference §13 and §15.3.\n"
            "(docs: scenario format §1-§3)\n")
    assert citations_in(text) == [(1, "8.1b", "model"), (1, "15.2", "model"), (1, "9.2", "model"),
                                  (2, "5", "scenario-format"), (2, "13", "model"), (2, "15.3", "model"),
                                  (3, "1", "scenario-format"), (3, "3", "scenario-format")]
    assert sections_of("## 9. Controller\n### 9.1 Controller election\n**8.1a — to the HW.**\n") == \
        {"9", "9.1", "8.1a"}
