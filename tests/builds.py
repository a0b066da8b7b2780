"""What a test needs from a built book: the quick build, or a failure under CI and a visible skip elsewhere.

``make test`` builds the quick book and its PDF before the tests; a plain ``pytest`` may run without
them.  A test that reads a build calls :func:`require`: under ``CI=true`` a missing build is a
failure (CI must build it), elsewhere the test is skipped with the reason.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
QUICK = ROOT / "_generated" / "cache" / "quick"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Fail under CI, skip (visibly, with the reason) elsewhere."""
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def require(path: Path, what: str = "the quick book", how: str = "make book QUICK=1") -> Path:
    """``path`` if it exists; otherwise fail under CI and skip elsewhere, naming what to build."""
    if not Path(path).exists():
        unavailable(f"{what} is not built here ({path} is missing): run `{how}` (make test does)")
    return Path(path)
