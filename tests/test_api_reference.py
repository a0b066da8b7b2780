"""The library reference (book/api/): every public name of ``ldp`` has a documented entry.

**Public** means listed in ``__all__`` of ``ldp`` or of a module directly under it; those
modules are exactly the layer contract's (``[tool.importlinter]`` in ``pyproject.toml``,
less ``__main__``). A module added to the contract, or a name added to an ``__all__``, fails
these tests until it is documented:

- every public module has an ``__all__`` whose names exist, and is on the reference page of
  its layer (``book/api/layerN.rst``, directive ``ldp-api``), once;
- every public name has text of its own for its entry (a docstring, or a ``#:`` doc comment
  for a constant), and every docstring of a public function, class or method parses as
  numpydoc without a warning;
- in the built book (``make book``), ``objects.inv`` lists every public name under every
  module that exports it, the general index lists them, and the chapters' inline code naming
  a public object links to its entry.

The docstrings' examples run as tests themselves (``--doctest-modules``, pyproject.toml).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import types
import warnings
from pathlib import Path

import pytest
from numpydoc.docscrape import NumpyDocString

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import ldp_api  # noqa: E402  (book/_ext/ldp_api.py)

HTML = ROOT / "_build" / "html"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
DIRECTIVE = re.compile(r"^\.\. ldp-api:: (\S+)\s*$", re.M)
PAGES = sorted((ROOT / "book" / "api").glob("*.rst"))


def _built(path: Path) -> Path:
    if not path.is_file():
        reason = f"{path} missing: run `make book QUICK=1` (make test does)"
        if IN_CI:
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def documented_modules() -> dict[str, list[Path]]:
    """module -> the reference pages that document it."""
    found: dict[str, list[Path]] = {}
    for page in PAGES:
        for modname in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            found.setdefault(modname, []).append(page)
    return found


# --------------------------------------------------------------------------- #
# the definition of public, and the pages
# --------------------------------------------------------------------------- #
def test_public_modules_are_the_layer_contract():
    mods = ldp_api.public_modules()
    assert mods[0] == "ldp" and "ldp.oracles" in mods and "ldp.protocols" in mods
    assert "ldp.__main__" not in mods
    assert len(mods) == len(set(mods))
    # every module file or package directly under ldp/ is in the contract (exhaustive = true)
    on_disk = {f"ldp.{p.stem}" for p in (ROOT / "ldp").glob("*.py") if p.stem not in ("__init__", "__main__")}
    on_disk |= {f"ldp.book.{p.stem}" for p in (ROOT / "ldp" / "book").glob("*.py") if p.stem != "__init__"}
    on_disk |= {f"ldp.book.{p.parent.name}" for p in (ROOT / "ldp" / "book").glob("*/__init__.py")}
    on_disk |= {f"ldp.{p.parent.name}" for p in (ROOT / "ldp").glob("*/__init__.py")}
    assert on_disk == set(mods) - {"ldp"}


@pytest.mark.parametrize("modname", ldp_api.public_modules())
def test_every_public_module_has_all_and_its_names_exist(modname: str):
    module = importlib.import_module(modname)
    names = ldp_api.public_names(modname)
    assert names, f"{modname}.__all__ is empty"
    assert len(names) == len(set(names)), f"{modname}.__all__ lists a name twice"
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{modname}.__all__ names what the module does not have: {missing}"


def test_every_public_module_is_on_the_page_of_its_layer():
    documented = documented_modules()
    for modname in ldp_api.public_modules():
        pages = documented.get(modname, [])
        assert len(pages) == 1, (f"{modname} must be documented once in book/api/*.rst "
                                 f"(`.. ldp-api:: {modname}`), found on {[p.name for p in pages]}")
        expected = "index.rst" if modname == "ldp" else f"layer{ldp_api.layer_of(modname)}.rst"
        assert pages[0].name == expected, f"{modname} is on {pages[0].name}, its layer's page is {expected}"
    assert set(documented) <= set(ldp_api.public_modules()), "a reference page names a module that is not public"


def test_every_page_is_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"file: book/api/{page.stem}\n" in toc, f"{page} is not in _toc.yml"


# --------------------------------------------------------------------------- #
# every name documented, every docstring numpydoc
# --------------------------------------------------------------------------- #
def test_every_public_name_has_its_own_documentation():
    missing = ldp_api.undocumented()
    assert not missing, ("public names without a docstring (or, for a constant, a `#:` comment above its "
                         f"assignment): {missing}")


def _public_docstrings():
    """(label, docstring) of every public function and class and of their public methods."""
    seen = set()
    for modname in ldp_api.public_modules():
        module = importlib.import_module(modname)
        for name in ldp_api.public_names(modname):
            obj = getattr(module, name)
            if ldp_api.kind(obj) in ("data", "module") or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{modname}.{name}", obj.__doc__ or ""
            if inspect.isclass(obj):
                for member_name, member in inspect.getmembers(obj):
                    func = member.fget if isinstance(member, property) else member
                    if member_name.startswith("_") or not str(getattr(func, "__module__", "")).startswith("ldp"):
                        continue
                    if func.__doc__ and id(func) not in seen:
                        seen.add(id(func))
                        yield f"{modname}.{name}.{member_name}", func.__doc__


def test_every_public_docstring_is_numpydoc():
    problems = []
    for label, doc in _public_docstrings():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                NumpyDocString(inspect.cleandoc(doc))
            except Exception as exc:  # noqa: BLE001 - numpydoc's parse errors are ValueErrors and others
                problems.append(f"{label}: {exc}")
        problems += [f"{label}: {w.message}" for w in caught]
    assert not problems, "\n".join(problems)


def test_a_new_undocumented_name_is_caught(monkeypatch):
    """The check can fail: a function added to an __all__ without a docstring is reported."""
    import ldp.metrics

    def precision_at_k(true_top, found):  # no docstring
        return 0.0

    precision_at_k.__module__ = "ldp.metrics"
    monkeypatch.setattr(ldp.metrics, "precision_at_k", precision_at_k, raising=False)
    monkeypatch.setattr(ldp.metrics, "__all__", [*ldp.metrics.__all__, "precision_at_k"])
    ldp_api.exporters.cache_clear()
    try:
        assert ldp_api.undocumented() == ["ldp.metrics.precision_at_k"]
    finally:
        monkeypatch.undo()
        ldp_api.exporters.cache_clear()


def test_home_is_the_defining_module():
    assert ldp_api.home("ldp", "PEM") == "ldp.protocols"
    assert ldp_api.home("ldp.protocols", "Plan") == "ldp.core"           # defined in ldp.core.question
    assert ldp_api.home("ldp.analysis", "olh_pq") == "ldp.oracles"       # the formulas live with the oracles
    assert ldp_api.home("ldp.experiments", "PROGRESS_ENV") == "ldp.paths"  # a constant: the lowest layer
    assert ldp_api.home("ldp", "values") == "ldp.values"                  # a module is its own home
    assert ldp_api.home("ldp.oracles", "OLH") == "ldp.oracles"


def test_entries_are_autodoc_or_constants():
    assert ldp_api.entry_lines("ldp.protocols", "PEM")[:4] == [
        ".. autoclass:: ldp.protocols.PEM", "   :members:", "   :show-inheritance:", "   :inherited-members:"]
    assert ldp_api.entry_lines("ldp.values", "encode") == [".. autofunction:: ldp.values.encode", ""]
    const = ldp_api.entry_lines("ldp.values", "MAX_BITS")
    assert const[:3] == [".. py:data:: MAX_BITS", "   :module: ldp.values", "   :value: 4096"]
    assert any("largest supported width" in line for line in const)
    # a constant whose repr is only a memory address (a colour map) shows its doc comment without it
    ramp = ldp_api.entry_lines("ldp.book.plotting", "SERIES_RAMP")
    assert ramp[:2] == [".. py:data:: SERIES_RAMP", "   :module: ldp.book.plotting"]
    assert not any(" at 0x" in line for line in ramp) and any("YlOrBr" in line for line in ramp)


# --------------------------------------------------------------------------- #
# the built book
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def inventory() -> dict[str, dict]:
    from sphinx.util.inventory import InventoryFile

    with _built(HTML / "objects.inv").open("rb") as f:
        return InventoryFile.load(f, "", lambda base, uri: uri)


def test_inventory_lists_every_public_name(inventory):
    names = {name for entries in inventory.values() for name in entries}
    missing = [f"{m}.{n}" for m in ldp_api.public_modules() for n in ldp_api.public_names(m)
               if f"{m}.{n}" not in names]
    assert not missing, f"public names without a reference entry in the built book: {missing}"
    for role, name in (("py:class", "ldp.protocols.PEM"), ("py:method", "ldp.protocols.PEM.plan"),
                       ("py:method", "ldp.protocols.PEM.privatize"), ("py:method", "ldp.protocols.PEM.aggregate"),
                       ("py:class", "ldp.oracles.OLH"), ("py:function", "ldp.analysis.optimize_pem"),
                       ("py:data", "ldp.values.MAX_BITS"), ("py:module", "ldp.protocols")):
        assert name in inventory.get(role, {}), f"{name} is not a {role} in objects.inv"
    # an alias points at its home's entry
    location = inventory["py:class"]["ldp.PEM"][2]
    assert location.startswith("book/api/layer5.html#ldp.protocols.PEM"), location


def test_general_index_is_populated():
    text = _built(HTML / "genindex.html").read_text(encoding="utf-8")
    assert "PEM (class in ldp.protocols)" in text
    assert re.search(r"optimize_pem\(\) \(in module ldp\.analysis\)", text)
    assert text.count('href="book/api/') > 300


def test_chapters_link_code_names_to_the_reference():
    """Inline code such as `ldp.analysis.grr_variance` in a chapter's text links to its entry."""
    page = _built(HTML / "_generated" / "notebooks" / "01_frequency_oracles.html").read_text(encoding="utf-8")
    link = re.compile(r'<a class="reference internal" href="([^"]+)"[^>]*><code[^>]*><span class="pre">'
                      r"ldp\.analysis\.grr_variance</span></code></a>")
    match = link.search(page)
    assert match, "chapter 01's `ldp.analysis.grr_variance` is not a link"
    assert match.group(1) == "../../book/api/layer1.html#ldp.oracles.grr_variance"
    page = _built(HTML / "_generated" / "notebooks" / "02_existing_methods.html").read_text(encoding="utf-8")
    assert 'href="../../book/api/layer5.html#ldp.protocols.PEM"' in page


