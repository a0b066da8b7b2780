"""The library reference: every public name of ``ldp``, from its numpydoc docstring.

A Sphinx extension (listed in ``_config.yml``). **Public** means: listed in ``__all__`` of
``ldp`` itself or of one of the modules directly under it, which are exactly the modules of
the layer contract (``[tool.importlinter]`` in ``pyproject.toml``, less ``__main__``, the
command line). Nothing else is public, and everything public has an entry.

The directive ::

    ```{ldp-api} ldp.oracles
    ```

on a page of the reference (``book/api/``, one page per layer) writes, for that module:

- the module target (``{py:mod}`ldp.oracles```) and the first paragraph of its docstring;
- a table of every name in its ``__all__``, in that order, with its one-line summary;
- one entry per name whose **home** is this module, from its docstring through autodoc and
  numpydoc: classes with their public methods and properties (inherited ones too when the
  base class is ``ldp``'s own, so ``ldp.PEM.plan`` has its own entry), functions, and
  constants with their ``#:`` doc comment and value.

A name that several modules export (``Plan`` in ``ldp.core`` and ``ldp.protocols``;
``ldp.PEM``) is documented once, at its home: the exporting module that defines it (the one
whose name prefixes the object's ``__module__``), else the one in the lowest layer. Every
other spelling becomes an alias of that entry in the Python domain, so
``{py:class}`ldp.PEM``` and ``{py:func}`ldp.protocols.select_top``` link, and the inventory
(``objects.inv``) lists every public name under every module that exports it.

Two more things, so the chapters link to the reference without editing them:

- inline code naming a public object (``ldp.analysis.grr_variance``, ``ldp.PEM(eta=16)``,
  ``ldp.OLH.support``) becomes a link to its entry, in every page of the book;
- a Python cross-reference in a docstring that names a real object without an entry (a
  private helper, ``numpy.random.Generator``) is shown as code without a link instead of
  failing the nitpicky build; a reference to a name that does not exist still fails it.

``tests/test_api_reference.py`` checks that every public name has a documented entry.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import tomllib
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.domains.python import ObjectEntry
from sphinx.environment import BuildEnvironment
from sphinx.pycode import ModuleAnalyzer
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_refnode, nested_parse_with_titles

logger = logging.getLogger(__name__)

PACKAGE = "ldp"
ROOT = Path(__file__).resolve().parents[2]
_MISSING = object()
# inline code such as `ldp.PEM`, `ldp.values.extend(C, length, eta)`, `ldp.PEM(..., eta=η)`
_CODE_NAME = re.compile(r"^(ldp(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(.*\))?$")
_PY_ROLE = re.compile(r":(?:py:)?(mod|func|class|meth|attr|data|obj|exc|const):`([^`<]+)`")
_VALUE_WIDTH = 70  # longer values (tables, mappings) are left to the doc comment
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>$")  # the end of an object's default repr


class APIError(ValueError):
    """The reference cannot be written as asked (unknown module, name without documentation)."""


# --------------------------------------------------------------------------- #
# what is public
# --------------------------------------------------------------------------- #
def layers(pyproject: Path = ROOT / "pyproject.toml") -> list[list[str]]:
    """The modules of the layer contracts, top layer first: ``[["ldp.__main__"], ["ldp.book.artifact"], ...]``.

    The contract of ``ldp`` (the library, L0 to L7, and the book above it) with the book's own contract (of
    ``ldp.book``: L8 to L10) put in place of ``book``.
    """
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    by_container = {c["containers"][0]: c for c in config["contracts"]
                    if c.get("type") == "layers" and c.get("containers")}
    out: list[list[str]] = []
    for layer in by_container[PACKAGE]["layers"]:
        names = [name.strip() for name in layer.split(":")]
        if names == ["book"]:
            out += [[f"{PACKAGE}.book.{n.strip()}" for n in sub.split(":")] for sub in by_container["ldp.book"]["layers"]]
        else:
            out.append([f"{PACKAGE}.{n}" for n in names])
    return out


def public_modules(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """``ldp``, ``ldp.book`` and every module of the layer contracts but the command line, lowest layer last."""
    return [PACKAGE, f"{PACKAGE}.book"] + [m for layer in layers(pyproject) for m in layer
                                           if not m.endswith(".__main__")]


#: the layers of the book's code (``ldp.book``) as the README numbers them: L8 below the chapters, L9 the
#: chapters, L10 what sits above them (the glue, the report, the build and reruns, the artifact appendix)
BOOK_LAYERS = {"claims": 8, "plotting": 8, "chapters": 9}


def layer_of(modname: str, pyproject: Path = ROOT / "pyproject.toml") -> int:
    """The layer number of a module (L0 = 0 is the bottom); ``ldp`` itself is above them all."""
    if modname == PACKAGE:
        return len(library_layers(pyproject))
    if modname == f"{PACKAGE}.book" or modname.startswith(f"{PACKAGE}.book."):
        return BOOK_LAYERS.get(modname.split(".")[2] if modname.count(".") >= 2 else "", 10)
    stack = library_layers(pyproject)
    for index, layer in enumerate(stack):
        if modname in layer:
            return len(stack) - 1 - index
    raise APIError(f"{modname} is not in the layer contract of pyproject.toml")


def library_layers(pyproject: Path = ROOT / "pyproject.toml") -> list[list[str]]:
    """The library's layers (L7 first, L0 last): :func:`layers` without the command line and the book."""
    return [layer for layer in layers(pyproject)
            if not any(m.endswith(".__main__") or m.startswith(f"{PACKAGE}.book") for m in layer)]


