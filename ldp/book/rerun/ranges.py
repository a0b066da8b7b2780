"""The ``[range: ...]`` mark of a notebook parameter: its grammar, and whether a value is within the range.

A parameter's comment states the values it accepts, before the ``[quick: ...]`` mark::

    n_users: int = 1_000_000  # users n [range: 1 ≤ x ≤ 10**8] [quick: 100_000]
    epsilons: list = [0.5, 1.0, 2.0]  # privacy budgets [range: 0.1 ≤ x ≤ 8; len ≤ 20]
    n_jobs: int = -1  # joblib workers (-1: all cores) [range: x in (-1,) or 1 ≤ x ≤ 32]
    reading: str = "caption"  # which reading [range: x in ("caption", "text")]
    bench: str = "benchmarks/results/bench_scale.csv"  # its CSV [range: x in files("benchmarks/results/*.csv")]

A range is one or two conditions, separated by ``;``:

* a condition on ``x``, the value (for a list: each of its items): comparisons with numbers, possibly
  chained (``x ≥ 1``, ``0 < x < 1``, ``1 ≤ x ≤ 10**8``), ``x in (...)`` with a tuple of literals or with
  ``files("GLOB")`` (the regular files of the repository that match ``GLOB``, written relative to its root),
  and ``and`` / ``or`` between them;
* a condition on ``len``, the number of items of a list (of characters of a text): ``len ≤ 20``,
  ``2 ≤ len ≤ 20``.

It is written with ``≤``, ``≥`` and ``≠`` because a parameter line holds no other ``=`` than its
assignment (papermill's rule).  The runner checks a value against its parameter's range before anything
runs (:func:`range_problem`); besides, a float (each number of a list) must be finite, whatever the mark.
"""
from __future__ import annotations

import ast
import dataclasses
import glob
import operator
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from ...paths import repo_root
from .literals import literal_value, shown

__all__ = ["Range", "parse_range", "range_problem", "in_range", "repository_files"]

_CMP: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
    ast.NotEq: operator.ne, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_NAMES = ("x", "len")


@dataclasses.dataclass(frozen=True)
class Range:
    """A parsed ``[range: ...]`` mark.

    Attributes
    ----------
    text : str
        As written in the mark.
    each : ast.expr or None
        The condition on ``x``: on the value, or on each item of a list.
    length : ast.expr or None
        The condition on ``len`` (the number of items, or of characters).
    """

    text: str
    each: ast.expr | None = None
    length: ast.expr | None = None


def repository_files(pattern: str) -> tuple[str, ...]:
    """The regular files of the repository that match ``pattern``, as ``/``-separated paths relative to its root.

    A file reached through a symbolic link, or one that resolves outside the
    repository, is not among them.
    """
    root = Path(repo_root()).resolve()
    out = []
    for hit in sorted(glob.glob(pattern, root_dir=root)):
        path = root / hit
        if path.is_file() and not path.is_symlink() and Path(os.path.realpath(path)).is_relative_to(root):
            out.append(PurePosixPath(*Path(hit).parts).as_posix())
    return tuple(out)


