#!/usr/bin/env python
"""Snapshot and compare the figures' plotted data (``NAME.csv``) of book builds.

Every figure of the book is saved with the table of what it plots
(``ldp.book.plotting.save_figure(..., data=...)``), under
``_generated/cache/{quick,full}/figures/NAME.csv``. Before code is moved, take a
snapshot; after, build again and compare: every CSV must be identical, or each
difference explained.

Usage (from anywhere; paths resolve from the working folder)::

    .venv/bin/python scripts/figure_data.py snapshot before/        # after make book [QUICK=1]
    .venv/bin/python scripts/figure_data.py snapshot after/
    .venv/bin/python scripts/figure_data.py compare before/ after/

``snapshot OUTDIR`` copies the CSVs of each build mode that has figures
(``--mode`` to choose) to ``OUTDIR/{quick,full}/`` and writes
``OUTDIR/manifest.json`` (sha256, bytes, rows and columns per file, and the git
commit of the working tree, if any; no timestamps).

``compare OLD NEW`` pairs the CSVs of two snapshots (or of any two folders of
CSVs) by relative path and lists the identical ones, the missing and the new
ones, and for each differing file the row counts, the columns that came or went
and, per common column, the largest absolute and relative difference (numeric
columns) or the number of differing cells (other columns). Exit status: 0 when
every file is byte-identical, 1 when anything differs, 2 on a usage error.
``--ignore-column NAME`` leaves a column out of the verdict (for a column that
is not reproducible by design, such as a wall-clock time; no figure has one now).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_generated" / "cache"
MODES = ("quick", "full")


def sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_table(path: Path) -> pd.DataFrame:
    """A figure CSV with every cell as its exact text ("" for an empty field)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out + ("+modified" if dirty else "")


# --------------------------------------------------------------------------- #
# snapshot
# --------------------------------------------------------------------------- #
def snapshot(out: Path, modes: list[str], cache: Path = CACHE) -> dict:
    """Copy ``cache/<mode>/figures/*.csv`` to ``out/<mode>/`` and write ``out/manifest.json``.

    Parameters
    ----------
    out : pathlib.Path
        The snapshot folder (created; must not hold a snapshot already).
    modes : list of str
        Build modes to copy; a mode without figure CSVs is an error.
    cache : pathlib.Path
        The per-mode build cache (default ``_generated/cache``).

    Returns
    -------
    dict
        The manifest.
    """
    sources = {}
    for mode in modes:
        files = sorted((cache / mode / "figures").glob("*.csv"))
        if not files:
            raise SystemExit(f"snapshot: no figure CSVs in {cache / mode / 'figures'}: "
                             f"build that mode first (make book{' QUICK=1' if mode == 'quick' else ''})")
        sources[mode] = files
    if (out / "manifest.json").exists():
        raise SystemExit(f"snapshot: {out} already holds a snapshot; choose a new folder")
    manifest = {"commit": _git_commit(), "modes": {}}
    for mode, files in sources.items():
        (out / mode).mkdir(parents=True, exist_ok=True)
        entries = {}
        for src in files:
            dst = out / mode / src.name
            shutil.copyfile(src, dst)
            table = read_table(dst)
            entries[src.name] = {"sha256": sha256(dst), "bytes": dst.stat().st_size,
                                 "rows": int(len(table)), "columns": list(table.columns)}
        manifest["modes"][mode] = entries
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


# --------------------------------------------------------------------------- #
# compare
# --------------------------------------------------------------------------- #
@dataclass
class FileDiff:
    """How one CSV differs between two snapshots."""

    name: str
    rows: tuple[int, int]
    columns_removed: list[str] = field(default_factory=list)
    columns_added: list[str] = field(default_factory=list)
    # column -> (max abs difference, max relative difference) for numeric columns,
    # or the number of differing cells for the others
    numeric: dict[str, tuple[float, float]] = field(default_factory=dict)
    text: dict[str, int] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.rows[0] != self.rows[1] or self.columns_removed or self.columns_added
                    or self.numeric or self.text)

    def lines(self) -> list[str]:
        out = []
        if self.rows[0] != self.rows[1]:
            out.append(f"rows {self.rows[0]} -> {self.rows[1]} (values compared over the first "
                       f"{min(self.rows)} rows)")
        if self.columns_removed:
            out.append(f"columns removed: {', '.join(self.columns_removed)}")
        if self.columns_added:
            out.append(f"columns added: {', '.join(self.columns_added)}")
        for col, (a, r) in self.numeric.items():
            same = " (same numbers, written differently)" if a == 0 else ""
            out.append(f"column {col}: max abs diff {a:.6g}, max rel diff {r:.6g}{same}")
        for col, n in self.text.items():
            out.append(f"column {col}: {n} cell(s) differ")
        if self.ignored:
            out.append(f"ignored columns: {', '.join(self.ignored)}")
        return out