def public_names(modname: str) -> list[str]:
    """The module's ``__all__`` (its public names, in its order)."""
    module = importlib.import_module(modname)
    names = getattr(module, "__all__", None)
    if names is None:
        raise APIError(f"{modname} has no __all__: a public module lists its public names")
    return list(names)


@cache
def exporters() -> dict[str, list[str]]:
    """name -> the public modules whose ``__all__`` lists it, lowest layer first."""
    found: dict[str, list[str]] = {}
    for modname in reversed(public_modules()):
        for name in public_names(modname):
            found.setdefault(name, []).append(modname)
    return found


def home(modname: str, name: str) -> str:
    """The public module whose entry documents ``modname.name`` (see the module docstring)."""
    obj = getattr(importlib.import_module(modname), name)
    if inspect.ismodule(obj):
        return obj.__name__
    same = [m for m in exporters().get(name, [modname])
            if getattr(importlib.import_module(m), name, _MISSING) is obj]
    defined_in = getattr(obj, "__module__", None) if (inspect.isclass(obj) or inspect.isroutine(obj)) else None
    if isinstance(defined_in, str):
        owners = [m for m in same if defined_in == m or defined_in.startswith(m + ".")]
        if owners:
            return max(owners, key=len)
    return same[0]  # the lowest layer that exports it


def _submodules(module: ModuleType) -> list[ModuleType]:
    found = [module]
    for info in pkgutil.iter_modules(getattr(module, "__path__", []), module.__name__ + "."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):  # not private, not a __main__
            found.append(importlib.import_module(info.name))
    return found


def doc_comment(modname: str, name: str) -> str:
    """The ``#:`` comment (or string after the assignment) that documents a constant.

    Searched in the module and, for a package, in its public submodules, where the name is
    bound to the same object. Empty when there is none.
    """
    module = importlib.import_module(modname)
    obj = getattr(module, name)
    for sub in _submodules(module):
        if getattr(sub, name, _MISSING) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(sub.__name__).find_attr_docs()
        except Exception:  # noqa: BLE001 - a module without source: no comment
            continue
        lines = docs.get(("", name))
        if lines:
            return "\n".join(lines).strip()
    return ""


def kind(obj: Any) -> str:
    """``module``, ``exception``, ``class``, ``function`` or ``data``."""
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj):
        return "function"
    return "data"


def docstring(modname: str, name: str) -> str:
    """The text an entry shows: the object's own docstring, or a constant's doc comment."""
    obj = getattr(importlib.import_module(modname), name)
    what = kind(obj)
    if what == "data":
        return doc_comment(modname, name)
    if what == "module":
        return inspect.getdoc(obj) or ""
    return (obj.__doc__ or "") and inspect.cleandoc(obj.__doc__)


