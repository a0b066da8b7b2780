"""A notebook's parameters: reading and checking its ``parameters`` cell, values typed on the command line.

The values a notebook runs with are merged before anything runs::

    notebook defaults  <  quick values (with --quick)  <  your --set values

Values are Python literals with constant arithmetic (:func:`literal_value`),
checked against the parameter's declared type (a float, and each number of a
list, must be finite) and, where the parameter's comment states it with a
``[range: ...]`` mark, its allowed range (:func:`check_value`), before the
notebook starts.  The grammar of the range mark, bounds on the value
(``1 ≤ x ≤ 10**8``) and on a list's length (``; len ≤ 20``), is in
:mod:`ldp.book.rerun.ranges`.
"""
from __future__ import annotations

import ast
import dataclasses
import difflib
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .literals import MAX_LITERAL_CHARS, is_number, literal_value, shown
from .notebooks import NotebookError, cell_source, read_notebook
from .ranges import in_range, parse_range, range_problem

__all__ = ["ParameterError", "Parameter", "TYPE_HINTS", "parameters_cell", "notebook_parameters", "literal_value",
           "check_value", "in_range", "parse_assignments", "parameter_listing", "resolve_parameters",
           "quick_parameters"]

#: the types a parameter may be declared with, and what a value of each looks like
TYPE_HINTS = {"int": "an integer such as 3 or 2**20", "float": "a number such as 2.5 or 1e-3",
              "bool": "True or False", "str": "text such as caption",
              "list": "a list such as [1.0, 3.0]"}
_QUICK_MARK = re.compile(r"\s*\[quick:\s*(?P<value>.*)\]\s*$")
_RANGE_MARK = re.compile(r"\s*\[range:\s*(?P<value>[^\[\]]*)\]\s*$")


class ParameterError(ValueError):
    """A parameter name or value that the notebook does not accept."""


_MISSING = object()


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One entry of a notebook's ``parameters`` cell.

    Attributes
    ----------
    name, type : str
        The variable and its annotation (``int``, ``float``, ``bool``, ``str``, ``list``).
    default_text : str
        The default as written in the cell (``2**20``).
    default : object
        Its value (:func:`literal_value`).
    help : str
        The ``# meaning`` comment without the ``[quick: ...]`` mark.
    quick : object
        The value in quick mode, or the default when the comment has no mark.
    has_quick : bool
        Whether the comment has a ``[quick: ...]`` mark.
    quick_text : str
        The quick value as written in the mark ('' without one).
    range_text : str
        The allowed range as written in the ``[range: ...]`` mark ('' without one).
    """

    name: str
    type: str
    default_text: str
    default: Any
    help: str
    quick: Any
    has_quick: bool
    quick_text: str = ""
    range_text: str = ""

    def describe(self) -> str:
        """``name: type = default  # help (allowed: range) (quick: value)``, as in the notebook."""
        allowed = f" (allowed: {self.range_text})" if self.range_text else ""
        quick = f" (quick: {self.quick_text})" if self.has_quick else ""
        return f"{self.name}: {self.type} = {self.default_text}  # {self.help}{allowed}{quick}"



