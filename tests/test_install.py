"""`pip install` of the wheel gives a working library that writes nothing into its installed files.

The distribution is ``ldp-heavy-hitters`` (PyPI's ``ldp`` is an unrelated package that is
also imported as ``ldp``); the import package is ``ldp``. Builds the wheel from a copy of the
package sources (so the checkout gets no ``build/`` folder), installs it with its declared
dependencies into a fresh virtual environment (versions constrained to ``requirements.txt``,
so pip's cache serves them), checks that ``import ldp`` is this distribution, and runs a
heavy-hitter protocol, a small experiment grid and a figure from an empty working folder.
Nothing may be written into ``site-packages``: results go to the per-user cache, figures
under the working folder, numba's compiled kernels to numba's per-user cache.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r'''
import json
from importlib import metadata
from pathlib import Path

import numpy as np

import ldp
from ldp import datasets, experiments, paths

out = {"ldp_file": ldp.__file__, "source_checkout": str(paths.source_checkout()),
       "cache_dir": str(paths.cache_dir()), "version": ldp.__version__,
       "dist_version": metadata.version("ldp-heavy-hitters"),
       "dist_of_ldp": metadata.packages_distributions().get("ldp", [])}
data = datasets.zipf(20_000, m=16, rng=0)
pem = ldp.PEM(2.0, 4, 16, query_limit=2**12)
result = pem.run(data, rng=1)                       # the protocol engine: compiles the OLH kernel
out["pem"] = repr(result)
out["pem_found"] = len(result)
grid = experiments.Grid(["PEM", "MCM"], [("zipf", {"n": 5000, "m": 16})], {"epsilon": [2.0, 4.0], "k": [4]},
                        repetitions=2, root_seed=3)
frame = experiments.run_grid(grid, n_jobs=1, progress=False)
out["grid_rows"] = len(frame)

import matplotlib.pyplot as plt
import pandas as pd
from ldp.book.plotting import save_figure

fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
save_figure(fig, "fig-install-check", data=pd.DataFrame({"x": [0, 1], "y": [0, 1]}))
print("RESULT " + json.dumps(out))
'''


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def test_wheel_installs_and_writes_nothing_into_site_packages(tmp_path):
    # 1. the wheel, built from a copy of the sources
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "ldp", src / "ldp", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                  "-w", dist, src])
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("*.whl")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "ldp-heavy-hitters"
    assert wheel.name.startswith(f"ldp_heavy_hitters-{project['version']}-"), wheel.name

    # 2. a fresh virtual environment with the wheel and its declared dependencies
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", venv])
    assert made.returncode == 0, made.stderr
    py = venv / "bin" / "python"
    inst = _run([py, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-c", ROOT / "requirements.txt",
                 wheel])
    if inst.returncode != 0 and any(s in inst.stderr for s in ("NewConnectionError", "Temporary failure in name",
                                                               "Network is unreachable")):
        pytest.skip(f"PyPI is not reachable: {inst.stderr.strip().splitlines()[-1]}")
    assert inst.returncode == 0, inst.stderr
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    assert (site / "ldp" / "__init__.py").is_file()
    before = _tree(site)

    # 3. use it from an empty working folder, with a private home (user cache folders)
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LDP_", "NUMBA_", "PYTHON", "VIRTUAL_ENV", "XDG_"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), MPLBACKEND="Agg")
    ran = _run([py, "-c", SCRIPT], cwd=work, env=env, timeout=900)
    assert ran.returncode == 0, ran.stderr
    out = __import__("json").loads(ran.stdout.split("RESULT ", 1)[1])
    assert Path(out["ldp_file"]).is_relative_to(site)
    # installed under its own name, and `import ldp` is this package (no other distribution provides it)
    assert out["dist_version"] == out["version"] == project["version"]
    assert out["dist_of_ldp"] == ["ldp-heavy-hitters"]
    assert out["source_checkout"] == "None"
    assert out["pem_found"] == 4 and out["pem"].startswith("HeavyHitterResult(")
    assert out["grid_rows"] == 2 * 2 * 2  # 2 protocols x 2 epsilons x 2 repetitions

    # 4. nothing written into the installed package; outputs where the docs say
    after = _tree(site)
    assert after == before, f"written into site-packages: {sorted(set(after.items()) - set(before.items()))[:10]}"
    assert Path(out["cache_dir"]) == home / ".cache" / "ldp"
    assert list((home / ".cache" / "ldp" / "experiments").glob("*.parquet"))
    assert list((home / ".cache" / "numba").rglob("*.nbi"))  # numba's kernels, outside site-packages
    assert sorted(p.name for p in (work / "_generated" / "figures").iterdir()) == [
        "fig-install-check-narrow.svg", "fig-install-check.csv", "fig-install-check.pdf", "fig-install-check.svg"]
