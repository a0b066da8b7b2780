"""BibTeX entries generated from CITATION.cff when the book is built.

A Sphinx extension (listed in ``_config.yml``). The directive ::

    ```{cff-bibtex} preferred-citation
    :key: ldp_reproduction
    ```

shows the entry ``preferred-citation`` of the repository's ``CITATION.cff`` (or
``references/0``, the first of ``references``) as a BibTeX code block with the given
citation key, so the cite page cannot drift from ``CITATION.cff``. A change to
``CITATION.cff`` re-reads the page. With the flag ``:this-copy:`` the entry is the copy of
the book being built: the package's entry with the commit it was built from, its build date
and the repository address at that commit (from ``book/_ext/ldp_provenance.py``), generated
anew on every build.

``cffconvert -f bibtex`` exports only the top-level metadata, always under the key
``YourReferenceHere``; this converter handles the fields this project's file uses
(authors as persons or entities, title, year or date, version, journal, volume, issue,
pages, DOI, arXiv identifier, URL or repository, notes) and fails on an entry type it does
not know.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

# CFF reference type -> BibTeX entry type (biblatex's @software for software)
ENTRY_TYPES = {
    "software": "software",
    "article": "article",
    "conference-paper": "inproceedings",
    "book": "book",
    "report": "techreport",
    "thesis": "phdthesis",
    "generic": "misc",
    "data": "dataset",  # biblatex's entry type for data sets
}
_SPECIAL = re.compile(r"([&%$#_])")
_ARXIV = re.compile(r"^arxiv:\s*(\S+)$", re.I)
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_:.-]*$")


class CitationError(ValueError):
    """CITATION.cff lacks what a BibTeX entry needs, or has an unsupported entry."""


def load_cff(path: Path) -> dict[str, Any]:
    """The parsed CITATION.cff (dates kept as the strings written in the file)."""
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def select(cff: dict[str, Any], where: str) -> dict[str, Any]:
    """The entry at ``where``: ``preferred-citation``, ``references/N`` or ``.`` (top level)."""
    if where == ".":
        return cff
    node: Any = cff
    for part in where.split("/"):
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise CitationError(f"CITATION.cff has no entry {where!r}") from None
    if not isinstance(node, dict):
        raise CitationError(f"CITATION.cff entry {where!r} is not a reference")
    return node


def _escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _person(author: dict[str, Any]) -> str:
    if "name" in author:  # an entity: braced so BibTeX does not split it into names
        return "{" + _escape(author["name"]) + "}"
    family = " ".join(p for p in (author.get("name-particle"), author.get("family-names")) if p)
    if not family:
        raise CitationError(f"author without family-names or name: {author}")
    parts = [family]
    if author.get("name-suffix"):
        parts.append(author["name-suffix"])
    if author.get("given-names"):
        parts.append(author["given-names"])
    return _escape(", ".join(parts))


def year_of(entry: dict[str, Any]) -> str:
    for field in ("year", "date-released", "date-published"):
        value = str(entry.get(field, "")).strip()
        if re.match(r"^\d{4}", value):
            return value[:4]
    raise CitationError(f"entry {entry.get('title')!r} has no year, date-released or date-published")


def bibtex(entry: dict[str, Any], key: str) -> str:
    """One BibTeX entry for a CFF reference (or the top-level CFF metadata)."""
    if not _KEY.match(key):
        raise CitationError(f"key must be letters, digits and _:.- starting with a letter, got {key!r}")
    kind = entry.get("type", "software")
    if kind not in ENTRY_TYPES:
        raise CitationError(f"CFF type {kind!r} is not supported; supported: {sorted(ENTRY_TYPES)}")
    if not entry.get("title") or not entry.get("authors"):
        raise CitationError("a reference needs a title and authors")
    fields: list[tuple[str, str]] = [
        ("author", " and ".join(_person(a) for a in entry["authors"])),
        ("title", _escape(entry["title"])),
    ]
    for cff_field, bib_field in (("journal", "journal"), ("volume", "volume"), ("issue", "number")):
        if entry.get(cff_field):
            fields.append((bib_field, _escape(entry[cff_field])))
    if entry.get("start"):
        pages = str(entry["start"]) + (f"--{entry['end']}" if entry.get("end") else "")
        fields.append(("pages", pages))
    fields.append(("year", year_of(entry)))
    if entry.get("version"):
        fields.append(("version", _escape(entry["version"])))
    doi = entry.get("doi") or next(
        (i["value"] for i in entry.get("identifiers", []) if i.get("type") == "doi"), None
    )
    if doi:
        fields.append(("doi", _escape(doi)))
    for ident in entry.get("identifiers", []):
        match = _ARXIV.match(str(ident.get("value", "")))
        if match:
            fields += [("eprint", match.group(1)), ("archivePrefix", "arXiv")]
            break
    url = entry.get("url") or entry.get("repository-code")
    if url:
        fields.append(("url", url))
    if entry.get("notes"):
        fields.append(("note", _escape(entry["notes"])))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(f"  {name:<{width}} = {{{value}}}" for name, value in fields)
    return f"@{ENTRY_TYPES[kind]}{{{key},\n{body}\n}}"


def this_copy(entry: dict[str, Any], info: Any) -> dict[str, Any]:
    """The package's entry for one built copy: its commit, build date and address at that commit.

    ``info`` is the build's :class:`ldp_provenance.BuildInfo` (``commit``, ``dirty``,
    ``built``, ``version``, ``url(kind)``). The version is the one the build read from
    ``pyproject.toml``; a copy built from uncommitted changes says so.
    """
    copy = dict(entry)
    copy.pop("date-released", None)
    copy["year"] = str(info.built.year)
    copy["version"] = info.version
    commit = info.commit or "unknown"
    state = " with uncommitted changes" if info.commit and info.dirty else ""
    copy["notes"] = f"Version {info.version}, commit {commit}{state}, built {info.built.strftime('%Y-%m-%d')}"
    if info.commit and info.repository_url:
        copy["url"] = info.url("tree")
    return copy


class CffBibtex(SphinxDirective):
    """``{cff-bibtex} WHERE`` with ``:key: KEY`` (and ``:this-copy:``): a BibTeX code block from CITATION.cff."""

    required_arguments = 1
    option_spec = {"key": directives.unchanged_required, "this-copy": directives.flag}

    def run(self) -> list[nodes.Node]:
        path = Path(self.env.app.confdir) / self.config.ldp_citation_file
        self.env.note_dependency(str(path))
        if "key" not in self.options:
            raise self.error("cff-bibtex: the option :key: (the BibTeX citation key) is required")
        try:
            entry = select(load_cff(path), self.arguments[0])
            if "this-copy" in self.options:
                info = getattr(self.env.app, "ldp_build_info", None)
                if info is None:
                    raise CitationError(":this-copy: needs the extension ldp_provenance (the build's commit)")
                self.env.note_reread()  # the commit and the date change with every build
                entry = this_copy(entry, info)
            text = bibtex(entry, self.options["key"])
        except (OSError, yaml.YAMLError, CitationError) as exc:
            raise self.error(f"cff-bibtex: {path.name}: {exc}") from exc
        block = nodes.literal_block(text, text, language="bibtex")
        self.set_source_info(block)
        return [block]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ldp_citation_file", "CITATION.cff", "env")
    app.add_directive("cff-bibtex", CffBibtex)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