def parameters_cell(nb_path: Path) -> str:
    """Return the source of the single cell tagged ``parameters``, after checking it.

    Raises
    ------
    NotebookError
        If there is no such cell, more than one, or its code is not a list of
        type-annotated assignments, one per line, that includes ``quick: bool = False``.
    """
    name = Path(nb_path).name
    cells = [c for c in read_notebook(nb_path).get("cells", [])
             if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise NotebookError(f"{name}: needs exactly one cell tagged 'parameters', found {len(cells)}")
    src = cell_source(cells[0])
    try:
        tree = ast.parse(src)
    except SyntaxError as exc:
        raise NotebookError(f"{name}: parameters cell: {exc}") from exc
    for lineno, line in enumerate(src.splitlines(), 1):
        if line.count("=") > 1 and not line.lstrip().startswith("#"):
            raise NotebookError(
                f"{name}: parameters cell line {lineno}: write one `=` per line "
                "(papermill's parameter inspection skips lines with an `=` in the value or comment)"
            )
    names = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is None:
                raise NotebookError(f"{name}: parameter {node.target.id!r} has no default value")
            names[node.target.id] = node
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring-like string is fine
        else:
            raise NotebookError(
                f"{name}: parameters cell line {node.lineno}: only "
                "type-annotated assignments `name: type = default  # meaning` are allowed"
            )
    quick = names.get("quick")
    if (quick is None or ast.unparse(quick.annotation) != "bool"
            or not (isinstance(quick.value, ast.Constant) and quick.value.value is False)):
        raise NotebookError(f"{name}: parameters cell must define `quick: bool = False`")
    return src


def notebook_parameters(nb_path: Path) -> dict[str, Parameter]:
    """The parameters of a notebook, read with :func:`papermill.inspect_notebook`.

    The cell is checked first (:func:`parameters_cell`); every default and
    every ``[quick: VALUE]`` mark must be a value of the declared type.

    Returns
    -------
    dict of str to Parameter
        In the order of the cell.

    Raises
    ------
    NotebookError
        A convention is broken; the message says which and where.
    """
    parameters_cell(nb_path)
    papermill = _papermill()
    name = Path(nb_path).name
    out: dict[str, Parameter] = {}
    for p in papermill.inspect_notebook(str(nb_path)).values():
        ptype = p["inferred_type_name"] if p["inferred_type_name"] != "None" else "object"
        help_text, quick_text = p["help"], None
        mark = _QUICK_MARK.search(help_text)
        if mark:
            help_text, quick_text = help_text[:mark.start()].rstrip(), mark["value"]
        range_text = ""
        rmark = _RANGE_MARK.search(help_text)
        if rmark:
            help_text, range_text = help_text[:rmark.start()].rstrip(), rmark["value"].strip()
            try:
                parse_range(range_text)
            except ValueError as exc:
                raise NotebookError(f"{name}: parameter {p['name']!r}: bad [range: {range_text}] mark: {exc}") \
                    from None
        try:
            default = literal_value(p["default"])
        except ValueError:
            default = _MISSING  # an expression the runner cannot evaluate: never injected
        param = Parameter(p["name"], ptype, p["default"].strip(), default, help_text, default, False,
                          range_text=range_text)
        if default is not _MISSING:
            try:
                default = check_value(param, default)
            except ParameterError as exc:
                raise NotebookError(f"{name}: the default of {exc}") from None
            param = dataclasses.replace(param, default=default, quick=default)
        if quick_text is not None:
            try:
                quick = check_value(param, literal_value(quick_text) if ptype != "str" else
                                    _str_value(quick_text))
            except ValueError as exc:
                raise NotebookError(f"{name}: parameter {p['name']!r}: bad [quick: {quick_text}] mark: {exc}") \
                    from None
            param = dataclasses.replace(param, quick=quick, has_quick=True, quick_text=quick_text.strip())
        out[param.name] = param
    return out

def _str_value(text: str) -> str:
    """A str parameter's value: a quoted literal's content, else the text itself."""
    try:
        value = literal_value(text)
    except ValueError:
        return text.strip()
    return value if isinstance(value, str) else text.strip()


def _kind(x) -> str:
    return "a bool" if isinstance(x, bool) else f"a {type(x).__name__}"


def check_value(param: Parameter, value: Any) -> Any:
    """``value`` as a value of ``param``'s declared type and range; :class:`ParameterError` if it is not one.

    An int is accepted for a float (and converted); a bool is not an int; a
    float, and each float of a list, must be finite.  A list must not be
    empty, and when the default list holds only integers (only numbers), so
    must the new one (floats are converted like floats).  The value must
    satisfy the parameter's ``[range: ...]`` mark when it has one: each item
    of a list the condition on ``x``, the list's length the one on ``len``
    (:func:`ldp.book.rerun.ranges.range_problem`).
    """
    value = _check_type(param, value)
    if param.range_text:
        why = range_problem(param.range_text, value)
        if why is not None:
            raise ParameterError(f"{param.name} must be{_allowed(param)} "
                                 f"({_RANGE_WORDS.get(param.type, 'x: the value')}); {why}")
    return value


#: what ``x`` and ``len`` stand for in a range, for the types where it is not simply "the value"
_RANGE_WORDS = {"list": "x: each item, len: the number of items", "str": "x: the text, len: its number of characters"}


def _allowed(param: Parameter) -> str:
    """`` within [range: ...]`` for a parameter with a range mark, else ''."""
    return f" within [range: {param.range_text}]" if param.range_text else ""


def _finite(param: Parameter, value: float, what: str = "") -> float:
    if not math.isfinite(value):
        raise ParameterError(f"{what or param.name} must be a finite number{_allowed(param)}, got {value!r}")
    return value


def _check_type(param: Parameter, value: Any) -> Any:
    t, name = param.type, param.name
    bad = ParameterError(f"{name} must be {TYPE_HINTS.get(t, t)}{_allowed(param)} (type {t}), "
                         f"got {shown(value)} ({_kind(value)})")
    if t == "bool":
        if not isinstance(value, bool):
            raise bad
        return value
    if t == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad
        return value
    if t == "float":
        if not is_number(value):
            raise bad
        return _finite(param, float(value))
    if t == "str":
        if not isinstance(value, str):
            raise bad
        return value
    if t == "list":
        if not isinstance(value, (list, tuple)):
            raise bad
        value = list(value)
        default = param.default if isinstance(param.default, list) else []
        if default and not value:
            raise ParameterError(f"{name} must hold at least one value, got []")
        if default and all(isinstance(x, int) and not isinstance(x, bool) for x in default):
            wrong = [x for x in value if not isinstance(x, int) or isinstance(x, bool)]
            if wrong:
                raise ParameterError(f"{name} must be a list of integers (like its default {param.default_text}), "
                                     f"got {shown(value)}")
        elif default and all(is_number(x) for x in default):
            wrong = [x for x in value if not is_number(x)]
            if wrong:
                raise ParameterError(f"{name} must be a list of numbers (like its default {param.default_text}), "
                                     f"got {shown(value)}")
            value = [_finite(param, x, f"each item of {name}") if isinstance(x, float) else x for x in value]
            if all(isinstance(x, float) for x in default):
                value = [float(x) for x in value]
        return value
    return value  # an annotation the runner does not know: any literal


def parse_assignments(items: Sequence[str]) -> dict[str, str]:
    """``["a=1", "b=[1, 2] c=x"]`` -> ``{"a": "1", "b": "[1, 2]", "c": "x"}``.

    One item may hold several settings separated by white space before the
    next ``NAME=`` (what ``make rerun SET='...'`` passes).

    Raises
    ------
    ParameterError
        An item without ``NAME=``, or a name given twice.
    """
    out: dict[str, str] = {}
    for item in items:
        for part in re.split(r"\s+(?=[A-Za-z_]\w*\s*=)", item.strip()):
            if not part:
                continue
            m = re.fullmatch(r"([A-Za-z_]\w*)\s*=(.*)", part, flags=re.S)
            if not m:
                raise ParameterError(f"--set {part!r}: write NAME=VALUE, e.g. --set 'epsilons=[1.0, 3.0]'")
            name, value = m[1], m[2].strip()
            if name in out:
                raise ParameterError(f"--set: {name} is set twice ({out[name]!r} and {value!r})")
            out[name] = value
    return out


def parameter_listing(nb_path: Path, params: dict[str, Parameter] | None = None) -> str:
    """The parameters of a notebook, one per line, as an error message lists them."""
    params = params if params is not None else notebook_parameters(nb_path)
    lines = [f"Parameters of {Path(nb_path).stem} (set with --set NAME=VALUE; quick only with --quick):"]
    lines += [f"  {p.describe()}" for p in params.values()]
    return "\n".join(lines)


def resolve_parameters(nb_path: Path, sets: dict[str, str] | None = None, *,
                       quick: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The values a notebook runs with: defaults < quick values (``quick``) < ``sets``.

    Parameters
    ----------
    nb_path : pathlib.Path
        The source notebook.
    sets : dict of str to str, optional
        ``NAME -> VALUE`` as typed (see :func:`parse_assignments`); each value
        is read with :func:`literal_value` (a ``str`` parameter also takes a
        bare word) and checked against the parameter's type.
    quick : bool
        Use the notebook's quick values for the parameters not in ``sets``.

    Returns
    -------
    (values, injected) : tuple of dict
        ``values``: every parameter's value; ``injected``: what papermill is
        given (the values that differ from the defaults, and ``quick``).

    Raises
    ------
    ParameterError
        An unknown name or a value of the wrong type; the message lists the
        notebook's parameters with their types and defaults.
    """
    params = notebook_parameters(nb_path)
    values = {n: (p.quick if quick else p.default) for n, p in params.items()}
    values["quick"] = bool(quick)
    user: dict[str, Any] = {}
    for name, text in (sets or {}).items():
        try:
            if name == "quick":
                raise ParameterError("quick is set with --quick (make rerun ... QUICK=1), not with --set")
            if name not in params:
                close = difflib.get_close_matches(name, list(params), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise ParameterError(f"{Path(nb_path).stem} has no parameter {name!r}{hint}")
            p = params[name]
            if len(text) > MAX_LITERAL_CHARS:  # before reading it, whatever its type
                raise ParameterError(f"{name} must be {TYPE_HINTS.get(p.type, p.type)}{_allowed(p)}, written in "
                                     f"at most MAX_LITERAL_CHARS = {MAX_LITERAL_CHARS:,} characters; got "
                                     f"{len(text):,}")
            try:
                value = _str_value(text) if p.type == "str" else literal_value(text)
            except ValueError as exc:
                typed = text if len(text) <= 80 else f"{text[:75]} ..."
                raise ParameterError(f"{name}={typed}: {exc}; {name} must be {TYPE_HINTS.get(p.type, p.type)}"
                                     f"{_allowed(p)}") from None
            user[name] = check_value(p, value)
        except ParameterError as exc:
            raise ParameterError(f"{exc}\n\n{parameter_listing(nb_path, params)}") from None
    values.update(user)
    injected = {n: v for n, v in values.items()
                if n == "quick" or params[n].default is _MISSING or v != params[n].default
                or type(v) is not type(params[n].default)}
    if not quick:
        injected.pop("quick")
    missing = [n for n, v in values.items() if v is _MISSING]
    for n in missing:  # defaults the runner cannot evaluate stay the notebook's own
        values[n] = params[n].default_text
        injected.pop(n, None)
    return values, injected


def quick_parameters(nb_path: Path) -> dict[str, Any]:
    """What papermill is given in quick mode: the quick values and ``quick=True``."""
    return resolve_parameters(nb_path, quick=True)[1]



def _papermill():
    try:
        import papermill
    except ImportError:  # pragma: no cover - the venv has it (requirements.txt)
        raise NotebookError("papermill is not installed: run `make setup` and use .venv/bin/python") from None
    return papermill