def _files_call(node: ast.expr) -> str | None:
    """The pattern of a ``files("GLOB")`` node (checked), else ``None``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "files"):
        return None
    if node.keywords or len(node.args) != 1 or not (isinstance(node.args[0], ast.Constant)
                                                    and isinstance(node.args[0].value, str)):
        raise ValueError(f"{ast.unparse(node)!r}: write files(\"GLOB\") with one quoted pattern")
    pattern = node.args[0].value
    parts = PurePosixPath(pattern).parts
    if not parts or PurePosixPath(pattern).is_absolute() or ".." in parts:
        raise ValueError(f"files({pattern!r}): the pattern must be relative to the repository's root, without '..'")
    return pattern


def _condition(text: str) -> tuple[str, ast.expr]:
    """One condition: its variable (``x`` or ``len``) and its tree, checked to use only what the grammar allows."""
    try:
        tree = ast.parse(text.replace("≤", "<=").replace("≥", ">=").replace("≠", "!="), mode="eval").body
    except SyntaxError:
        raise ValueError(f"{text!r} is not a condition such as 'x ≥ 1', '0 < x < 1' or 'len ≤ 20'") from None
    names: set[str] = set()

    def walk(node):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, (ast.And, ast.Or)):
            for v in node.values:
                walk(v)
            return
        if not isinstance(node, ast.Compare):
            raise ValueError(f"{ast.unparse(node)!r}: only comparisons with x or len, 'and' and 'or' are allowed")
        here = [o.id for o in (node.left, *node.comparators) if isinstance(o, ast.Name) and o.id in _NAMES]
        if not here:
            raise ValueError(f"{ast.unparse(node)!r} mentions neither x nor len")
        names.update(here)
        for op, operand in zip([None, *node.ops], (node.left, *node.comparators)):
            if isinstance(operand, ast.Name) and operand.id in _NAMES:
                continue
            if isinstance(op, (ast.In, ast.NotIn)) and _files_call(operand) is not None:
                continue
            literal_value(ast.unparse(operand))  # a literal, or ValueError

    walk(tree)
    if len(names) != 1:
        raise ValueError(f"{text!r}: a condition is on x or on len, not both; separate them with ';'")
    return names.pop(), tree


def parse_range(text: str) -> Range:
    """The :class:`Range` of a mark's text; ``ValueError`` naming what the grammar does not allow."""
    if "=" in text:
        raise ValueError(f"{text!r}: write ≤, ≥ or ≠ (a parameter line holds no other '=' than its assignment)")
    parts = [p.strip() for p in text.split(";")]
    if len(parts) > 2 or not all(parts):
        raise ValueError(f"{text!r}: write one condition on x, one on len, or both separated by one ';'")
    found: dict[str, ast.expr] = {}
    for part in parts:
        name, tree = _condition(part)
        if name in found:
            raise ValueError(f"{text!r}: two conditions on {name}; join them with 'and'")
        found[name] = tree
    return Range(text, found.get("x"), found.get("len"))


def _holds(tree: ast.expr, value: Any) -> bool:
    def operand(node):
        if isinstance(node, ast.Name) and node.id in _NAMES:
            return value
        pattern = _files_call(node)
        return repository_files(pattern) if pattern is not None else literal_value(ast.unparse(node))

    def holds(node) -> bool:
        if isinstance(node, ast.BoolOp):
            parts = (holds(v) for v in node.values)
            return all(parts) if isinstance(node.op, ast.And) else any(parts)
        left = operand(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = operand(comp)
            try:
                if not _CMP[type(op)](left, right):
                    return False
            except TypeError:
                return False
            left = right
        return True

    return holds(tree)


def range_problem(rng: Range | str, value: Any) -> str | None:
    """What puts ``value`` outside ``rng`` (``"got 100,000 items"``), or ``None`` when it is within.

    For a list, ``len`` is its number of items and ``x`` each item (the
    number of items is checked first); for a text, ``len`` is its number of
    characters.
    """
    rng = parse_range(rng) if isinstance(rng, str) else rng
    sized = isinstance(value, (list, tuple, str))
    if rng.length is not None:
        n = len(value) if sized else None
        if n is None or not _holds(rng.length, n):
            what = "items" if isinstance(value, (list, tuple)) else "characters"
            return f"got {n:,} {what}" if n is not None else f"got {shown(value)}, which has no length"
    if rng.each is not None:
        items = value if isinstance(value, (list, tuple)) else [value]
        bad = [v for v in items if not _holds(rng.each, v)]
        if bad:
            return f"got {shown(bad[0])}" + (" among the items" if isinstance(value, (list, tuple)) else "")
    return None


def in_range(text: str, value: Any) -> bool:
    """Whether ``value`` is within the range ``text`` (see :func:`range_problem`)."""
    return range_problem(text, value) is None
