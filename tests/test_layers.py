"""The layer contract of ``ldp/`` (see ``ldp/__init__.py``): imports go downwards only, no cycle, no private reach.

The import order, the absence of cycles, private modules, the independence of the
oracles and of the protocols and the drawing-free computing layers are the
import-linter contracts of ``pyproject.toml`` (grimp reads every import statement,
function-level ones included); this file runs them, shows on a scratch copy that an
upward import inside a function breaks them, and adds what import-linter cannot
see: private *names* (``from ..x import _y``, ``mod._y``) used across subpackages,
and duck typing (``hasattr(x, "user_index")``) of ldp's own types.
"""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LDP = ROOT / "ldp"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def run_lint_imports(cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_import_contracts_are_kept():
    res = run_lint_imports(ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert " broken" in res.stdout and "0 broken" in res.stdout, res.stdout


def test_an_upward_import_inside_a_function_breaks_the_contract(tmp_path):
    """The contract can fail: a scratch copy of ldp/ with one upward import inside a function."""
    shutil.copytree(LDP, tmp_path / "ldp", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "ldp" / "oracles" / "grr.py", "a") as f:
        f.write("\n\ndef _upwards():\n    from ..protocols import PEM\n    return PEM\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    res = run_lint_imports(tmp_path, env=env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "ldp.oracles is not allowed to import ldp.protocols" in res.stdout, res.stdout
    assert "ldp.oracles.grr -> ldp.protocols" in res.stdout, res.stdout


def test_the_docstring_names_every_layer_of_the_contract():
    """Each layers contract's container (ldp, ldp.book, ldp.book.chapters) names every layer in its docstring."""
    import importlib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts = [c for c in config["contracts"] if c["type"] == "layers"]
    assert {c["containers"][0] for c in contracts} == {"ldp", "ldp.book", "ldp.book.chapters"}
    for contract in contracts:
        (container,) = contract["containers"]
        doc = importlib.import_module(container).__doc__ or ""
        for layer in contract["layers"]:
            for tail in layer.replace("|", ":").split(":"):
                assert f"``{tail.strip()}``" in doc, f"{container}'s docstring does not place {tail.strip()!r}"


# ----- private names across modules (AST) --------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _import_target(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _own_private_names(tree: ast.AST) -> set[str]:
    """Private names a module defines itself (functions, classes, assigned names and attributes)."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            own.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            own.add(node.value)  # object.__setattr__(self, "_x", ...), __slots__ = ("_x",)
    return {n for n in own if _private(n)}


def private_reach(source: str, module: str, is_package: bool = False) -> list[str]:
    """Where ``module`` (given as ``source``) uses a private name of another module (its own package's too)."""
    tree = ast.parse(source)
    found, foreign = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _import_target(node, module, is_package)
            if not target.startswith("ldp") or target == module:
                continue
            if any(_private(part) for part in target.split(".")):
                found.append(f"line {node.lineno}: from {target} import ... (a private module)")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"line {node.lineno}: from {target} import {alias.name}")
                foreign.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ldp") and alias.name != module:
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"line {node.lineno}: import {alias.name} (a private module)")
                    foreign.add(alias.asname or alias.name.split(".")[0])
    own = _own_private_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            root = base
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in foreign:
                found.append(f"line {node.lineno}: {ast.unparse(node)} (private name of another module)")
            elif node.attr not in own:
                found.append(f"line {node.lineno}: {ast.unparse(node)} (a private attribute this module does not own)")
    return found


def test_the_private_reach_scan_finds_what_it_should():
    mod = "ldp.protocols.pem"
    assert private_reach("from ..oracles.base import _REGISTRY\n", mod)
    assert private_reach("from ldp.oracles import _kernels\n", mod)
    assert private_reach("from ..engines._x import y\n", mod)
    assert private_reach("from .. import oracles\nx = oracles.base._REGISTRY\n", mod)
    assert private_reach("import ldp.core.question as q\nq._labels\n", mod)
    assert private_reach("def f(sorted_data):\n    sorted_data._cache = {}\n", mod)
    assert private_reach("from .base import _exp\n", mod)  # a sibling module's private name
    assert private_reach("from . import base\nbase._exp(1)\n", mod)
    # a module's and a class's own private names are fine
    assert not private_reach("def _f():\n    return 1\n\n\nx = _f()\n", mod)
    assert not private_reach("class A:\n    def __init__(self):\n        self._p = 1\n\n"
                             "    def __eq__(self, other):\n        return other._p == self._p\n", mod)
    assert not private_reach("from ..core import Plan\nx = Plan.__name__\n", mod)


@pytest.mark.parametrize("path", sorted(LDP.rglob("*.py")), ids=lambda p: str(p.relative_to(LDP)))
def test_no_private_name_crosses_a_module(path):
    module = _module_name(path)
    found = private_reach(path.read_text(), module, is_package=path.name == "__init__.py")
    assert not found, f"{path.relative_to(ROOT)} reaches into private parts:\n" + "\n".join(found)


@pytest.mark.parametrize("path", sorted(Path(__file__).parent.glob("*.py")), ids=lambda p: p.name)
def test_tests_use_the_public_api(path):
    """No test reaches into ldp's private parts (``P._plan``, ``from ldp.x import _y``): tests go through the API."""
    found = private_reach(path.read_text(), f"tests.{path.stem}")
    assert not found, f"tests/{path.name} uses private names:\n" + "\n".join(found)


# ----- no duck typing of ldp's own types -------------------------------------------------


def _member_names() -> set[str]:
    """Attributes, properties and methods that ldp's classes define."""
    names = set()
    for path in LDP.rglob("*.py"):
        for cls in ast.walk(ast.parse(path.read_text())):
            if not isinstance(cls, ast.ClassDef):
                continue
            for node in ast.walk(cls):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(node.name)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.add(node.target.id)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    names.add(node.attr)
    return {n for n in names if not n.startswith("__")}


def duck_typing(source: str, members: set[str]) -> list[str]:
    """``hasattr(x, "name")`` / ``getattr(x, "name", default)`` on a member of an ldp class."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and (node.func.id == "hasattr" and len(node.args) == 2
                     or node.func.id == "getattr" and len(node.args) == 3)
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in members):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_duck_typing_scan_finds_what_it_should():
    members = _member_names()
    assert "user_index" in members
    assert duck_typing('if hasattr(data, "user_index"):\n    pass\n', members)
    assert duck_typing('n = getattr(data, "user_index", None)\n', members)
    assert not duck_typing('v = getattr(mod, "__version__", None)\n', members)


def test_no_duck_typing_of_ldp_types():
    members = _member_names()
    found = {str(p.relative_to(ROOT)): duck_typing(p.read_text(), members) for p in sorted(LDP.rglob("*.py"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, "import the type and use isinstance instead of duck typing:\n" + "\n".join(
        f"{k}: {'; '.join(v)}" for k, v in found.items())


# ----- every memo is bounded ----------------------------------------------------------------


def unbounded_memos(source: str) -> list[str]:
    """``functools.cache`` and ``lru_cache(maxsize=None)``: every memo needs a bound (memory stays flat at scale)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            found += [f"line {node.lineno}: functools.cache" for a in node.names if a.name == "cache"]
        elif (isinstance(node, ast.Attribute) and node.attr == "cache"
              and isinstance(node.value, ast.Name) and node.value.id == "functools"):
            found.append(f"line {node.lineno}: functools.cache")
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("lru_cache", "functools.lru_cache"):
            size = {kw.arg: kw.value for kw in node.keywords}.get("maxsize", node.args[0] if node.args else None)
            if isinstance(size, ast.Constant) and size.value is None:
                found.append(f"line {node.lineno}: lru_cache(maxsize=None)")
    return found


def test_the_memo_scan_finds_what_it_should():
    assert unbounded_memos("from functools import cache\n")
    assert unbounded_memos("import functools\n@functools.cache\ndef f(): pass\n")
    assert unbounded_memos("from functools import lru_cache\n@lru_cache(maxsize=None)\ndef f(): pass\n")
    assert unbounded_memos("import functools\ng = functools.lru_cache(None)(len)\n")
    assert not unbounded_memos("from functools import lru_cache\n@lru_cache(maxsize=64)\ndef f(): pass\n")


def test_every_memo_is_bounded():
    found = {str(p.relative_to(ROOT)): unbounded_memos(p.read_text()) for p in sorted(LDP.rglob("*.py"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, "give every memo a maxsize:\n" + "\n".join(f"{k}: {'; '.join(v)}" for k, v in found.items())


# ----- modules by concept ------------------------------------------------------------------

MAX_MODULE_LINES = 600  # a module over ~600 lines holds several concepts: split it by concept


def test_no_module_over_600_lines():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in sorted(LDP.rglob("*.py"))}
    big = {k: v for k, v in sizes.items() if v > MAX_MODULE_LINES}
    assert not big, f"split these modules by concept (> {MAX_MODULE_LINES} lines): {big}"
