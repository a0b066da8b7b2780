"""Ctrl-C on ``python -m ldp rerun``: the kernel and every child stop within seconds, the folder is marked.

The hard case: a kernel busy in a long compiled cell (numba, the GIL held) cannot notice
that papermill is gone, so the runner itself must stop it.  A tiny notebook spins in such a cell; the
test sends SIGINT to the runner, as a terminal's Ctrl-C would, and checks that no process of the run is
left after a generous wait and that the run folder says it is incomplete; a second rerun into it starts
clean (once a file no rerun wrote, put where the run writes, has been moved away: until then the rerun refuses).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]

SPIN = '''
import os, pathlib
from numba import njit


@njit
def spin(n):
    x = 1
    for _ in range(n):
        x = x * 6364136223846793005 + 1442695040888963407  # wraps: no closed form, no end in sight
    return x


spin(1)  # compiled before the marker is written
pathlib.Path(marker).write_text(str(os.getpid()))
spin(rounds)
'''


def _notebook(path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Spin\n"]},
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "execution_count": None, "outputs": [],
         "source": ["rounds: int = 10**15  # loop rounds of the compiled cell [range: x ≥ 0]\n",
                    "marker: str = 'spinning'  # file written once the cell spins\n",
                    "quick: bool = False  # True: the [quick] values of the lines above (set by --quick)"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [SPIN]},
    ]
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "ldp", "display_name": "ldp", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")


def _tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


#: how long the test waits for the run's processes after SIGINT before it calls them left running: a guard
#: against a hang, not a speed limit (on a loaded machine the kernel's shutdown alone can take seconds)
STOP_WAIT = 120


def _as_from_a_terminal() -> None:
    """SIGINT's default action in the runner, as a command typed in a terminal has it.

    A test run started in the background by a non-interactive shell (``pytest ... &``, ``nohup``) inherits
    SIGINT ignored, and Python then installs no KeyboardInterrupt handler: the runner would rightly ignore the
    test's Ctrl-C (its signal masks showed SigIgn bit 2 set when this test failed so on a loaded machine).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_masks(pid: int) -> str:
    """The runner's blocked, ignored and caught signals (SIGINT is bit 2), as /proc says: why it did not stop."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError as exc:
        return str(exc)
    return " ".join(line.replace("\t", "") for line in status if line.startswith(("SigBlk", "SigIgn", "SigCgt")))


def _running(procs: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
        except psutil.NoSuchProcess:
            pass
    return alive


@pytest.mark.slow
def test_ctrl_c_stops_the_kernel_and_marks_the_folder(tmp_path):
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    _notebook(root / "notebooks" / "99_spin.ipynb")
    out = tmp_path / "run"
    marker = tmp_path / "spinning"
    env = {**os.environ, "LDP_ROOT": str(root), "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "ldp", "rerun", "99", "--out", str(out), "--set", f"marker={str(marker)!r}"]
    runner = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, start_new_session=True,  # its own group: the test's SIGINT is the only one
                              preexec_fn=_as_from_a_terminal)
    procs: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 300
        while not marker.exists() and runner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), runner.communicate(timeout=30)[0]
        kernel = psutil.Process(int(marker.read_text()))
        time.sleep(1.0)
        procs = _tree(runner.pid)
        assert kernel.pid in {p.pid for p in procs}  # the kernel, busy in the compiled cell
        assert (out / "INCOMPLETE").is_file()  # marked while it runs
        runner.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal sends
        t0 = time.monotonic()
        while _running(procs) and time.monotonic() - t0 < STOP_WAIT:
            time.sleep(0.1)
        left = _running(procs)
        assert not left, (f"still running {STOP_WAIT} s after SIGINT: {[(p.pid, p.name()) for p in left]}; "
                          f"the runner's signal masks: {_signal_masks(runner.pid)}")
        stopped = time.monotonic() - t0
        output = runner.communicate(timeout=STOP_WAIT)[0]
    finally:  # whatever happened, leave nothing of this test running
        for p in _running(procs + (_tree(runner.pid) if runner.poll() is None else [])):
            p.kill()
    assert runner.returncode == 130, output
    text = (out / "INCOMPLETE").read_text()
    assert "interrupted" in text and "removes them first" in text, text
    print(f"every process of the run stopped {stopped:.1f} s after SIGINT")
    # the interrupted run recorded what it wrote (rerun.json), so a second rerun into the folder can replace it
    partial = out / "99_spin.ipynb"
    manifest = json.loads((out / "rerun.json").read_text())
    assert manifest["ended"] and {"99_spin.ipynb", "INCOMPLETE", "parameters.json"} <= set(manifest["files"])
    # ... but never a file no rerun wrote: one put where the run writes makes it refuse before any work
    stranger = out / "figures" / "mine.svg"
    stranger.parent.mkdir(exist_ok=True)
    stranger.write_text("<svg/>")
    marker.unlink()
    refused = subprocess.run(cmd + ["--set", "rounds=10"], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
    assert refused.returncode == 2 and "mine.svg" in refused.stderr, refused.stdout + refused.stderr
    assert stranger.read_text() == "<svg/>" and not marker.exists()  # kept; nothing ran
    assert json.loads((out / "parameters.json").read_text())["rounds"] != 10
    stranger.unlink()  # moved away by its owner: now the second rerun starts clean
    again = subprocess.run(cmd + ["--set", "rounds=10"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
    assert partial.is_file()
    assert json.loads((out / "parameters.json").read_text())["rounds"] == 10
    assert marker.exists()  # the second run executed its cell
    if again.returncode == 0:
        assert not (out / "INCOMPLETE").exists(), again.stdout
    else:  # it failed after the notebook (e.g. its claims): then the folder says so
        assert "failed" in (out / "INCOMPLETE").read_text(), again.stdout + again.stderr
