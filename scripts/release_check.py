"""Is this checkout a consistent release? Versions, CHANGELOG section, built files.

The version is written in five places, which must agree: ``pyproject.toml``
(``project.version``), ``ldp/__init__.py`` (``__version__``), ``CITATION.cff`` (``version``
and ``preferred-citation.version``), ``.zenodo.json`` (``version``) and the newest release
heading of ``CHANGELOG.md`` (``## [X.Y.Z] - YYYY-MM-DD``, whose date is also
``date-released`` in CITATION.cff and ``publication_date`` in .zenodo.json).

    python scripts/release_check.py                 # the versions agree (exit 1 if not)
    python scripts/release_check.py --tag v0.2.0    # ... and the tag names that version
    python scripts/release_check.py --notes         # print the CHANGELOG section of the version
    python scripts/release_check.py --dist dist     # ... and dist/ holds its sdist and wheel, named
                                                    # ldp_heavy_hitters-X.Y.Z, with the package in them

Standard library only: it runs in ``.venv-release`` (make dist) and in the release workflow.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "ldp-heavy-hitters"
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$", re.M)
SECTION = re.compile(r"^## \[", re.M)


class ReleaseError(ValueError):
    """The checkout or the built files are not a consistent release."""


def changelog_releases(root: Path = ROOT) -> list[tuple[str, str]]:
    """``(version, date)`` of every release heading of CHANGELOG.md, newest first."""
    return RELEASE.findall((root / "CHANGELOG.md").read_text(encoding="utf-8"))


def changelog_section(version: str, root: Path = ROOT) -> str:
    """The text under ``## [version] - date``, up to the next ``## [`` heading."""
    text = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    match = re.search(rf"^## \[{re.escape(version)}\] - .*$", text, re.M)
    if not match:
        raise ReleaseError(f"CHANGELOG.md has no section ## [{version}] - DATE")
    rest = text[match.end():]
    end = SECTION.search(rest)
    return (rest[:end.start()] if end else rest).strip()


def versions(root: Path = ROOT) -> dict[str, str]:
    """Where the version is written -> what is written there (and the release dates)."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    init = (root / "ldp" / "__init__.py").read_text(encoding="utf-8")
    cff = (root / "CITATION.cff").read_text(encoding="utf-8")
    zenodo = json.loads((root / ".zenodo.json").read_text(encoding="utf-8"))
    releases = changelog_releases(root)
    init_version = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    cff_versions = re.findall(r"^\s*version: ['\"]?([^'\"\s]+)", cff, re.M)
    cff_dates = re.findall(r"^\s*date-released: ['\"]?([0-9-]+)", cff, re.M)
    found = {
        "pyproject.toml": project["version"],
        "ldp/__init__.py": init_version.group(1) if init_version else "",
        ".zenodo.json": zenodo.get("version", ""),
        "CHANGELOG.md": releases[0][0] if releases else "",
    }
    for i, version in enumerate(cff_versions):
        found[f"CITATION.cff version #{i + 1}"] = version
    dates = {"CHANGELOG.md date": releases[0][1] if releases else "",
             ".zenodo.json publication_date": zenodo.get("publication_date", "")}
    for i, date in enumerate(cff_dates):
        dates[f"CITATION.cff date-released #{i + 1}"] = date
    return found | dates


def check_versions(root: Path = ROOT) -> str:
    """The version, if all five places agree (and the dates too); else :class:`ReleaseError`."""
    found = versions(root)
    numbers = {k: v for k, v in found.items() if "date" not in k}
    dates = {k: v for k, v in found.items() if "date" in k}
    if len(numbers) < 6 or len(set(numbers.values())) != 1:
        raise ReleaseError("the versions disagree: " + ", ".join(f"{k}: {v!r}" for k, v in numbers.items()))
    if len(dates) < 4 or len(set(dates.values())) != 1:
        raise ReleaseError("the release dates disagree: " + ", ".join(f"{k}: {v!r}" for k, v in dates.items()))
    return next(iter(numbers.values()))


def check_tag(tag: str, version: str) -> None:
    if tag != f"v{version}":
        raise ReleaseError(f"the tag {tag!r} does not name version {version} (expected v{version})")


def check_dist(folder: Path, version: str) -> list[Path]:
    """``folder`` holds exactly this version's sdist and wheel, with the package and its metadata."""
    stem = f"{DISTRIBUTION.replace('-', '_')}-{version}"
    files = sorted(p for p in folder.iterdir() if p.is_file())
    expected = {f"{stem}.tar.gz", f"{stem}-py3-none-any.whl"}
    if {p.name for p in files} != expected:
        raise ReleaseError(f"{folder} holds {[p.name for p in files]}, expected {sorted(expected)}")
    with zipfile.ZipFile(folder / f"{stem}-py3-none-any.whl") as wheel:
        names = wheel.namelist()
        metadata = wheel.read(f"{stem}.dist-info/METADATA").decode()
    if "ldp/__init__.py" not in names or any(n.startswith(("tests/", "notebooks/")) for n in names):
        raise ReleaseError("the wheel must hold the package ldp/ and nothing of tests/ or notebooks/")
    if f"Name: {DISTRIBUTION}\n" not in metadata or f"Version: {version}\n" not in metadata:
        raise ReleaseError(f"the wheel's METADATA does not name {DISTRIBUTION} {version}")
    with tarfile.open(folder / f"{stem}.tar.gz") as sdist:
        members = sdist.getnames()
    for needed in ("pyproject.toml", "README.md", "LICENSE", "ldp/__init__.py"):
        if f"{stem}/{needed}" not in members:
            raise ReleaseError(f"the sdist lacks {needed}")
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", help="the release tag, vX.Y.Z")
    parser.add_argument("--notes", action="store_true", help="print the CHANGELOG section of the version")
    parser.add_argument("--dist", type=Path, help="folder with the built sdist and wheel")
    args = parser.parse_args(argv)
    try:
        version = check_versions()
        if args.tag:
            check_tag(args.tag, version)
        if args.dist:
            files = check_dist(args.dist, version)
            print(f"[release] {', '.join(p.name for p in files)}: {DISTRIBUTION} {version}", file=sys.stderr)
    except (ReleaseError, OSError, KeyError) as exc:
        print(f"release check: {exc}", file=sys.stderr)
        return 1
    if args.notes:
        print(changelog_section(version))
    else:
        print(f"[release] version {version} agrees in pyproject.toml, ldp/__init__.py, CITATION.cff, "
              ".zenodo.json and CHANGELOG.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
