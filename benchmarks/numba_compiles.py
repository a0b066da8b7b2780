"""Which numba kernels a command compiles, in which processes, with which argument types, and for how long.

Runs ``COMMAND`` with a start-up hook in every Python process it starts (notebook kernels, joblib's workers,
pytest's workers: a ``sitecustomize`` module put first on ``$PYTHONPATH``) that records each compilation numba
reports (its ``numba:compile`` events): process, kernel, start and end time, argument types.  Nested
compilations (a kernel's callees) are inside their caller's interval; only the outermost ones are summed.
A summary is printed: seconds of compilation in all, per kernel, and the kernels compiled more than once --
for several argument types (a read-only array is a type of its own: :func:`ldp.numeric.kernel_input`) or
in several processes at once (before the first had written numba's cache).

Compilation happens only where numba's cache has no entry, so run it on what a fresh clone runs: delete the
compiled kernels first (``find ldp -name '*.nbi' -delete; find ldp -name '*.nbc' -delete``).

Usage::

    python benchmarks/numba_compiles.py --out /tmp/compiles.tsv -- make book QUICK=1
    python benchmarks/numba_compiles.py --out /tmp/compiles.tsv -- .venv/bin/python -m pytest -n 2 -q
    python benchmarks/numba_compiles.py --summary /tmp/compiles.tsv      # summarize a recorded file again

The times are wall seconds of the compiling process: with other processes busy, an upper bound of its CPU.
"""
from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The hook: registers a numba event listener as soon as a process imports ldp (not before: most processes
# never do), and appends one line per compilation to $NUMBA_COMPILES_OUT.
HOOK = r'''
import os, sys, time
_OUT = os.environ.get("NUMBA_COMPILES_OUT")
if _OUT:
    import importlib.abc

    def _install():
        from numba.core import event

        class _Listener(event.Listener):
            def __init__(self):
                self.started = []

            def on_start(self, ev):
                self.started.append(time.time())

            def on_end(self, ev):
                data = ev.data or {}
                func = getattr(data.get("dispatcher"), "py_func", None)
                name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"
                start = self.started.pop()
                with open(_OUT, "a", encoding="utf-8") as f:
                    f.write(f"{os.getpid()}\t{name}\t{start:.3f}\t{time.time():.3f}\t{len(self.started)}\t"
                            f"{data.get('args')}\n")

        event.register("numba:compile", _Listener())

    class _OnImportLdp(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname == "ldp":
                sys.meta_path.remove(self)
                _install()
            return None

    sys.meta_path.insert(0, _OnImportLdp())
'''


def summarize(path: Path) -> str:
    """The summary of a recorded file: totals, per kernel, and the kernels compiled more than once."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        pid, name, start, end, depth, args = line.split("\t", 5)
        if depth == "0":  # outermost: a callee's compilation is inside its caller's interval
            rows.append((pid, name, float(end) - float(start), args))
    per = collections.defaultdict(list)
    for pid, name, secs, args in rows:
        per[name].append((secs, pid, args))
    out = [f"{len(rows)} compilations in {len({r[0] for r in rows})} processes, {sum(r[2] for r in rows):.1f} s "
           f"in all; {len({(r[1], r[3]) for r in rows})} distinct (kernel, argument types)"]
    for name, items in sorted(per.items(), key=lambda kv: -sum(s for s, _, _ in kv[1])):
        out.append(f"{sum(s for s, _, _ in items):7.1f} s  {len(items)}x  {name}")
        if len(items) > 1:
            for secs, pid, args in items:
                out.append(f"           {secs:5.1f} s in process {pid}: {args[:160]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="the file each compilation is appended to (tab-separated)")
    ap.add_argument("--summary", type=Path, help="only summarize this recorded file")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = ap.parse_args(argv)
    if args.summary:
        print(summarize(args.summary))
        return 0
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.out is None:
        ap.error("give --out FILE and a command after --")
    args.out.unlink(missing_ok=True)
    args.out.touch()
    with tempfile.TemporaryDirectory() as hook_dir:
        Path(hook_dir, "sitecustomize.py").write_text(HOOK, encoding="utf-8")
        env = dict(os.environ, NUMBA_COMPILES_OUT=str(args.out.resolve()),
                   PYTHONPATH=os.pathsep.join([hook_dir, *filter(None, [os.environ.get("PYTHONPATH")])]))
        code = subprocess.call(command, env=env)
    print(summarize(args.out))
    return code


if __name__ == "__main__":
    sys.exit(main())
