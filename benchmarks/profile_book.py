"""Where a chapter's time goes: each chapter run by the book's notebook runner, timed and sampled cell by cell.

Every chapter named (default: all ten) is executed the way ``scripts/run_notebooks.py`` executes it (the same
runner, :func:`ldp.book.rerun.build.run_all`, one chapter at a time), at the paper's scale unless ``--quick``,
with a fresh, empty results cache (``$LDP_CACHE_DIR`` in a temporary folder; ``--warm-cache`` keeps the
repository's), so that every grid is computed.  Inside the kernel an IPython start-up file (``$IPYTHONDIR``,
nothing in the notebooks changes) records for each cell

* wall seconds, the kernel's CPU seconds, and its children's CPU seconds (joblib's workers, alive or reaped);
* what the kernel was doing: a stack sample of the thread that runs the cell every ``--interval`` seconds,
  sorted twice -- by *phase* (the innermost of: a grid's runs, a grid's data set set-up, a grid's results
  cache and assembly, waiting for the workers, drawing, data sets, analysis, ...) and by the *library* whose
  code was on top of the stack (ldp's protocols and engines, numpy, pandas, pyarrow, matplotlib, numba, ...).

With the default parallel grids the workers' own time shows only as "waiting for workers" and in the children's
CPU; ``--serial`` runs every grid in the kernel (joblib's sequential backend), so that the sample sees the runs
themselves: run each way once to know both the cost and what it is made of.

Usage::

    .venv/bin/python benchmarks/profile_book.py --only 08_after_pem --serial
    .venv/bin/python benchmarks/profile_book.py --out benchmarks/results/profile_book.csv   # every chapter
    .venv/bin/python benchmarks/profile_book.py --jobs 2 --out ...   # the book build itself, two chapters at a time

``--jobs 2`` is the build as ``scripts/run_notebooks.py`` runs it (it writes ``_generated/cache/<mode>/`` as the
build does: manifest, figures, tables), every chapter's kernel profiled.

Each row of ``--out`` (a CSV; rows of the same chapter, mode and scheduling are replaced) is one cell, plus a
row ``cell = -1`` per chapter with the runner's seconds; every row records the command, the commit, the machine
and the load average before and after the chapter (:mod:`provenance`).  A summary is printed, and written
beside the CSV as ``.txt``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
import provenance

ROOT = Path(__file__).resolve().parents[1]

# The start-up file the kernel runs before the notebook (IPython's profile_default/startup): per-cell timers and
# a stack sampler; records go to $LDP_PROFILE_OUT/<kernel pid>.jsonl, one JSON line per cell.
STARTUP = r'''
import json, os, resource, sys, threading, time
from collections import Counter

import psutil

_OUT = os.path.join(os.environ["LDP_PROFILE_OUT"], f"{os.getpid()}.jsonl")
_INTERVAL = float(os.environ.get("LDP_PROFILE_INTERVAL", "0.02"))
if os.environ.get("LDP_PROFILE_SERIAL"):
    import joblib
    joblib.parallel_config(backend="sequential")  # every grid in this process: the sampler sees the runs

# (phase, test on (file, function)) in order of precedence: a sample belongs to the first phase that any frame of
# its stack matches (a grid's runs before the protocols they call; drawing before the plotting helpers)
_PHASES = [
    ("grid: data set set-up", lambda f, n: f.endswith("ldp/experiments/worker.py") and n == "load"),
    ("grid: runs", lambda f, n: f.endswith("ldp/experiments/worker.py") and n == "execute"),
    ("grid: cache I/O and assembly", lambda f, n: f.endswith(("ldp/experiments/cache.py",))
     or (f.endswith("ldp/experiments/run.py") and n in ("_tidy", "_make_row", "finish"))),
    ("grid: waiting for workers", lambda f, n: "/joblib/" in f),
    ("grid: other", lambda f, n: f.endswith("ldp/experiments/run.py")),
    ("drawing figures (matplotlib)", lambda f, n: "/matplotlib/" in f),
    ("figure data and tables", lambda f, n: "/ldp/book/plotting/" in f),
    ("data sets (outside grids)", lambda f, n: "/ldp/datasets/" in f),
    ("analysis (optimizer, closed forms)", lambda f, n: "/ldp/analysis/" in f),
    ("attacks", lambda f, n: "/ldp/attacks/" in f),
    ("protocols and engines (outside grids)",
     lambda f, n: any(p in f for p in ("/ldp/protocols/", "/ldp/engines/", "/ldp/oracles/", "/ldp/core/",
                                       "/ldp/client/"))),
    ("summaries (ldp.experiments)", lambda f, n: "/ldp/experiments/" in f),
    ("chapter code (ldp.book)", lambda f, n: "/ldp/book/" in f),
    ("imports", lambda f, n: "importlib._bootstrap" in f),
]
_LIBS = [("ldp", "/ldp/"), ("numba", "/numba/"), ("numpy", "/numpy/"), ("pandas", "/pandas/"),
         ("pyarrow", "/pyarrow/"), ("matplotlib", "/matplotlib/"), ("scipy", "/scipy/"), ("joblib", "/joblib/"),
         ("ipython/kernel", "/IPython/"), ("ipython/kernel", "/ipykernel/")]


def _classify(frame):
    stack, lib = [], None
    while frame is not None:
        code = frame.f_code
        stack.append((code.co_filename, code.co_name))
        frame = frame.f_back
    for f, _ in stack:  # innermost first: the library whose code runs
        lib = next((name for name, part in _LIBS if part in f), None)
        if lib == "ldp":
            lib = next((f"ldp.{sub}" for sub in ("protocols", "engines", "oracles", "datasets", "analysis",
                                                   "experiments", "book", "attacks", "core") if f"/ldp/{sub}/" in f),
                       "ldp")
        if lib is not None:
            break
    phase = next((name for name, test in _PHASES if any(test(f, n) for f, n in stack)), None)
    return phase or "notebook code and other", lib or "python (other)"


class _Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True, name="ldp-profile-sampler")
        self.target = None
        self.phases, self.libs = Counter(), Counter()

    def run(self):
        while True:
            time.sleep(_INTERVAL)
            t = self.target
            if t is None:
                continue
            frame = sys._current_frames().get(t)
            if frame is None:
                continue
            phase, lib = _classify(frame)
            self.phases[phase] += 1
            self.libs[lib] += 1


def _children_cpu():
    total = 0.0
    try:
        for c in psutil.Process().children(recursive=True):
            try:
                t = c.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
    except psutil.Error:
        pass
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return total + r.ru_utime + r.ru_stime


_sampler = _Sampler()
_sampler.start()
_state = {"n": 0}


def _pre(info):
    _state.update(t=time.perf_counter(), cpu=time.process_time(), kids=_children_cpu(),
                  src=(info.raw_cell or "").strip())
    _state.setdefault("first", _state["src"])  # the notebook's first code cell: which chapter this kernel runs
    _sampler.phases, _sampler.libs = __import__("collections").Counter(), __import__("collections").Counter()
    _sampler.target = threading.get_ident()


def _post(result):
    _sampler.target = None
    if "t" not in _state:
        return
    lines = [ln for ln in _state["src"].splitlines() if ln.strip()]
    rec = {"cell": _state["n"], "first_line": lines[0][:100] if lines else "",
           "wall_s": time.perf_counter() - _state["t"], "cpu_kernel_s": time.process_time() - _state["cpu"],
           "cpu_children_s": _children_cpu() - _state["kids"], "phases": dict(_sampler.phases),
           "libraries": dict(_sampler.libs), "first_cell": _state["first"]}
    _state["n"] += 1
    with open(_OUT, "a") as fh:
        fh.write(json.dumps(rec) + "\n")


get_ipython().events.register("pre_run_cell", _pre)
get_ipython().events.register("post_run_cell", _post)
'''

KEYS = ["chapter", "mode", "scheduling", "jobs", "cell"]


def _share(counts: dict, top: int = 3) -> str:
    """``"grid: runs 81%; pandas 9%"``: the largest shares of a sample."""
    total = sum(counts.values())
    if not total:
        return ""
    return "; ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:top])


def _first_code_cell(name: str) -> str:
    from ldp.book.rerun import source_notebooks
    from ldp.book.rerun.notebooks import cell_source, read_notebook

    (nb,) = source_notebooks([name])
    return next(cell_source(c) for c in read_notebook(nb)["cells"] if c.get("cell_type") == "code").strip()


def profile_chapters(names: list[str], *, quick: bool, serial: bool, warm: bool, interval: float,
                     jobs: int) -> dict[str, tuple[list[dict], float]]:
    """Run chapters with the book's runner (``jobs`` at a time) under the kernel-side profiler.

    Returns each chapter's cell records (in the order run) and the runner's seconds.
    """
    from ldp.book.rerun.build import run_all

    with tempfile.TemporaryDirectory(prefix="ldp-profile-") as tmp:
        tmp = Path(tmp)
        startup = tmp / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        (startup / "00-ldp-profile.py").write_text(STARTUP)
        records = tmp / "cells"
        records.mkdir()
        env = {"IPYTHONDIR": str(tmp / "ipython"), "LDP_PROFILE_OUT": str(records),
               "LDP_PROFILE_INTERVAL": str(interval)}
        if serial:
            env["LDP_PROFILE_SERIAL"] = "1"
        if not warm:
            env["LDP_CACHE_DIR"] = str(tmp / "cache")  # an empty results cache: every grid is computed
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            results = run_all(quick, jobs, True, names, interval=30.0)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        failed = [r for r in results if not r.ok]
        if failed:
            raise SystemExit("\n".join(f"{r.name} failed:\n{r.message}" for r in failed))
        kernels = [[json.loads(line) for line in f.read_text().splitlines()] for f in sorted(records.glob("*.jsonl"))]
    out = {}
    for r in results:  # a kernel's chapter: the one whose first code cell it ran first
        first = _first_code_cell(r.name)
        cells = next((k for k in kernels if k and k[0]["first_cell"] == first), [])
        out[r.name] = ([{k: v for k, v in c.items() if k != "first_cell"} for c in cells], r.seconds)
    return out


def _report(name: str, cells: list[dict], seconds: float, rows: list, lines: list, args, common: dict,
            note: str) -> None:
    """One chapter's rows (a row per cell and one for the chapter) and summary lines."""
    cpu_k = sum(c["cpu_kernel_s"] for c in cells)
    cpu_c = sum(c["cpu_children_s"] for c in cells)
    rows.append({**common, "cell": -1, "first_line": "(the chapter, as the runner times it)",
                 "wall_s": round(seconds, 2), "cpu_kernel_s": round(cpu_k, 2), "cpu_children_s": round(cpu_c, 2),
                 "phases": "", "libraries": ""})
    lines.append(f"\n{name}: {seconds:.1f} s wall (runner), cells {sum(c['wall_s'] for c in cells):.1f} s wall, "
                 f"CPU {cpu_k:.1f} s kernel + {cpu_c:.1f} s workers; load {common['load_before']:.1f} -> "
                 f"{common['load_after']:.1f} {note}")
    for c in cells:
        rows.append({**common, "cell": c["cell"], "first_line": c["first_line"], "wall_s": round(c["wall_s"], 3),
                     "cpu_kernel_s": round(c["cpu_kernel_s"], 3), "cpu_children_s": round(c["cpu_children_s"], 3),
                     "phases": json.dumps(c["phases"], sort_keys=True),
                     "libraries": json.dumps(c["libraries"], sort_keys=True)})
        if c["wall_s"] >= args.min_seconds:
            lines.append(f"  cell {c['cell']:>2} {c['wall_s']:7.1f} s wall {c['cpu_kernel_s']:7.1f} + "
                         f"{c['cpu_children_s']:6.1f} s CPU | {c['first_line'][:60]}")
            lines.append(textwrap.indent(f"phase: {_share(c['phases'])}\nlibrary: {_share(c['libraries'])}",
                                         " " * 10))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="chapters to profile (default: all)")
    ap.add_argument("--quick", action="store_true", help="the chapters' quick values (default: the paper's)")
    ap.add_argument("--serial", action="store_true",
                    help="every grid in the kernel (joblib's sequential backend): the sample sees the runs")
    ap.add_argument("--warm-cache", action="store_true", help="use the repository's results cache as it is")
    ap.add_argument("--interval", type=float, default=0.02, help="seconds between stack samples (default 0.02)")
    ap.add_argument("--min-seconds", type=float, default=1.0, help="print cells of at least this many seconds")
    ap.add_argument("--jobs", type=int, default=1,
                    help="chapters at a time (default 1; 2: as scripts/run_notebooks.py builds the book)")
    ap.add_argument("--out", type=Path, help="CSV the rows are added to (see the module's docstring)")
    args = ap.parse_args(argv)
    os.environ["LDP_ROOT"] = str(ROOT)
    from ldp.book.rerun import source_notebooks

    names = [nb.stem for nb in source_notebooks(args.only)]
    mode, scheduling = ("quick" if args.quick else "paper"), ("serial" if args.serial else "parallel")
    facts = {"commit": provenance.commit(), "machine": provenance.machine(), "command": provenance.command(
        "profile_book.py", argv)}
    rows, lines = [], [f"# {facts['command']}", f"# commit {facts['commit']}; {facts['machine']}",
                       f"# {provenance.now()}; {mode} scale, {scheduling} grids, "
                       f"{'warm' if args.warm_cache else 'empty'} results cache"]
    for batch in ([[name] for name in names] if args.jobs == 1 else [names]):
        load_before, t0 = provenance.load(), time.perf_counter()
        done = profile_chapters(batch, quick=args.quick, serial=args.serial, warm=args.warm_cache,
                                interval=args.interval, jobs=args.jobs)
        load_after = provenance.load()
        for name in batch:
            cells, seconds = done[name]
            first = len(lines)
            _report(name, cells, seconds, rows, lines, args, {
                "chapter": name, "mode": mode, "scheduling": scheduling, "jobs": args.jobs,
                "load_before": round(load_before, 2), "load_after": round(load_after, 2), "date": provenance.now(),
                **facts}, f"({'the whole run:' if len(batch) > 1 else 'with its kernel:'} "
                f"{time.perf_counter() - t0:.0f} s)")
            print("\n".join(lines[first:]), flush=True)
    if args.out is not None:
        new = pd.DataFrame(rows)
        if args.out.is_file():
            old = pd.read_csv(args.out, dtype={"first_line": str})
            done = set(map(tuple, new[KEYS[:4]].drop_duplicates().values))
            old = old[[tuple(r) not in done for r in old[KEYS[:4]].values]]
            new = pd.concat([old, new], ignore_index=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        new.to_csv(args.out, index=False)
        summary = args.out.with_suffix(".txt")
        with open(summary, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
        print(f"wrote {args.out} and {summary}")
    else:
        print("\n".join(lines[:3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
