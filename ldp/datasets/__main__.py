"""Command line of the data sets (used by ``make data`` and ``make book``).

::

    python -m ldp.datasets fetch aol [--dest DIR] [--url URL_OR_PATH] [--force]
    python -m ldp.datasets check aol
    python -m ldp.datasets describe {aol,url,zipf,exponential} [--seed N]
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import datasets as D

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ldp.datasets fetch aol | check aol | describe NAME``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m ldp.datasets", description="Data sets of the PEM paper.")
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download a data file and verify its sha256")
    f.add_argument("dataset", choices=["aol"])
    f.add_argument("--dest", default=None,
                   help="target folder (default: $LDP_DATA_DIR when set, else the project's data/)")
    f.add_argument("--url", default=D.AOL_URL, help="download address, file:// URL or local file to copy")
    f.add_argument("--force", action="store_true", help="download even if a verified file is present")
    c = sub.add_parser("check", help="say whether a data file is where the loaders look and has its sha256")
    c.add_argument("dataset", choices=["aol"])
    d = sub.add_parser("describe", help="print a data set's summary")
    d.add_argument("dataset", choices=["aol", "url", "zipf", "exponential"])
    d.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    if args.command == "fetch":
        dest = Path(args.dest) if args.dest else D.data_folder()
        if dest is None:
            print("error: no destination folder: pass --dest or set LDP_DATA_DIR", file=sys.stderr)
            return 2
        target = Path(dest) / D.AOL_FILENAME
        if not args.force and target.is_file():
            try:
                D.check_aol(target)
                print(f"{target} already present, sha256 verified; nothing to do")
                return 0
            except D.ChecksumError:
                print(f"{target} has a wrong sha256; downloading it again")
        print(f"downloading {args.url} -> {target}")
        try:
            path = D.fetch_aol(dest, url=args.url, force=True)
        except (D.DownloadError, D.ChecksumError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 3 if isinstance(exc, D.ChecksumError) else 2
        print(f"saved {path} (sha256 {D.AOL_SHA256} verified)")
        return 0

    if args.command == "check":
        try:
            path = D.check_aol()
        except (D.DataFileNotFoundError, D.ChecksumError) as exc:
            print(f"AOL data unavailable: {exc}", file=sys.stderr)
            return 1
        print(f"{path}: sha256 verified")
        return 0

    makers = {"aol": lambda: D.aol(), "url": lambda: D.url(rng=args.seed),
              "zipf": lambda: D.zipf(10 ** 6, rng=args.seed), "exponential": lambda: D.exponential(rng=args.seed)}
    try:
        ds = makers[args.dataset]()
    except (D.DataFileNotFoundError, D.ChecksumError, D.DataFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for key, val in ds.describe().items():
        print(f"{key:>12}: {val}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
