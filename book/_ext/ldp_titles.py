"""Titles as plain text wherever a browser cannot typeset math: ``<title>``, sidebars, link texts.

A Sphinx extension (listed in ``_config.yml``). A heading such as
``# Evaluation: effect of $\\varepsilon$ and $k$`` is typeset by MathJax on its own page, but
Sphinx also copies the title into places that show text only: the document's ``<title>``, the
navigation sidebar, the previous/next links, the text of ``{doc}`` and ``{ref}`` links and the
search index. There a math node would print its TeX source (``\\(\\varepsilon\\)`` or
``\\varepsilon``). After a document is read, this extension replaces the math in those copies
(``env.titles``, ``env.longtitles``, ``env.tocs`` and the section names of ``{ref}`` labels)
by its plain-text form: Greek letters and symbols as Unicode, ``^``/``_`` of digits and a few
letters as super- and subscripts (``2^{20}`` -> ``2²⁰``). The heading itself keeps its math.

Math that has no such form (a fraction, a superscript ε) is reported as a warning (an error
under ``-W``) naming the document: such a heading must be written more simply.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
SYMBOLS = {
    **GREEK,
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "sim": "∼",
    "times": "×", "cdot": "·", "pm": "±", "in": "∈", "to": "→", "infty": "∞", "ell": "ℓ", "prime": "′",
    "ldots": "…", "dots": "…", "cdots": "⋯", "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋",
    "log": "log", "ln": "ln", "exp": "exp", "min": "min", "max": "max", "mid": "|",
}
# relations and operators: the spaces written around them stay
BINARY = {"le", "leq", "ge", "geq", "ne", "neq", "approx", "sim", "times", "cdot", "pm", "in", "to", "mid"}
# commands whose {argument} is shown as it is, and commands that show nothing
TEXT_ARGUMENT = {"text", "textrm", "mathrm", "mathit", "mathbf", "mathsf", "operatorname", "mathcal"}
INVISIBLE = {"left", "right", "big", "Big", "bigl", "bigr", "displaystyle", "textstyle"}
SPACES = {",": " ", ";": " ", ":": " ", " ": " ", "!": "", "{": "{", "}": "}", "|": "‖", "%": "%"}
SUPERSCRIPT = dict(zip("0123456789+-−=()ni", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱ"))
SUBSCRIPT = dict(zip("0123456789+-−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")


class NoPlainText(ValueError):
    """Math that has no plain-text form."""


def _group(tex: str, i: int) -> tuple[str, int]:
    """The atom at ``tex[i]``: a ``{...}`` group (without braces), a command or one character."""
    if tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
        raise NoPlainText(f"unbalanced braces in {tex!r}")
    m = _COMMAND.match(tex, i)
    if m:
        return m.group(0), m.end()
    return tex[i], i + 1


def tex_to_text(tex: str) -> str:
    """Plain text for simple inline math: ``\\varepsilon`` -> ``ε``, ``2^{20}`` -> ``2²⁰``.

    Raises
    ------
    NoPlainText
        When some command, or a super- or subscript, has no plain-text form.
    """
    out, i = [], 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            m = _COMMAND.match(tex, i)
            name = m.group(1)
            i = m.end()
            if name.isalpha() and name not in BINARY:  # TeX skips the spaces after a control word
                while i < len(tex) and tex[i] == " ":
                    i += 1
            if name in SYMBOLS:
                out.append(SYMBOLS[name])
            elif name in SPACES:
                out.append(SPACES[name])
            elif name in TEXT_ARGUMENT:
                while i < len(tex) and tex[i] == " ":
                    i += 1
                if i < len(tex):
                    arg, i = _group(tex, i)
                    out.append(tex_to_text(arg))
            elif name not in INVISIBLE:
                raise NoPlainText(f"\\{name} in {tex!r}")
        elif ch in "^_":
            if i + 1 >= len(tex):
                raise NoPlainText(f"{ch} without an argument in {tex!r}")
            arg, i = _group(tex, i + 1)
            text = tex_to_text(arg).replace(" ", "")
            table = SUPERSCRIPT if ch == "^" else SUBSCRIPT
            if not text or any(c not in table for c in text):
                raise NoPlainText(f"{ch}{{{arg}}} in {tex!r}")
            out.append("".join(table[c] for c in text))
        elif ch in "{}":
            i += 1
        else:
            out.append("′" if ch == "'" else ch)
            i += 1
    return "".join(out)


def plain(node: nodes.Element, where: str) -> nodes.Element:
    """A copy of ``node`` whose math nodes are plain text (the TeX itself if it has no such form)."""
    node = node.deepcopy()
    for math in list(node.findall(nodes.math)):
        try:
            text = tex_to_text(math.astext())
        except NoPlainText as exc:
            logger.warning(f"math in a title has no plain-text form ({exc}); write the heading with simpler "
                           "math (Greek letters, symbols, digits as super- or subscripts)",
                           location=where, type="ldp", subtype="titles")
            text = math.astext()
        math.replace_self(nodes.Text(text))
    return node


def _has_math(node: nodes.Node) -> bool:
    return next(iter(node.findall(nodes.math)), None) is not None


def _plain_titles(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    docname = env.docname
    for store in (env.titles, env.longtitles, env.tocs):
        if docname in store and _has_math(store[docname]):
            store[docname] = plain(store[docname], docname)
    # the section names that {ref} links show (Sphinx takes them from the heading's astext())
    std = env.get_domain("std")
    for name, (doc, labelid, _) in list(std.labels.items()):
        target = doctree.ids.get(labelid) if doc == docname else None
        if isinstance(target, nodes.section) and _has_math(target[0]):
            std.labels[name] = (doc, labelid, plain(target[0], docname).astext())


def setup(app: Sphinx) -> dict[str, Any]:
    # after Sphinx's collectors (priority 500) have stored the titles and the table of contents
    app.connect("doctree-read", _plain_titles, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
