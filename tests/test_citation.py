"""CITATION.cff: valid, complete, and in agreement with the package, the book and its cite page.

- ``cffconvert --validate`` accepts it (cffconvert lives in its own venv ``.venv-cff``,
  made by ``make test``; see requirements-cff.txt), and cffconvert's own BibTeX export
  has a year and the repository address;
- its ``repository-code`` is ``repository.url`` of ``_config.yml`` (the book's repository
  button and footer); its version is the one of ``pyproject.toml``, ``ldp.__version__``,
  ``.zenodo.json`` and the newest release of ``CHANGELOG.md`` (scripts/release_check.py);
- ``preferred-citation`` is this package (software, with the project's author entity) and
  ``references`` holds the original paper (only the fields checked against a source) and the
  AOL data set;
- ``.zenodo.json`` (Zenodo's metadata for a DOI on release) says what CITATION.cff says;
- the BibTeX that book/_ext/ldp_citation.py generates from it parses, with real keys and
  years, the entry of "this copy" carries the build's version and commit, and the built cite
  page shows exactly that BibTeX.
"""

from __future__ import annotations

import datetime as dt
import html
import importlib.util
import json
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
CITE_PAGE_ENTRIES = {"references/0": "wang2021pem", "preferred-citation": "ldp_reproduction",
                     "references/1": "aol_query_tally"}
_spec = importlib.util.spec_from_file_location("release_check", ROOT / "scripts" / "release_check.py")
release_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_check)


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
    import ldp

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pref = cff["preferred-citation"]
    assert cff["version"] == pref["version"] == project["version"] == ldp.__version__
    assert release_check.check_versions(ROOT) == project["version"]  # + .zenodo.json, CHANGELOG.md
    assert release_check.changelog_releases(ROOT)[0] == (project["version"], cff["date-released"])
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
    assert (paper["volume"], paper["year"]) == ("18", "2021")  # the volume's table of contents
    assert {"type": "other", "value": "arXiv:1708.06674", "description": "arXiv preprint"} in paper["identifiers"]
    # only fields checked against a source: no DOI, issue or pages (see the comment in CITATION.cff)
    assert set(paper) == {"type", "title", "authors", "journal", "volume", "year", "identifiers", "url"}


def test_references_hold_the_aol_data(cff: dict):
    from ldp import datasets

    (data,) = [r for r in cff["references"] if r["type"] == "data"]
    assert data["url"] == datasets.AOL_URL
    assert datasets.AOL_SHA256 in data["notes"]
    assert data["license"] == "MIT"
    licence = (ROOT / "data" / "LICENSE-AOL.txt").read_text(encoding="utf-8")
    holder = data["authors"][0]["name"]
    assert re.search(rf"Copyright \(c\) {data['year']} {holder}", licence, re.I), "author and year: the licence's"


def test_zenodo_metadata_says_what_citation_says(cff: dict):
    zenodo = json.loads((ROOT / ".zenodo.json").read_text(encoding="utf-8"))
    assert zenodo["title"] == cff["title"]
    assert zenodo["upload_type"] == "software"
    assert zenodo["version"] == cff["version"]
    assert zenodo["publication_date"] == cff["date-released"]
    assert [c["name"] for c in zenodo["creators"]] == [a["name"] for a in cff["authors"]]
    assert zenodo["license"] == cff["license"]
    assert zenodo["keywords"] == cff["keywords"]
    related = {r["identifier"]: r["relation"] for r in zenodo["related_identifiers"]}
    assert related["arXiv:1708.06674"] == "references"
    assert "github.io" in next(i for i, rel in related.items() if rel == "isDocumentedBy")


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
    if where == "references/1":
        assert parsed.type == "dataset"
        assert authors == ["{VVV214}"]
        assert parsed.fields["url"] == entry["url"]
    elif where == "preferred-citation":
        assert parsed.type == "software"
        assert authors == ["{" + ENTITY + "}"]  # one entity, not five names
        assert parsed.fields["version"] == cff["version"]
        assert parsed.fields["url"] == cff["repository-code"]
    else:
        assert parsed.type == "article"
        assert authors == ["Wang, Tianhao", "Li, Ninghui", "Jha, Somesh"]
        assert parsed.fields["eprint"] == "1708.06674"
        assert parsed.fields["archiveprefix"] == "arXiv"
        assert (parsed.fields["journal"], parsed.fields["volume"]) == (
            "IEEE Transactions on Dependable and Secure Computing", "18")


class _Info:
    """What ldp_provenance.BuildInfo offers ldp_citation.this_copy."""

    repository_url = "https://github.com/example/repo"
    version = "9.8.7"
    built = dt.datetime(2031, 5, 4, 12, 0, tzinfo=dt.UTC)

    def __init__(self, commit, dirty=False):
        self.commit, self.dirty = commit, dirty

    def url(self, kind):
        return f"{self.repository_url}/{kind}/{self.commit}"


def test_this_copy_names_version_commit_and_date(cff: dict):
    sha = "0123456789abcdef0123456789abcdef01234567"
    entry = ldp_citation.this_copy(ldp_citation.select(cff, "preferred-citation"), _Info(sha))
    (parsed,) = pybtex.database.parse_string(ldp_citation.bibtex(entry, "copy"), "bibtex").entries.values()
    assert parsed.fields["version"] == "9.8.7" and parsed.fields["year"] == "2031"
    assert parsed.fields["note"] == f"Version 9.8.7, commit {sha}, built 2031-05-04"
    assert parsed.fields["url"] == f"https://github.com/example/repo/tree/{sha}"
    dirty = ldp_citation.this_copy(ldp_citation.select(cff, "preferred-citation"), _Info(sha, dirty=True))
    assert "with uncommitted changes" in dirty["notes"]
    unknown = ldp_citation.this_copy(ldp_citation.select(cff, "preferred-citation"), _Info(None))
    assert "commit unknown" in unknown["notes"] and unknown["url"] == cff["preferred-citation"]["url"]


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
    # this copy: the commit and version of the build (build-info.json, written by the same build)
    info = json.loads((page.parents[1] / "build-info.json").read_text(encoding="utf-8"))
    copy = re.search(r"@software\{ldp_this_copy,.*?\n\}", text, re.S)
    assert copy, "cite page lacks the BibTeX of this copy (key ldp_this_copy)"
    assert f"version = {{{info['version']}}}" in re.sub(r" +", " ", copy.group(0))
    assert f"commit {info['commit']}" in copy.group(0)
    if info["commit"] != "unknown":
        assert f"{cff['repository-code']}/tree/{info['commit']}" in copy.group(0)