def _numbers(cells: pd.Series) -> pd.Series | None:
    """The column as floats if every non-empty cell is a number, else None."""
    values = pd.to_numeric(cells.where(cells != ""), errors="coerce")
    return values if not (values.isna() & (cells != "")).any() else None


def diff_tables(name: str, old: pd.DataFrame, new: pd.DataFrame, ignore: set[str] = frozenset()) -> FileDiff:
    """Column-by-column differences of two figure tables (rows paired by position).

    Numeric columns (every non-empty cell parses as a float): the largest
    absolute difference and the largest relative difference
    ``|a - b| / max(|a|, |b|)``; an empty cell against a number, or infinities
    that differ, count as ``inf``. Other columns: the number of differing cells.
    """
    d = FileDiff(name, (len(old), len(new)))
    d.columns_removed = [c for c in old.columns if c not in new.columns]
    d.columns_added = [c for c in new.columns if c not in old.columns]
    n = min(len(old), len(new))
    for col in [c for c in old.columns if c in new.columns]:
        if col in ignore:
            d.ignored.append(col)
            continue
        a, b = old[col].iloc[:n].reset_index(drop=True), new[col].iloc[:n].reset_index(drop=True)
        if a.equals(b):
            continue
        fa, fb = _numbers(a), _numbers(b)
        if fa is None or fb is None:
            d.text[col] = int((a != b).sum())
            continue
        abs_max = rel_max = 0.0
        for x, y in zip(fa.to_numpy(float), fb.to_numpy(float)):
            if (math.isnan(x) and math.isnan(y)) or x == y:
                continue
            if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
                abs_max = rel_max = math.inf
                continue
            delta = abs(x - y)
            abs_max = max(abs_max, delta)
            rel_max = max(rel_max, delta / max(abs(x), abs(y)))
        d.numeric[col] = (abs_max, rel_max)  # (0, 0): same numbers, different text ("1" and "1.0")
    return d


def _csv_files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*.csv"))}


def compare(old: Path, new: Path, ignore: set[str] = frozenset(), out=sys.stdout) -> int:
    """Print the comparison of the CSVs under ``old`` and ``new``; return the exit status."""
    for folder in (old, new):
        if not folder.is_dir():
            print(f"compare: {folder} is not a folder", file=sys.stderr)
            return 2
    a, b = _csv_files(old), _csv_files(new)
    if not a and not b:
        print(f"compare: no CSV files under {old} or {new}", file=sys.stderr)
        return 2
    identical, differing, missing, added = [], [], sorted(set(a) - set(b)), sorted(set(b) - set(a))
    for rel in sorted(set(a) & set(b)):
        if sha256(a[rel]) == sha256(b[rel]):
            identical.append(rel)
            continue
        d = diff_tables(rel, read_table(a[rel]), read_table(b[rel]), ignore)
        if d.differs:
            differing.append(d)
        else:  # only ignored columns differ
            identical.append(rel + " (up to ignored columns)")
    print(f"identical: {len(identical)}", file=out)
    for rel in identical:
        print(f"  {rel}", file=out)
    for title, names in (("missing in NEW", missing), ("new in NEW", added)):
        if names:
            print(f"{title}: {len(names)}", file=out)
            for rel in names:
                print(f"  {rel}", file=out)
    if differing:
        print(f"differing: {len(differing)}", file=out)
        for d in differing:
            print(f"  {d.name}", file=out)
            for line in d.lines():
                print(f"    {line}", file=out)
    ok = not (differing or missing or added)
    print("RESULT: " + ("all figure data identical" if ok else "figure data differ"), file=out)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_snap = sub.add_parser("snapshot", help="copy the build's figure CSVs with a sha256 manifest")
    p_snap.add_argument("outdir", type=Path)
    p_snap.add_argument("--mode", choices=[*MODES, "all"], default="all",
                        help="build mode(s) to copy (default: every mode that has been built)")
    p_cmp = sub.add_parser("compare", help="compare two snapshots (or folders of CSVs)")
    p_cmp.add_argument("old", type=Path)
    p_cmp.add_argument("new", type=Path)
    p_cmp.add_argument("--ignore-column", action="append", default=[], metavar="NAME",
                       help="leave this column out of the verdict (repeatable)")
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        if args.mode == "all":
            modes = [m for m in MODES if any((CACHE / m / "figures").glob("*.csv"))]
            if not modes:
                raise SystemExit(f"snapshot: no figure CSVs under {CACHE}: run make book [QUICK=1] first")
        else:
            modes = [args.mode]
        manifest = snapshot(args.outdir, modes)
        for mode, entries in manifest["modes"].items():
            print(f"{mode}: {len(entries)} CSV file(s) -> {args.outdir / mode}")
            for fname, e in entries.items():
                print(f"  {fname}: {e['rows']} rows, {len(e['columns'])} columns, sha256 {e['sha256'][:12]}")
        return 0
    return compare(args.old, args.new, set(args.ignore_column))


if __name__ == "__main__":
    sys.exit(main())