def summary(text: str) -> str:
    """The first paragraph of a docstring, on one line."""
    para = text.strip().split("\n\n", 1)[0]
    return " ".join(para.split())


def _plain_role(match: re.Match) -> str:
    target = match.group(2)
    shown = target.rsplit(".", 1)[-1] if target.startswith("~") else target.lstrip(".")
    return f"``{shown.lstrip('~')}``"


def table_summary(text: str) -> str:
    """A summary for the module tables: Python roles as code (their targets are relative to
    the docstring's own module, which the table is not in); a code name that is public still
    links (see :class:`CodeToReference`)."""
    return _PY_ROLE.sub(_plain_role, summary(text))


def undocumented() -> list[str]:
    """Every public ``module.name`` whose entry would have no text (the tests want none)."""
    missing = []
    for modname in public_modules():
        module = importlib.import_module(modname)
        for name in public_names(modname):
            obj = getattr(module, name)
            text = inspect.getdoc(obj) if kind(obj) == "module" else docstring(home(modname, name), name)
            if not (text or "").strip():
                missing.append(f"{modname}.{name}")
    return missing


# --------------------------------------------------------------------------- #
# the directive
# --------------------------------------------------------------------------- #
def _ldp_bases(cls: type) -> bool:
    return any(base.__module__.startswith(PACKAGE + ".") for base in cls.__mro__[1:])


def _value(obj: Any) -> str | None:
    """A constant's value as its entry shows it: its ``repr``, unless that is long, on several lines or an
    object's default ``repr`` (``<... object at 0x...>``: a memory address, different in every build)."""
    text = repr(obj)
    if len(text) > _VALUE_WIDTH or "\n" in text or _ADDRESS.search(text):
        return None
    return text


def entry_lines(modname: str, name: str) -> list[str]:
    """The reStructuredText of one entry (autodoc for code, ``py:data`` for constants)."""
    obj = getattr(importlib.import_module(modname), name)
    full = f"{modname}.{name}"
    what = kind(obj)
    if what in ("class", "exception"):
        lines = [f".. auto{what}:: {full}", "   :members:", "   :show-inheritance:"]
        if _ldp_bases(obj):
            lines.append("   :inherited-members:")
        return lines + [""]
    if what == "function":
        return [f".. autofunction:: {full}", ""]
    lines = [f".. py:data:: {name}", f"   :module: {modname}"]
    value = _value(obj)
    if value is not None:
        lines.append(f"   :value: {value}")
    lines.append("")
    lines += ["   " + line for line in doc_comment(modname, name).splitlines()]
    return lines + [""]


