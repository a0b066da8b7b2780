"""On a phone, each generated figure as its phone layout: ``NAME-narrow.svg`` in a ``<picture>``.

A Sphinx extension (listed in ``_config.yml``).  :func:`ldp.book.plotting.save_figure` saves beside
each figure ``NAME.svg`` its panels stacked in one column, ``NAME-narrow.svg``
(:mod:`ldp.book.plotting.narrow`).  For every figure of a page whose image is a file of
``_generated/figures/`` with such a phone layout, the HTML shows

    <a href=".../NAME.svg"><picture>
      <source media="(max-width: 600px)" srcset=".../NAME-narrow.svg" type="image/svg+xml">
      <img src=".../NAME.svg" ...></picture></a>

so a screen at most :data:`BREAKPOINT` CSS px wide loads and shows the phone layout, a wider one the
figure as drawn for the page, and a tap on either opens the full-size figure.  The PDF and every other
builder keep the figure alone.
"""
from __future__ import annotations

import posixpath
import urllib.parse
from html import escape
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

#: the widest screen (CSS px) that gets the phone layout (ldp.css styles it up to the same width)
BREAKPOINT = 600
#: the phone layout's file name: NAME + SUFFIX + ".svg" (ldp.book.plotting.narrow.NARROW_SUFFIX)
SUFFIX = "-narrow"


class picture(nodes.General, nodes.Element):  # noqa: N801  (docutils names nodes in lower case)
    """An image with its phone layout (``narrow``: the layout's file name in the build's ``_images``)."""


def narrow_path(srcdir: str | Path, uri: str) -> str | None:
    """The phone layout of the generated figure at ``uri`` (relative to ``srcdir``), if it was saved."""
    from ldp_figure_source import figure_name  # the sibling extension: NAME of a generated figure's URI

    name = figure_name(uri)
    if name is None:
        return None
    rel = f"_generated/figures/{name}{SUFFIX}.svg"
    return rel if (Path(srcdir) / rel).is_file() else None


def _on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    """Note each figure's phone layout as an image of the page (copied into the build with the others)."""
    for fig in doctree.findall(nodes.figure):
        img = next(iter(fig.findall(nodes.image)), None)
        rel = narrow_path(app.srcdir, img["uri"]) if img is not None else None
        if rel is None:
            continue
        app.env.images.add_file(app.env.docname, rel)
        app.env.note_dependency(rel)
        img["ldp_narrow"] = rel


def _on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """For the HTML builders: wrap each image that has a phone layout in a :class:`picture`."""
    if app.builder.format != "html":
        return
    for img in list(doctree.findall(nodes.image)):
        rel = img.get("ldp_narrow")
        if not rel or rel not in app.env.images or isinstance(img.parent, picture):
            continue
        filename = app.env.images[rel][1]
        app.builder.images[rel] = filename  # copied to _images/ like the figure itself
        wrapper = picture(narrow=filename)
        img.replace_self(wrapper)
        wrapper += img


def visit_picture(self, node: picture) -> None:
    """``<picture>`` with the phone layout's ``<source>``; Sphinx's link to the full-size image goes outside."""
    inner = node.children[0] if node.children else None
    node["href"] = inner.get("refuri") if isinstance(inner, nodes.reference) else None
    if node["href"] is not None:  # <a><img></a> inside <picture> would hide the img from the source selection
        node.children = list(inner.children)
        classes = " ".join(["reference", "internal", "image-reference"])
        self.body.append(f'<a class="{classes}" href="{escape(node["href"])}">')
    srcset = posixpath.join(self.builder.imgpath, urllib.parse.quote(node["narrow"]))
    self.body.append(f'<picture><source media="(max-width: {BREAKPOINT}px)" srcset="{escape(srcset)}" '
                     'type="image/svg+xml" />')


def depart_picture(self, node: picture) -> None:
    self.body.append("</picture>" + ("</a>" if node.get("href") is not None else "") + "\n")


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("ldp_figure_source")
    app.add_node(picture, html=(visit_picture, depart_picture))
    app.connect("doctree-read", _on_doctree_read)
    app.connect("doctree-resolved", _on_doctree_resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
