"""Provenance in the built book (book/_ext/ldp_provenance.py).

- Unit: the build facts come from git (commit, uncommitted changes) and from
  ``SOURCE_DATE_EPOCH``; without git or a repository the commit is "unknown".
- The quick HTML book that ``make test`` builds: every page's footer names the
  repository of ``_config.yml``, the commit of this working tree, the build date and links
  the pinned ``requirements.txt`` (shipped in the built book, identical to the repository's);
  every chapter links its source notebook in ``notebooks/`` at that commit; every page has
  the repository button; ``build-info.json`` holds the same facts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
import yaml

from builds import require

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import ldp_provenance  # noqa: E402  (book/_ext/ldp_provenance.py)

HTML = ROOT / "_build" / "html"
REPO_URL = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
FOOTER = re.compile(r'<p class="ldp-provenance">(.*?)</p>', re.S)
HAS_GIT = shutil.which("git") is not None


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout.strip()


# --------------------------------------------------------------------------- #
# unit
# --------------------------------------------------------------------------- #
def test_outside_a_repository_the_commit_is_unknown(tmp_path: Path):
    info = ldp_provenance.collect(tmp_path, REPO_URL + "/", "main", environ={"SOURCE_DATE_EPOCH": "0"})
    assert info.commit is None and info.commit_label == "unknown" and info.short_commit == "unknown"
    assert info.repository_url == REPO_URL  # trailing slash dropped
    assert info.url("blob", "notebooks/x.ipynb") == f"{REPO_URL}/blob/main/notebooks/x.ipynb"
    assert info.built == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert info.version == "unknown"
    assert info.as_json()["commit"] == "unknown"


@pytest.mark.skipif(not HAS_GIT, reason="git not installed")
def test_commit_and_changes_come_from_git(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "9.9"\n')
    _git("add", "pyproject.toml", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x", cwd=repo)
    head = _git("rev-parse", "HEAD", cwd=repo)
    clean = ldp_provenance.collect(repo, REPO_URL, environ={"SOURCE_DATE_EPOCH": "1700000000"})
    assert (clean.commit, clean.dirty, clean.version) == (head, False, "9.9")
    assert clean.commit_label == head[:12]
    assert clean.url("tree") == f"{REPO_URL}/tree/{head}"
    assert clean.date_label == "2023-11-14 22:13 UTC"
    (repo / "new.txt").write_text("x")
    assert ldp_provenance.collect(repo, REPO_URL).commit_label == head[:12] + " + uncommitted changes"


def test_bad_source_date_epoch_falls_back_to_now():
    before = dt.datetime.now(tz=dt.UTC).replace(microsecond=0)
    assert ldp_provenance.build_date({"SOURCE_DATE_EPOCH": "yesterday"}) >= before


# --------------------------------------------------------------------------- #
# the built book
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    require(HTML / "index.html", "the HTML book")
    pages = {}
    for path in HTML.rglob("*.html"):
        name = path.relative_to(HTML)
        text = path.read_text(encoding="utf-8")
        # theme templates and the root index.html, which only redirects to the root page
        if name.parts[0] not in {"_static", "_sources", "_downloads", "_images"} and \
                'http-equiv="Refresh"' not in text[:300]:
            pages[name.as_posix()] = text
    assert "book/cite.html" in pages and len(pages) > 10, sorted(pages)
    return pages


@pytest.fixture(scope="module")
def build_info(pages) -> dict:
    return json.loads((HTML / "build-info.json").read_text(encoding="utf-8"))


def test_build_info_json(build_info: dict):
    assert build_info["repository"] == REPO_URL
    assert build_info["python"] == ".".join(map(str, sys.version_info[:3]))
    dt.datetime.fromisoformat(build_info["built"])
    if HAS_GIT:
        assert build_info["commit"] == _git("rev-parse", "HEAD")
    req = (ROOT / "requirements.txt").read_bytes()
    assert (HTML / "requirements.txt").read_bytes() == req
    assert build_info["environment_sha256"] == {"requirements.txt": hashlib.sha256(req).hexdigest()}


def test_every_page_has_the_provenance_footer(pages: dict[str, str], build_info: dict):
    commit = build_info["commit"]
    for name, text in pages.items():
        found = FOOTER.findall(text)
        assert len(found) == 1, f"{name}: {len(found)} provenance footers"
        footer = found[0]
        assert f'href="{REPO_URL}"' in footer, f"{name}: no repository link"
        assert f"<code>{commit[:12]}</code>" in footer, f"{name}: no commit"
        assert f'href="{REPO_URL}/tree/{commit}"' in footer, f"{name}: no commit link"
        assert build_info["built"][:10] in footer, f"{name}: no build date"
        env = re.search(r'href="([^"]*requirements\.txt)"', footer)
        assert env, f"{name}: no environment link"
        target = urlparse(urljoin(f"http://book/{name}", env.group(1))).path.lstrip("/")
        assert (HTML / target).resolve() == (HTML / "requirements.txt").resolve(), f"{name}: {env.group(1)}"


def test_chapters_link_their_source_notebook(pages: dict[str, str], build_info: dict):
    chapters = {n: t for n, t in pages.items() if n.startswith("_generated/notebooks/")}
    assert chapters, "no notebook chapters in the built book"
    for name, text in chapters.items():
        notebook = f"notebooks/{Path(name).stem}.ipynb"
        assert (ROOT / notebook).is_file(), notebook
        link = f'href="{REPO_URL}/blob/{build_info["commit"]}/{notebook}"'
        assert link in FOOTER.search(text).group(1), f"{name}: no link to its source {notebook}"
    page = FOOTER.search(pages["book/cite.html"]).group(1)
    assert f'/blob/{build_info["commit"]}/book/cite.md"' in page


def test_repository_button(pages: dict[str, str]):
    button = re.compile(r'<a href="' + re.escape(REPO_URL) + r'"[^>]*class="[^"]*btn-source-repository-button')
    for name, text in pages.items():
        assert button.search(text), f"{name}: no repository button"
