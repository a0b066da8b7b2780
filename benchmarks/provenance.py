"""What a committed benchmark result records about how it was made: the command, the commit, the machine, the load.

The benchmark scripts import it as a sibling module (``python benchmarks/bench_x.py`` puts ``benchmarks/`` first
on the path).  A result committed under ``benchmarks/results/`` carries these columns on every row, so a reader
(and a chapter that plots it) can say which code made it, where and under what load: a shared, loaded machine
gives pessimistic times, and a ``+dirty`` commit says the code differed from the commit.
"""
from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np

__all__ = ["commit", "machine", "command", "load", "now"]

ROOT = Path(__file__).resolve().parent.parent


def commit(*paths: str) -> str:
    """The short hash of ``HEAD``, with ``+dirty`` when tracked files under ``paths`` (default ``ldp``) differ from it.

    Untracked files (a benchmark's own results) do not count; ``unknown`` outside a git checkout.
    """
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *(paths or ("ldp",))],
                               cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> str:
    """The architecture, cores, memory, system and the numeric libraries' versions (numba's threads)."""
    import numba

    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{platform.machine()} {os.cpu_count()} cores {mem:.0f} GiB, {platform.system()}, "
            f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__} "
            f"({numba.get_num_threads()} threads)")


def command(script: str, argv: list[str] | None = None) -> str:
    """The command line that ran ``script`` (``"python benchmarks/<script> <its arguments>"``)."""
    return f"python benchmarks/{script} " + " ".join(shlex.quote(a) for a in (argv if argv is not None
                                                                               else sys.argv[1:]))


def load() -> float:
    """The machine's one-minute load average."""
    return os.getloadavg()[0]


def now() -> str:
    """The local date and time, to the second."""
    return datetime.datetime.now().isoformat(timespec="seconds")
