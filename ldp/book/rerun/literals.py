"""Values typed on the command line: Python literals with constant arithmetic, read without executing anything."""
from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

__all__ = ["literal_value", "is_number", "shown", "MAX_LITERAL_CHARS"]

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_INT_BITS = 256
#: the longest text :func:`literal_value` reads (a list of a few thousand numbers)
MAX_LITERAL_CHARS = 2**16


def literal_value(text: str) -> Any:
    """A Python literal, with constant arithmetic, evaluated safely.

    Accepts numbers, strings, ``True``/``False``/``None``, lists and tuples of
    these, and ``+ - * / // % **`` between numbers (``2**20``, ``10**6``,
    ``1/3``).  Nothing is executed: names, calls and attributes are refused.
    The text is at most :data:`MAX_LITERAL_CHARS` characters long, and an
    integer computed from it at most 256 bits.

    Raises
    ------
    ValueError
        The text is not such a literal (the message says why).
    """
    text = str(text)
    if len(text) > MAX_LITERAL_CHARS:
        raise ValueError(f"the text is {len(text):,} characters long, more than MAX_LITERAL_CHARS = "
                         f"{MAX_LITERAL_CHARS:,}")
    try:
        return _eval(ast.parse(text.strip(), mode="eval").body, text)
    except SyntaxError as exc:  # also an integer literal of more digits than Python converts
        raise ValueError(f"{shown(text)} is not a Python literal ({exc.msg})") from None
    except (MemoryError, RecursionError):  # the parser's or the walk's stack: nested too deeply
        raise ValueError(f"{shown(text)} is nested too deeply") from None


def is_number(x) -> bool:
    """Whether ``x`` is an int or a float (a bool is not a number here)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def shown(value: Any, limit: int = 120) -> str:
    """``repr(value)``, cut to about ``limit`` characters (a message never repeats a long value)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 5]} ...{text[-1]}"


def _eval(node, text):
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_eval(e, text) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        x = _eval(node.operand, text)
        if is_number(x):
            return _UNARY[type(node.op)](x)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _eval(node.left, text), _eval(node.right, text)
        if is_number(a) and is_number(b):
            if isinstance(node.op, ast.Pow) and abs(b) * math.log2(max(abs(a), 2)) > _MAX_INT_BITS:
                raise ValueError(f"{shown(text)}: {shown(a)}**{shown(b)} is too large")
            try:
                out = _BINOPS[type(node.op)](a, b)
            except ArithmeticError as exc:
                raise ValueError(f"{shown(text)}: {exc}") from None
            if isinstance(out, int) and out.bit_length() > _MAX_INT_BITS:
                raise ValueError(f"{shown(text)} is too large")
            if isinstance(out, complex):
                raise ValueError(f"{shown(text)} is not a real number")
            return out
    raise ValueError(f"{shown(text)} is not a Python literal (numbers, 'text', True/False, [lists], "
                     f"and + - * / ** between numbers)")