def test_every_chapter_code_name_that_is_public_links():
    """No public ``ldp.x`` named in a page's code is left without its link."""
    unlinked = {}
    for page in _built(HTML / "index.html").parent.rglob("*.html"):
        if page.name in ("genindex.html", "search.html", "py-modindex.html"):
            continue
        text = page.read_text(encoding="utf-8")
        # code outside links and outside the entries' own signatures
        bare = re.sub(r"<a [^>]*>.*?</a>|<dt class=\"sig[^>]*>.*?</dt>|<pre>.*?</pre>|<h\d.*?</h\d>",
                      "", text, flags=re.S)
        for name in re.findall(r'<code class="docutils literal notranslate"><span class="pre">(ldp\.[\w.]+)</span>',
                               bare):
            if _public(name):
                unlinked.setdefault(str(page.relative_to(HTML)), set()).add(name)
    assert not unlinked, f"public names in code without a link: {unlinked}"


def _public(dotted: str) -> bool:
    """Is the dotted name a public function, class or constant of ldp, or a documented member of one?

    ``ldp.oracles.OLH.support`` is; a module (``ldp.oracles``) or anything inside a submodule
    that is not public (``ldp.oracles.hr.max_epsilon``) is not.
    """
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        modname, name = ".".join(parts[:cut - 1]), parts[cut - 1]
        if modname in ldp_api.public_modules() and name in ldp_api.public_names(modname):
            obj = getattr(importlib.import_module(modname), name)
            if isinstance(obj, types.ModuleType):
                return False
            for part in parts[cut:]:
                if part.startswith("_") or not inspect.isclass(obj):
                    return False
                obj = getattr(obj, part, None)
            func = obj.fget if isinstance(obj, property) else obj
            return obj is not None and (cut == len(parts) or bool(getattr(func, "__doc__", None)))
    return False
