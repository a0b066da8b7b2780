"""Publishing: the GitHub workflows, the release check and the changelog.

- ``.github/workflows/``: CI runs ``.ci/run``; Pages builds the paper-scale book on the default
  branch (``repository.branch`` of ``_config.yml``) and deploys ``_build/html``; Release builds
  and checks the sdist and wheel (``make dist``) and publishes a GitHub release on a tag. Every
  action is pinned by commit, and the files pass GitHub's workflow schema and zizmor offline (as
  in ``make lint``).
- ``scripts/release_check.py`` finds a version that disagrees between the files that state it,
  a tag that names another version and release files that are not this version's.
- ``CHANGELOG.md`` keeps the Keep-a-Changelog form: an *Unreleased* section first, then dated
  releases newest first, each with its comparison link.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
VENV_BIN = ROOT / ".venv" / "bin"
_spec = importlib.util.spec_from_file_location("release_check", ROOT / "scripts" / "release_check.py")
release_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_check)


def workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def _on(flow: dict) -> dict:
    return flow.get("on", flow.get(True))  # YAML 1.1 reads the key `on` as True


def _steps(flow: dict) -> list[dict]:
    return [step for job in flow["jobs"].values() for step in job.get("steps", [])]


# --------------------------------------------------------------------------- #
# the workflows
# --------------------------------------------------------------------------- #
def test_the_three_workflows_exist():
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == ["ci.yml", "pages.yml", "release.yml"]


@pytest.mark.parametrize("tool", ["check-jsonschema", "zizmor"])
def test_workflows_pass_the_offline_checks(tool: str):
    exe = VENV_BIN / tool
    if not exe.is_file():
        pytest.fail(f"{exe} missing: `make setup` installs it (requirements.txt)")
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    cmd = ([str(exe), "--builtin-schema", "vendor.github-workflows", *files] if tool == "check-jsonschema"
           else [str(exe), "--offline", "--no-progress", str(WORKFLOWS)])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_action_is_pinned_by_commit():
    for path in WORKFLOWS.glob("*.yml"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.match(r"\s*(- )?uses:", line):
                assert re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$", line), \
                    f"{path.name}: not pinned by commit with its version: {line.strip()}"


def test_ci_runs_the_ci_script():
    flow = workflow("ci.yml")
    assert set(_on(flow)) == {"push", "pull_request", "workflow_dispatch"}
    assert flow["permissions"] == {"contents": "read"}
    assert any(step.get("run") == "bash .ci/run" for step in _steps(flow))


def test_pages_publish_the_paper_scale_book_from_the_default_branch():
    flow = workflow("pages.yml")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert _on(flow)["push"]["branches"] == [config["repository"]["branch"]]
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    runs = [step.get("run", "") for step in build["steps"]]
    assert "make book" in runs  # the paper's settings: no QUICK=1
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert flow["permissions"] == {"contents": "read"}


def test_release_builds_checks_and_publishes_on_a_tag():
    flow = workflow("release.yml")
    assert _on(flow)["push"]["tags"] == ["v*"]
    dist, release = flow["jobs"]["dist"], flow["jobs"]["github-release"]
    runs = [step.get("run", "") for step in dist["steps"]]
    assert "make dist" in runs
    assert any("scripts/release_check.py --tag" in run for run in runs)
    assert release["needs"] == "dist" and release["permissions"] == {"contents": "write"}
    assert "gh release create" in release["steps"][-1]["run"]
    assert "--notes" in release["steps"][-1]["run"]


def test_make_dist_is_what_the_release_runs():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^dist: .*?\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "-m build" in recipe and "twine check --strict" in recipe and "release_check.py --dist" in recipe


# --------------------------------------------------------------------------- #
# the release check
# --------------------------------------------------------------------------- #
def _copy_release_files(dest: Path) -> Path:
    for name in ("pyproject.toml", "CITATION.cff", ".zenodo.json", "CHANGELOG.md", "ldp/__init__.py"):
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, dest / name)
    return dest


def test_versions_agree_here():
    version = release_check.check_versions()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    release_check.check_tag(f"v{version}", version)
    with pytest.raises(release_check.ReleaseError, match="does not name"):
        release_check.check_tag(version, version)


def test_a_disagreeing_version_or_date_is_caught(tmp_path):
    root = _copy_release_files(tmp_path)
    zenodo = json.loads((root / ".zenodo.json").read_text())
    (root / ".zenodo.json").write_text(json.dumps(zenodo | {"version": "9.9.9"}))
    with pytest.raises(release_check.ReleaseError, match=r"\.zenodo\.json: '9\.9\.9'"):
        release_check.check_versions(root)
    (root / ".zenodo.json").write_text(json.dumps(zenodo | {"publication_date": "1999-01-01"}))
    with pytest.raises(release_check.ReleaseError, match="dates disagree"):
        release_check.check_versions(root)


def test_release_notes_are_the_changelog_section():
    version = release_check.check_versions()
    proc = subprocess.run([str(VENV_BIN / "python"), str(ROOT / "scripts" / "release_check.py"), "--notes"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == release_check.changelog_section(version)
    assert "### Added" in proc.stdout and "## [" not in proc.stdout


def _fake_dist(folder: Path, version: str, *, name: str = "ldp-heavy-hitters") -> None:
    stem = f"ldp_heavy_hitters-{version}"
    folder.mkdir()
    with zipfile.ZipFile(folder / f"{stem}-py3-none-any.whl", "w") as wheel:
        wheel.writestr("ldp/__init__.py", "")
        wheel.writestr(f"{stem}.dist-info/METADATA", f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n")
    with tarfile.open(folder / f"{stem}.tar.gz", "w:gz") as sdist:
        for member in ("pyproject.toml", "README.md", "LICENSE", "ldp/__init__.py"):
            info = tarfile.TarInfo(f"{stem}/{member}")
            sdist.addfile(info, io.BytesIO(b""))


def test_release_files_are_checked(tmp_path):
    _fake_dist(tmp_path / "good", "1.2.3")
    assert len(release_check.check_dist(tmp_path / "good", "1.2.3")) == 2
    with pytest.raises(release_check.ReleaseError, match="expected"):
        release_check.check_dist(tmp_path / "good", "1.2.4")
    _fake_dist(tmp_path / "renamed", "1.2.3", name="ldp")
    with pytest.raises(release_check.ReleaseError, match="METADATA"):
        release_check.check_dist(tmp_path / "renamed", "1.2.3")


# --------------------------------------------------------------------------- #
# the changelog
# --------------------------------------------------------------------------- #
def test_changelog_keeps_its_form():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\](.*)$", text, re.M)
    assert headings[0] == ("Unreleased", ""), "the first section is ## [Unreleased]"
    releases = release_check.changelog_releases()
    assert [h[0] for h in headings[1:]] == [v for v, _ in releases], "every release heading is ## [X.Y.Z] - date"
    assert [v for v, _ in releases] == sorted((v for v, _ in releases),
                                              key=lambda v: tuple(map(int, v.split("."))), reverse=True)
    assert [d for _, d in releases] == sorted((d for _, d in releases), reverse=True)
    assert releases[-1][0] == "0.1.0"
    for version in ["Unreleased", *(v for v, _ in releases)]:
        assert re.search(rf"^\[{re.escape(version)}\]: https://\S+$", text, re.M), f"no link for [{version}]"
    for version, _ in releases:
        assert re.search(r"^### (Added|Changed|Fixed|Removed|Deprecated|Security)$",
                         release_check.changelog_section(version), re.M)
