"""CITATION.cff: valid, complete, and in agreement with the package, the book and its cite page.

- ``cffconvert --validate`` accepts it (cffconvert lives in its own venv ``.venv-cff``,
  made by ``make test``; see requirements-cff.txt), and cffconvert's own BibTeX export
  has a year and the repository address;
- its ``repository-code`` is ``repository.url`` of ``_config.yml`` (the book's repository
  button and footer), its version is ``pyproject.toml``'s;
- ``preferred-citation`` is this package (software, with the project's author entity) and
  ``references`` holds the original paper;
- the BibTeX that book/_ext/ldp_citation.py generates from it parses, with real keys and
  years, and the built cite page shows exactly that BibTeX.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pybtex.database
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import ldp_citation  # noqa: E402  (book/_ext/ldp_citation.py)

CFF_FILE = ROOT / "CITATION.cff"
CFFCONVERT = Path(os.environ.get("LDP_CFFCONVERT", ROOT / ".venv-cff" / "bin" / "cffconvert"))
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
ENTITY = "The ldp reproduction authors"
# the keys book/cite.md gives the entries (:key: of its {cff-bibtex} directives)
CITE_PAGE_ENTRIES = {"references/0": "wang2019pem", "preferred-citation": "ldp_reproduction"}


@pytest.fixture(scope="module")
def cff() -> dict:
    return ldp_citation.load_cff(CFF_FILE)


def _cffconvert(*args: str) -> subprocess.CompletedProcess:
    if not CFFCONVERT.is_file():
        reason = f"{CFFCONVERT} missing: `make test` (or `make citation`) creates .venv-cff"
        if IN_CI:
            pytest.fail(reason)
        pytest.skip(reason)
    return subprocess.run([str(CFFCONVERT), "--infile", str(CFF_FILE), *args],
                          capture_output=True, text=True, timeout=120)


def test_cffconvert_validates():
    proc = _cffconvert("--validate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "valid" in proc.stdout.lower()


def test_cffconvert_bibtex_has_year_and_repository(cff: dict):
    proc = _cffconvert("-f", "bibtex")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"year = \{" + cff["date-released"][:4] + r"\}", proc.stdout), proc.stdout
    assert "url = {" + cff["repository-code"] + "}" in proc.stdout, proc.stdout


def test_repository_url_is_the_books(cff: dict):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"]
    assert re.match(r"^https://\S+[^/]$", url), f"_config.yml repository.url: {url!r}"
    assert config["html"]["use_repository_button"] is True
    assert cff["repository-code"] == url
    assert cff["preferred-citation"]["repository-code"] == url
    assert cff["preferred-citation"]["url"] == url


def test_version_and_date_agree(cff: dict):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pref = cff["preferred-citation"]
    assert cff["version"] == pref["version"] == project["version"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cff["date-released"]), cff["date-released"]
    assert pref["date-released"] == cff["date-released"]
    assert pref["year"] == cff["date-released"][:4]
    assert cff["license"] == pref["license"] == project["license"]


def test_preferred_citation_is_this_package(cff: dict):
    pref = cff["preferred-citation"]
    assert cff["type"] == pref["type"] == "software"
    assert pref["title"] == cff["title"]
    assert cff["authors"] == pref["authors"] == [{"name": ENTITY}]


def test_references_hold_the_paper(cff: dict):
    (paper,) = [r for r in cff["references"] if r["type"] == "article"]
    assert paper["title"] == "Locally Differentially Private Heavy Hitter Identification"
    assert [a["family-names"] for a in paper["authors"]] == ["Wang", "Li", "Jha"]
    assert paper["journal"] == "IEEE Transactions on Dependable and Secure Computing"
    assert paper["year"] == "2019"
    assert {"type": "other", "value": "arXiv:1708.06674", "description": "arXiv preprint"} in paper["identifiers"]


@pytest.mark.parametrize("where", sorted(CITE_PAGE_ENTRIES))
def test_generated_bibtex_parses(cff: dict, where: str):
    key = CITE_PAGE_ENTRIES[where]
    entry = ldp_citation.select(cff, where)
    data = pybtex.database.parse_string(ldp_citation.bibtex(entry, key), "bibtex")
    (parsed,) = data.entries.values()
    assert parsed.key == key
    assert parsed.fields["title"] == entry["title"]
    assert parsed.fields["year"] == ldp_citation.year_of(entry)
    authors = [str(p) for p in parsed.persons["author"]]
    if where == "preferred-citation":
        assert parsed.type == "software"
        assert authors == ["{" + ENTITY + "}"]  # one entity, not five names
        assert parsed.fields["version"] == cff["version"]
        assert parsed.fields["url"] == cff["repository-code"]
    else:
        assert parsed.type == "article"
        assert authors == ["Wang, Tianhao", "Li, Ninghui", "Jha, Somesh"]
        assert parsed.fields["eprint"] == "1708.06674"
        assert parsed.fields["archiveprefix"] == "arXiv"


def test_bibtex_converter_rejects_what_it_cannot_write():
    paper = {"type": "article", "title": "T", "authors": [{"family-names": "A"}]}
    with pytest.raises(ldp_citation.CitationError, match="no year"):
        ldp_citation.bibtex(paper, "a")
    with pytest.raises(ldp_citation.CitationError, match="not supported"):
        ldp_citation.bibtex(paper | {"type": "hearing", "year": "2020"}, "a")
    with pytest.raises(ldp_citation.CitationError, match="key"):
        ldp_citation.bibtex(paper | {"year": "2020"}, "YourReference Here")
    with pytest.raises(ldp_citation.CitationError, match="no entry"):
        ldp_citation.select({"references": []}, "references/0")
    text = ldp_citation.bibtex(paper | {"year": "2020", "title": "50% of A & B"}, "a")
    assert r"title  = {50\% of A \& B}" in text


def test_cite_page_shows_the_generated_bibtex(cff: dict):
    page = ROOT / "_build" / "html" / "book" / "cite.html"
    if not page.is_file():
        reason = f"no built cite page {page}: run `make book QUICK=1` (make test does)"
        if IN_CI:
            pytest.fail(reason)
        pytest.skip(reason)
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
    for where, key in CITE_PAGE_ENTRIES.items():
        expected = ldp_citation.bibtex(ldp_citation.select(cff, where), key)
        assert expected in text, f"cite page lacks the BibTeX of {where}:\n{expected}"
    assert "YourReferenceHere" not in text
