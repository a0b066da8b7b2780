"""The artifact appendix (ldp.book.artifact): every claim with its command and time, the LaTeX document."""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ldp.book import artifact as A
from ldp.book.chapters import REGISTRY
from ldp.book.claims import Registry
from ldp.book.rerun.build import run_facts
from ldp.paths import generated_dir

CHAPTERS = list(dict.fromkeys(c.chapter for c in REGISTRY.claims))
RAN_ON = {"commit": "0123456789abcdef0123+modified", "cpus": 2, "cpu": "Test CPU", "memory_gb": 4.0,
          "system": "Linux-test", "python": "3.11.7", "load": 1.5}


def _manifest(folder: Path, mode: str, chapters: list[str], seconds: float) -> None:
    path = folder / "cache" / mode / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = {ch: {"key": "k", "seconds": seconds + i, "params": {}, "values": {},
                    "finished": f"2026-11-27T0{i % 10}:00:00", "ran_on": RAN_ON} for i, ch in enumerate(chapters)}
    path.write_text(json.dumps(entries))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A build folder whose manifests time every chapter that measures a claim (no results saved)."""
    folder = tmp_path_factory.mktemp("generated")
    _manifest(folder, "full", CHAPTERS, 130.0)
    _manifest(folder, "quick", CHAPTERS, 20.0)
    return folder


@pytest.fixture(scope="module")
def appendix(built) -> A.Appendix:
    return A.collect(REGISTRY, built)


@pytest.fixture(scope="module")
def markdown(appendix) -> str:
    return A.render_markdown(appendix)


@pytest.fixture(scope="module")
def latex(appendix) -> str:
    return A.render_latex(appendix)


def test_every_claim_has_a_command_and_a_time(appendix, markdown, latex):
    assert [c.id for c in appendix.claims] == [c.id for c in REGISTRY.claims]
    assert A.missing(markdown, REGISTRY) == {}
    assert A.missing(latex, REGISTRY) == {}
    for claim, entry in zip(REGISTRY.claims, appendix.claims):
        assert entry.rule == claim.rule.describe()  # the tolerance is the claim's stated rule
        assert entry.ours == (claim.kind == "ours")
    # the paper's claims and ours, each marked
    assert markdown.count(" (ours):") == sum(c.kind == "ours" for c in REGISTRY.claims)
    assert markdown.count(" (paper):") == sum(c.kind != "ours" for c in REGISTRY.claims)


def test_times_and_machine_come_from_the_manifest(appendix, markdown):
    first = appendix.experiments[0]
    assert first.timings["full"].seconds == 130.0 and first.timings["quick"].seconds == 20.0
    assert "2.2 min (paper settings), 20 s (quick settings)" in markdown
    assert ("2 cores (Test CPU), 4.0 GB of memory, Linux-test, Python 3.11.7; the 1-minute load average "
            "when a chapter finished was 1.5 to 1.5.") in markdown
    assert "(the timed runs: commit 0123456789ab with uncommitted changes)" in markdown
    total = sum(130.0 + i for i in range(len(CHAPTERS)))
    assert appendix.totals["full"] == (total, len(CHAPTERS))
    assert f"{A.duration(total)}, the sum of the {len(CHAPTERS)} chapters' times" in markdown
    # one experiment per chapter, each listing the claims it tests
    assert [e.chapter for e in appendix.experiments] == CHAPTERS
    assert sum(len(e.claims) for e in appendix.experiments) == len(REGISTRY.claims)
    assert all(e.command.endswith(f"rerun {e.chapter[:2]}") and e.quick_command.endswith("--quick")
               for e in appendix.experiments)


def test_missing_names_what_is_absent(built, markdown, tmp_path):
    extra = dataclasses.replace(REGISTRY.claims[0], id="extra-claim", parts=(), details=())
    assert A.missing(markdown, Registry(sentences=(*REGISTRY.sentences, extra))) == {"extra-claim": "absent"}
    first = next(c.id for c in REGISTRY.claims if c.chapter.startswith("01"))  # a claim of chapter 01
    cut = markdown.replace(".venv/bin/python -m ldp rerun 01`", "`")
    assert A.missing(cut, REGISTRY)[first] == "no command"
    # a chapter the manifests do not time: its claims have no time, and the check says so
    shutil.copytree(built, tmp_path / "g")
    for mode in ("full", "quick"):  # the first and the last chapter (its last claim ends the list) untimed
        _manifest(tmp_path / "g", mode, CHAPTERS[1:-1], 30.0)
    a = A.collect(REGISTRY, tmp_path / "g")
    for text in (A.render_markdown(a), A.render_latex(a)):
        gaps = A.missing(text, REGISTRY)
        assert gaps == {c.id: "no time" for c in REGISTRY.claims if c.chapter in (CHAPTERS[0], CHAPTERS[-1])}
        assert "not measured on this machine" in text


def test_experiments_list_their_claims_as_ranges(appendix, markdown):
    checked = 0
    for e in appendix.experiments:
        numbers = [int(k[1:]) for k in e.claims]
        if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1:  # consecutive: one range
            assert f"`{e.chapter}`; tests {e.claims[0]}-{e.claims[-1]}." in markdown
            checked += 1
    assert checked


def test_no_build_yet(tmp_path):
    a = A.collect(REGISTRY, tmp_path)
    assert a.verdict_mode is None and a.totals == {} and a.machine == {}
    text = A.render_markdown(a)
    assert "not evaluated (no build yet)" in text and "not recorded" in text
    assert set(A.missing(text, REGISTRY).values()) == {"no time"}


def test_manifest_is_checked(tmp_path):
    with pytest.raises(ValueError, match="mode='paper' must be one of"):
        A.read_manifest("paper", tmp_path)
    assert A.read_manifest("full", tmp_path) == {}
    bad = tmp_path / "cache" / "full" / "manifest.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="must be a JSON object"):
        A.read_manifest("full", tmp_path)
    with pytest.raises(ValueError, match="verdict_mode"):
        A.collect(REGISTRY, tmp_path, verdict_mode="paper")


def test_run_facts_name_the_machine():
    facts = run_facts()
    assert set(facts) == {"commit", "cpus", "cpu", "memory_gb", "system", "python", "load"}
    assert facts["cpus"] >= 1 and facts["python"].startswith("3.")


def test_tex_escape():
    assert A.tex_escape(r"a_b & 50% #1 {x} ~ ^ $ \ ") == (r"a\_b \& 50\% \#1 \{x\} \textasciitilde{} "
                                                           r"\textasciicircum{} \$ \textbackslash{} ")


def test_latex_document(latex, appendix):
    assert latex.startswith("% Generated by ldp.book.artifact")
    sections = re.findall(r"\\section\{([^}]*)\}", latex)
    assert sections == ["Abstract", "Description \\& Requirements", "Set-up", "Evaluation workflow",
                        "Notes on Reusability", "Version"]
    assert re.findall(r"\\subsection\{([^}]*)\}", latex) == ["Major Claims", "Experiments"]
    assert len(re.findall(r"\\item\[\(C\d+\)\]", latex)) == len(appendix.claims)
    assert len(re.findall(r"\\item\[\(E\d+\)\]", latex)) == len(appendix.experiments)
    body = re.sub(r"\\[{}]", "", latex)  # escaped braces aside, braces balance
    assert body.count("{") == body.count("}")
    assert latex.rstrip().endswith(r"\end{document}")


@pytest.mark.skipif(shutil.which("xelatex") is None, reason="XeLaTeX is not installed")
def test_latex_compiles(latex, tmp_path):
    (tmp_path / "a.tex").write_text(latex, encoding="utf-8")
    run = subprocess.run(["xelatex", "-interaction=nonstopmode", "-halt-on-error", "a.tex"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:]
    log = (tmp_path / "a.log").read_text(errors="replace")
    assert "Missing character" not in log  # every character of the claims is in the fonts
    assert (tmp_path / "a.pdf").stat().st_size > 0


def test_write_appendix(built, tmp_path):
    paths = A.write_appendix(REGISTRY, built, tmp_path / "out")
    assert sorted(paths) == ["appendix.md", A.TEX_NAME]
    for path in paths.values():
        assert A.missing(path.read_text(encoding="utf-8"), REGISTRY) == {}


def test_the_built_book_page():
    """The appendix of the last book build (if one ran here) lists every claim with its command and time."""
    page = generated_dir() / A.ARTIFACT_DIR / "appendix.md"
    if not page.is_file():
        pytest.skip("no book build in this checkout (make book QUICK=1 writes the page)")
    assert A.missing(page.read_text(encoding="utf-8"), REGISTRY) == {}
