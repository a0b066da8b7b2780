"""A rerun writes only into a folder of its own and never removes or replaces a file it did not write.

- The refusals (a folder holding someone's files, a file no rerun wrote where a run writes, an edited file of
  an earlier run, a link out of the folder, a manifest no rerun wrote, a folder another rerun holds, a run
  killed before it recorded its files) happen before any work: checked through ``python -m ldp rerun``'s
  entry point with a real chapter, and every file of the folder is compared byte for byte afterwards.
- ``test_real_rerun_keeps_the_users_files`` runs a tiny notebook twice into one folder that also holds a
  user's files: the second run replaces exactly what the first wrote, the user's files survive byte for byte.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ldp.book import rerun as R
from ldp.book.rerun.runfolder import claim

STEM = "06_evaluation"


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry below ``folder``: a file's bytes, a link's target, a folder's mark."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_dir():
            out[rel] = "folder"
        elif path.is_fifo():
            out[rel] = "fifo"
        else:
            out[rel] = path.read_bytes()
    return out


def refused(folder: Path, capsys, *words: str) -> str:
    """Run ``rerun 06 --quick --out folder``; it must exit 2 without changing anything. Returns the message."""
    before = snapshot(folder) if folder.exists() else None
    assert R.main(["rerun", "06", "--quick", "--set", "repetitions=1", "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert (snapshot(folder) if folder.exists() else None) == before, "the refusal changed the folder"
    for w in words:
        assert w in err, err
    return err


def earlier_run(folder: Path, stem: str = STEM) -> None:
    """A folder as a finished run of ``stem`` leaves it: its files, recorded in its manifest."""
    with claim(folder, stem) as run:
        run.mark("running")
        (folder / "parameters.json").write_text('{"repetitions": 1}\n')
        (folder / f"{stem}.ipynb").write_text("{}")
        (folder / "figures").mkdir()
        (folder / "figures" / "fig-a.svg").write_text("<svg>a</svg>")
        (folder / "tables" / stem).mkdir(parents=True)
        (folder / "tables" / stem / "t.csv").write_text("x\n1\n")
        (folder / R.INCOMPLETE).unlink()


def test_a_folder_with_a_users_files_is_refused(tmp_path, capsys):
    mine = tmp_path / "results"
    (mine / "figures").mkdir(parents=True)
    (mine / "figures" / "fig-eval-vary-eps.svg").write_text("<svg>my own figure</svg>")
    (mine / "parameters.json").write_text('{"mine": true}')
    (mine / "thesis.tex").write_text("\\chapter{Results}")
    err = refused(mine, capsys, "no rerun wrote", "thesis.tex", "--out")
    assert "Nothing was changed" in err


def test_a_file_is_refused(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    path.write_text("keep me")
    assert R.main(["rerun", "06", "--quick", "--out", str(path)]) == 2
    assert "is not a folder" in capsys.readouterr().err and path.read_text() == "keep me"


def test_an_empty_or_new_folder_is_taken(tmp_path):
    for folder in (tmp_path / "empty", tmp_path / "new" / "run"):
        if folder.name == "empty":
            folder.mkdir()
        with claim(folder, STEM) as run:
            assert run.path == folder
        manifest = json.loads((folder / R.MANIFEST).read_text())
        assert manifest["notebook"] == STEM and manifest["ended"] and manifest["files"] == {}


@pytest.mark.parametrize("change", ["edited", "added figure", "added table", "link out", "a folder in the way"])
def test_a_file_no_rerun_wrote_where_the_run_writes_is_refused(tmp_path, capsys, change):
    folder = tmp_path / "run"
    earlier_run(folder)
    outside = tmp_path / "outside.svg"
    outside.write_text("<svg>outside</svg>")
    if change == "edited":  # e.g. the executed notebook, opened and saved
        (folder / f"{STEM}.ipynb").write_text('{"cells": ["my work"]}')
        name = f"{STEM}.ipynb"
    elif change == "added figure":
        (folder / "figures" / "mine.svg").write_text("<svg>mine</svg>")
        name = "mine.svg"
    elif change == "added table":
        (folder / "tables" / "mine.csv").write_text("a\n1\n")
        name = "mine.csv"
    elif change == "link out":
        (folder / "figures" / "fig-b.svg").symlink_to(outside)
        name = "fig-b.svg"
    else:
        (folder / "run.log").mkdir()
        name = "run.log"
    refused(folder, capsys, "is not what a rerun wrote", name, "Nothing was changed")
    assert outside.read_text() == "<svg>outside</svg>"


def test_a_rerun_folder_is_reused_without_touching_anything_else(tmp_path):
    folder = tmp_path / "run"
    earlier_run(folder, "05_validation")  # a run of another chapter made the folder
    (folder / "notes.md").write_text("my notes")  # beside the run's files: never touched
    (folder / "report").mkdir()
    (folder / "report" / "claims.md").write_text("a report written into the run's folder")
    (folder / "05_validation.html").write_text("the earlier run's page, edited")  # not where this run writes
    before = snapshot(folder)
    with claim(folder, STEM) as run:
        left = snapshot(folder)
        (folder / "parameters.json").write_text("{}")
        run.mark("running")
    kept = {"notes.md", "report", "report/claims.md", "05_validation.html", R.MANIFEST}
    assert set(left) == kept  # the earlier run's files (exactly as it wrote them) went, nothing else
    for rel in kept - {R.MANIFEST}:
        assert left[rel] == before[rel]
    assert set(json.loads((folder / R.MANIFEST).read_text())["files"]) == {"parameters.json", R.INCOMPLETE}


def test_another_rerun_holds_the_folder(tmp_path, capsys):
    folder = tmp_path / "run"
    with claim(folder, STEM):
        refused(folder, capsys, "another rerun is writing into")


@pytest.mark.parametrize("manifest", ['{"written_by": "me", "format": 1, "files": {}}', "not json",
                                      "[" * 1000 + "]" * 1000, "fifo",
                                      '{"written_by": "python -m ldp rerun", "format": 1, '
                                      '"files": {"parameters.json": {"bytes": 2}}}'])
def test_a_manifest_no_rerun_wrote_is_refused(tmp_path, capsys, manifest):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "parameters.json").write_text("{}")
    if manifest == "fifo":  # must not hang
        os.mkfifo(folder / R.MANIFEST)
    else:
        (folder / R.MANIFEST).write_text(manifest)
    refused(folder, capsys, "is not the manifest of a rerun's folder")


def test_a_run_killed_before_it_recorded_its_files(tmp_path, capsys):
    """SIGKILL leaves files no manifest records: the next rerun cannot vouch for them and says so."""
    folder = tmp_path / "run"
    code = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from ldp.book.rerun.runfolder import claim
        with claim(Path({str(folder)!r}), {STEM!r}) as run:
            run.mark("running")
            run.record(ended=False)  # as a rerun does once its parameters are written
            (run.path / "figures").mkdir()
            (run.path / "figures" / "fig-a.svg").write_text("<svg/>")
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr
    assert json.loads((folder / R.MANIFEST).read_text())["ended"] is None
    refused(folder, capsys, "fig-a.svg", "ended without recording its files")
    (folder / "figures" / "fig-a.svg").unlink()  # removed by hand: then the folder is the rerun's again
    with claim(folder, STEM):
        pass
    assert not (folder / R.INCOMPLETE).exists()  # recorded by the killed run before it was killed: removed


TINY = {"cells": [
    {"cell_type": "markdown", "id": "title", "metadata": {}, "source": ["# Tiny\n"]},
    {"cell_type": "code", "id": "params", "metadata": {"tags": ["parameters"]}, "execution_count": None,
     "outputs": [], "source": ["name: str = 'fig-a'  # the figure's name [range: x in ('fig-a', 'fig-b')]\n",
                               "quick: bool = False  # True: the [quick] values of the lines above (set by --quick)"]},
    {"cell_type": "code", "id": "draw", "metadata": {}, "execution_count": None, "outputs": [], "source": [
        "import matplotlib.pyplot as plt\nimport pandas as pd\nfrom ldp.book.plotting import save_figure\n"
        "data = pd.DataFrame({'x': [0, 1], 'y': [0, 1]})\nfig, ax = plt.subplots()\nax.plot(data.x, data.y)\n"
        "_ = save_figure(fig, name, data=data)\n"]}],
    "metadata": {"kernelspec": {"name": "ldp", "display_name": "ldp", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.notebook
@pytest.mark.slow
def test_real_rerun_keeps_the_users_files(tmp_path):
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "notebooks" / "99_tiny.ipynb").write_text(json.dumps(TINY), encoding="utf-8")
    out = tmp_path / "run"
    env = {**os.environ, "LDP_ROOT": str(root)}

    def rerun(*sets: str) -> None:
        cmd = [sys.executable, "-m", "ldp", "rerun", "99", "--out", str(out), *(w for s in sets for w in ("--set", s))]
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    rerun()
    assert (out / "figures" / "fig-a.svg").is_file() and not (out / R.INCOMPLETE).exists()
    first = json.loads((out / R.MANIFEST).read_text())
    assert {"99_tiny.ipynb", "99_tiny.html", "run.log", "parameters.json", "figures/fig-a.svg"} <= set(first["files"])
    mine = {"notes.md": b"what I saw in run 1\n", "analysis/fig-a-zoom.png": b"\x89PNG my own plot",
            ".hidden": b"\x00\x01\x02"}
    for rel, data in mine.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    rerun("name=fig-b")
    for rel, data in mine.items():  # byte for byte
        assert (out / rel).read_bytes() == data, rel
    assert not (out / "figures" / "fig-a.svg").exists()  # the first run's figure went with its run ...
    assert (out / "figures" / "fig-b.svg").is_file()  # ... replaced by the second run's
    second = json.loads((out / R.MANIFEST).read_text())
    assert second["ended"] and "figures/fig-b.svg" in second["files"] and "figures/fig-a.svg" not in second["files"]
    assert not any(rel in second["files"] for rel in mine)  # the user's files are not the run's