def module_lines(modname: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The reST of a module's part of the reference, and its aliases ``(alias, home name)``."""
    module = importlib.import_module(modname)
    lines = [f".. py:module:: {modname}", ""]
    intro = summary(inspect.getdoc(module) or "")
    if intro:
        lines += [intro, ""]
    names = public_names(modname)
    rows, entries, aliases = [], [], []
    for name in names:
        obj = getattr(module, name)
        where = home(modname, name)
        if kind(obj) == "module":
            rows.append((f":py:mod:`{where}`", table_summary(inspect.getdoc(obj) or "")))
            continue
        text = table_summary(docstring(where, name))
        if where == modname:
            entries += entry_lines(modname, name)
        else:
            aliases.append((f"{modname}.{name}", f"{where}.{name}"))
            text = f"(from :py:mod:`{where}`) {text}"
        rows.append((f":py:obj:`{name} <{where}.{name}>`", text))
    if rows:
        lines += [".. list-table::", "   :widths: 30 70", "   :class: ldp-api-summary", ""]
        for ref, text in rows:
            lines += [f"   * - {ref}", f"     - {text or ' '}"]
        lines.append("")
    return lines + entries, aliases


class LdpApi(SphinxDirective):
    """``{ldp-api} MODULE``: the reference of one public module (see the module docstring)."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        modname = self.arguments[0].strip()
        if modname not in public_modules():
            raise self.error(f"ldp-api: {modname} is not a public module of ldp "
                             f"(public: ldp and the modules of the layer contract in pyproject.toml)")
        try:
            lines, aliases = module_lines(modname)
        except (APIError, ImportError, AttributeError) as exc:
            raise self.error(f"ldp-api: {modname}: {exc}") from exc
        store = self.env.ldp_api_aliases  # type: ignore[attr-defined]
        for alias, target in aliases:
            store[alias] = (self.env.docname, target)
        for module in _submodules(importlib.import_module(modname)):
            if getattr(module, "__file__", None):
                self.env.note_dependency(module.__file__)
        container = nodes.container(classes=["ldp-api"])
        nested_parse_with_titles(self.state, StringList(lines, source=f"<ldp-api {modname}>"), container)
        return container.children


# --------------------------------------------------------------------------- #
# aliases, links from inline code, references to real objects without an entry
# --------------------------------------------------------------------------- #
def _env_before_read(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    if not hasattr(env, "ldp_api_aliases"):
        env.ldp_api_aliases = {}  # type: ignore[attr-defined]


def _env_purge_doc(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    store = getattr(env, "ldp_api_aliases", {})
    for alias in [a for a, (doc, _) in store.items() if doc == docname]:
        del store[alias]


def _env_merge_info(app: Sphinx, env: BuildEnvironment, docnames, other: BuildEnvironment) -> None:
    env.ldp_api_aliases.update(getattr(other, "ldp_api_aliases", {}))  # type: ignore[attr-defined]


def _env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Point every alias at its home entry (after all documents were read)."""
    domain = env.get_domain("py")
    objects = domain.objects  # type: ignore[attr-defined]
    for alias, (docname, target) in sorted(getattr(env, "ldp_api_aliases", {}).items()):
        entry = objects.get(target)
        if entry is None:
            logger.warning("ldp-api: %s names %s, which has no entry in the reference", alias, target,
                           location=docname)
            continue
        objects[alias] = ObjectEntry(entry.docname, entry.node_id, entry.objtype, True)
    return []


def _resolve(env: BuildEnvironment, name: str) -> str | None:
    """The reference entry for a dotted name, through aliases and class members."""
    objects = env.get_domain("py").objects  # type: ignore[attr-defined]
    if name in objects:
        return name
    modules = env.get_domain("py").modules  # type: ignore[attr-defined]
    if name in modules:
        return name
    head, _, tail = name.rpartition(".")
    while head:  # ldp.OLH.support -> ldp.oracles.OLH.support
        if head in objects:
            candidate = f"{_canonical(env, head)}.{tail}"
            if candidate in objects:
                return candidate
        head, _, rest = head.rpartition(".")
        tail = f"{rest}.{tail}"
    return None


def _canonical(env: BuildEnvironment, name: str) -> str:
    store = getattr(env, "ldp_api_aliases", {})
    return store[name][1] if name in store else name


def _importable(name: str) -> bool:
    """Does the dotted name resolve to a real module attribute?"""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001 - a module failing to import is not a name we know
            return False
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True
    return False


def _defined_somewhere(name: str, modname: str | None, classname: str | None) -> bool:
    """Is ``name`` (last component) a real attribute near the docstring that names it: in its
    module or one of the module's submodules, or a field or annotation of its class?"""
    last = name.rsplit(".", 1)[-1]
    if not modname or not modname.startswith(PACKAGE):
        return False
    try:
        module = importlib.import_module(modname)
    except ImportError:
        return False
    if classname:
        cls = module
        for part in classname.split("."):
            cls = getattr(cls, part, None)
        if inspect.isclass(cls):
            for klass in cls.__mro__:
                if last in getattr(klass, "__annotations__", {}) or last in vars(klass):
                    return True
                if last in getattr(klass, "__dataclass_fields__", {}) or last in getattr(klass, "_fields", ()):
                    return True
    pending = [module]
    while pending:
        mod = pending.pop()
        if last in vars(mod):
            return True
        for info in pkgutil.iter_modules(getattr(mod, "__path__", []), mod.__name__ + "."):
            if info.name.endswith(".__main__"):  # a command line: importing it runs it
                continue
            try:
                pending.append(importlib.import_module(info.name))
            except Exception:  # noqa: BLE001 - a submodule that fails to import defines nothing here
                continue
    return False


def _missing_reference(app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref, contnode: nodes.Element):
    """A Python reference to a real object that has no entry: code without a link, no warning."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    context = [node.get("py:module"), node.get("py:class")]
    candidates = [target]
    if context[0]:
        candidates.append(f"{context[0]}.{target}")
        if context[1]:
            candidates.append(f"{context[0]}.{context[1]}.{target}")
    for name in candidates:
        resolved = _resolve(env, name)
        if resolved and resolved != target:
            entry = env.get_domain("py").objects.get(resolved)  # type: ignore[attr-defined]
            if entry is not None:
                return _link(app, node.get("refdoc", env.docname), entry, contnode)
    if any(_importable(name) for name in candidates if name) or _defined_somewhere(target, *context):
        return contnode
    return None


def _link(app: Sphinx, fromdoc: str, entry: Any, content: nodes.Node) -> nodes.reference:
    """A link to an object's (or module's) entry, for any builder (HTML and LaTeX)."""
    return make_refnode(app.builder, fromdoc, entry.docname, entry.node_id, content)


class CodeToReference(SphinxPostTransform):
    """Inline code naming a public object links to its entry (chapters, pages, docstrings)."""

    default_priority = 20  # after cross-references are resolved

    def run(self, **kwargs: Any) -> None:
        domain = self.env.get_domain("py")
        objects, modules = domain.objects, domain.modules  # type: ignore[attr-defined]
        for literal in list(self.document.findall(nodes.literal)):
            if _in_link_or_title(literal):
                continue
            match = _CODE_NAME.match(literal.astext().strip())
            if not match:
                continue
            resolved = _resolve(self.env, match.group(1))
            entry = (objects.get(resolved) or modules.get(resolved)) if resolved else None
            if entry is None:
                continue
            literal.parent.replace(literal, _link(self.app, self.env.docname, entry, literal.deepcopy()))


def _in_link_or_title(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, (nodes.reference, addnodes.pending_xref, nodes.title, addnodes.desc_signature)):
            return True
        parent = parent.parent
    return False


def _numpydoc_compiles_its_template_once() -> None:
    """Render every docstring with one compiled numpydoc template per builder.

    numpydoc (1.11) builds a Jinja environment and compiles ``numpydoc_docstring.rst`` for each
    docstring it renders (``numpydoc.docscrape_sphinx.get_doc_object``): about 1,600 times in this
    book, 4 s of every build. Here its own function makes the template the first time for a builder,
    and each later docstring is rendered by numpydoc with that template, through the
    ``get_doc_object`` hook of ``numpydoc.numpydoc`` (what ``numpydoc.numpydoc.setup`` takes as
    ``get_doc_object_``): the same template and loader, so the same pages.
    """
    from numpydoc import docscrape
    from numpydoc import numpydoc as hook
    from numpydoc.docscrape_sphinx import SphinxClassDoc, SphinxFunctionDoc, SphinxObjDoc
    from numpydoc.docscrape_sphinx import get_doc_object as numpydoc_get_doc_object

    templates: dict[int, Any] = {}

    def get_doc_object(obj, what=None, doc=None, config=None, builder=None):
        if builder is None:
            return numpydoc_get_doc_object(obj, what=what, doc=doc, config=config)
        config = {} if config is None else config
        if id(builder) not in templates:
            made = numpydoc_get_doc_object(obj, what=what, doc=doc, config=config, builder=builder)
            templates[id(builder)] = config["template"]
            return made
        config["template"] = templates[id(builder)]
        return docscrape.get_doc_object(obj, what=what, doc=doc, config=config, class_doc=SphinxClassDoc,
                                        func_doc=SphinxFunctionDoc, obj_doc=SphinxObjDoc)

    hook.get_doc_object = get_doc_object


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.autodoc")
    _numpydoc_compiles_its_template_once()
    app.add_directive("ldp-api", LdpApi)
    app.connect("env-before-read-docs", _env_before_read)
    app.connect("env-purge-doc", _env_purge_doc)
    app.connect("env-merge-info", _env_merge_info)
    app.connect("env-updated", _env_updated)
    app.connect("missing-reference", _missing_reference)
    app.add_post_transform(CodeToReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
