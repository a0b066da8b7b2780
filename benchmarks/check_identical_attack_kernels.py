"""Bit-identity check of the maximal-gain hash-seed searches against an earlier revision's kernels.

Usage::

    .venv/bin/python benchmarks/check_identical_attack_kernels.py [--rev e90b528]

Compiles :mod:`ldp.attacks.kernels` as it was at ``--rev`` (read with ``git show``, no numba cache) next to
the current one and runs both :func:`~ldp.attacks.kernels.olh_search` and
:func:`~ldp.attacks.kernels.hr_search` on the same random seeds and answers: answer counts 2 to 40, widths
8 to 100 bits, ``d'`` 2 to 150, HR's blocks 1 x 2 to 16 x 16, 1 to 64 seeds per user.  Every returned
array must be equal (values and dtype); exits 1 on any difference.  Then prints the CPU time
(``time.process_time``) of both on a chunk of 8192 fake users with 64 seeds each.
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ldp.attacks import kernels as new
from ldp.oracles.hashing import to_chunks32

ROOT = Path(__file__).resolve().parents[1]


def old_kernels(rev: str):
    """The kernels module of ``rev``, imported from a temporary file (compiled afresh)."""
    src = subprocess.run(["git", "show", f"{rev}:ldp/attacks/kernels.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    src = src.replace("from ..oracles.kernels", "from ldp.oracles.kernels").replace("cache=True", "cache=False")
    path = Path(tempfile.mkdtemp()) / "old_attack_kernels.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("old_attack_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same(a, b) -> bool:
    return all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", default="e90b528")
    args = ap.parse_args(argv)
    old = old_kernels(args.rev)
    rng = np.random.default_rng(5)
    cases = bad = 0
    for A in [2, 3, 5, 16, 40]:
        for m in [8, 20, 64, 100]:
            for dp in [2, 3, 8, 9, 150]:
                ch = np.ascontiguousarray(to_chunks32(np.unique(rng.integers(0, 2**min(m, 63), size=A,
                                                                             dtype=np.uint64)), m))
                for T in [1, 7, 64]:
                    seeds = rng.integers(0, 2**64, size=(500, T), dtype=np.uint64)
                    cases += 1
                    bad += not same(old.olh_search(seeds, ch, dp), new.olh_search(seeds, ch, dp))
            for blocks, bs in [(4, 64), (1, 2), (3, 4), (16, 16), (2, 32)]:
                ch = np.ascontiguousarray(to_chunks32(np.unique(rng.integers(0, 2**min(m, 63), size=A,
                                                                             dtype=np.uint64)), m))
                for T in [1, 5, 64]:
                    seeds = rng.integers(0, 2**64, size=(300, T), dtype=np.uint64)
                    cases += 1
                    bad += not same(old.hr_search(seeds, ch, blocks, bs), new.hr_search(seeds, ch, blocks, bs))
    print(f"{cases - bad} of {cases} kernel cases identical")
    ch = np.ascontiguousarray(to_chunks32(rng.integers(0, 2**63, size=16, dtype=np.uint64), 64))
    seeds = rng.integers(0, 2**64, size=(8192, 64), dtype=np.uint64)
    for name, mod in [(args.rev, old), ("current", new)]:
        t = time.process_time()
        mod.olh_search(seeds, ch, 9)
        t_olh = time.process_time() - t
        t = time.process_time()
        mod.hr_search(seeds, ch, 4, 64)
        t_hr = time.process_time() - t
        print(f"{name}: 8192 users x 64 seeds, 16 answers: olh_search (d' = 9) {t_olh * 1e3:.1f} ms, "
              f"hr_search (4 blocks of 64) {t_hr * 1e3:.1f} ms CPU")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
