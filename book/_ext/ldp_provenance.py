"""Provenance of the built book: repository, commit, build date and environment.

A Sphinx extension (listed in ``_config.yml``). On every HTML page the footer states the
repository (``repository.url`` in ``_config.yml``), the commit the book was built from,
the build date, the pinned environment (``requirements.txt``, copied into the built book)
and the source of the page: for a chapter, its notebook in ``notebooks/`` (the book renders
the executed copy in ``_generated/notebooks/``), linked at that commit. The same facts go
to ``build-info.json`` in the HTML output, and the directive ``{build-provenance}`` writes
them as a paragraph (the cite page uses it, so the PDF carries them too).

The commit is read with ``git rev-parse HEAD`` when the book is built; without git or
outside a repository it is "unknown". Uncommitted changes to tracked or new files (not
the git-ignored outputs) are flagged. The build date is ``SOURCE_DATE_EPOCH`` when set
(reproducible builds), else the current time, in UTC.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import html
import json
import os
import platform
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.builders.latex import LaTeXBuilder
from sphinx.config import Config
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

UNKNOWN = "unknown"


@dataclasses.dataclass(frozen=True)
class BuildInfo:
    """What the book was built from.

    Attributes
    ----------
    repository_url : str
        The project's repository (``repository.url`` in ``_config.yml``), no trailing slash.
    branch : str
        Its default branch (``repository.branch``), used for links when the commit is unknown.
    commit : str or None
        Full hash of ``HEAD``; None when git or the repository is unavailable.
    dirty : bool
        The working tree had uncommitted changes (tracked or new, non-ignored files).
    built : datetime.datetime
        Build time, UTC (``SOURCE_DATE_EPOCH`` if set).
    python : str
        Python version of the build.
    version : str
        The package version (``pyproject.toml``), or "unknown".
    """

    repository_url: str
    branch: str
    commit: str | None
    dirty: bool
    built: dt.datetime
    python: str
    version: str

    @property
    def short_commit(self) -> str:
        return self.commit[:12] if self.commit else UNKNOWN

    @property
    def commit_label(self) -> str:
        """``abc123def456``, ``abc123def456 + uncommitted changes`` or ``unknown``."""
        if not self.commit:
            return UNKNOWN
        return self.short_commit + (" + uncommitted changes" if self.dirty else "")

    @property
    def ref(self) -> str:
        """What links into the repository point at: the commit, else the branch."""
        return self.commit or self.branch

    @property
    def date_label(self) -> str:
        return self.built.strftime("%Y-%m-%d %H:%M UTC")

    def url(self, kind: str, path: str = "") -> str:
        """GitHub-style address of the tree (``kind="tree"``) or a file (``"blob"``) at ``ref``."""
        if not self.repository_url:
            return ""
        return f"{self.repository_url}/{kind}/{self.ref}" + (f"/{path}" if path else "")

    def as_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository_url,
            "commit": self.commit or UNKNOWN,
            "uncommitted_changes": self.dirty if self.commit else UNKNOWN,
            "built": self.built.isoformat(timespec="seconds"),
            "python": self.python,
            "version": self.version,
        }


def _git(root: Path, *args: str) -> str | None:
    """Output of ``git -C root ARGS`` or None (no git, not a repository, error)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def build_date(environ: dict[str, str] | None = None) -> dt.datetime:
    """``SOURCE_DATE_EPOCH`` (seconds, the reproducible-builds convention) or now, in UTC."""
    environ = os.environ if environ is None else environ
    epoch = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return dt.datetime.fromtimestamp(int(epoch), tz=dt.timezone.utc)
        except (ValueError, OverflowError, OSError):
            logger.warning("SOURCE_DATE_EPOCH=%r is not a Unix time; using the current time", epoch)
    return dt.datetime.now(tz=dt.timezone.utc).replace(microsecond=0)


def package_version(root: Path) -> str:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return UNKNOWN


def collect(root: Path, repository_url: str, branch: str = "main", environ=None) -> BuildInfo:
    """The build information of the repository checked out at ``root``."""
    commit = _git(root, "rev-parse", "--verify", "HEAD")
    status = _git(root, "status", "--porcelain") if commit else None
    return BuildInfo(
        repository_url=(repository_url or "").rstrip("/"),
        branch=branch or "main",
        commit=commit or None,
        dirty=bool(status),
        built=build_date(environ),
        python=platform.python_version(),
        version=package_version(root),
    )


def source_path(app: Sphinx, docname: str) -> str:
    """Repository path of a page's source: ``notebooks/NAME.ipynb`` for an executed chapter."""
    for generated, source in app.config.ldp_generated_sources.items():
        if docname.startswith(generated):
            return source + docname[len(generated):] + ".ipynb"
    path = Path(app.env.doc2path(docname))
    try:
        return path.relative_to(app.srcdir).as_posix()
    except ValueError:
        return path.name


# --------------------------------------------------------------------------- #
# Sphinx hooks
# --------------------------------------------------------------------------- #
def _on_config_inited(app: Sphinx, config: Config) -> None:
    theme = config.html_theme_options or {}
    info = collect(Path(app.confdir), theme.get("repository_url", ""), theme.get("repository_branch", "main"))
    app.ldp_build_info = info
    # the PDF: "Release 0.1.0" on the title page and in the running head
    if not config.release:
        config.release = info.version
    if not config.version:
        config.version = info.version
    logger.info("[ldp_provenance] %s, commit %s, built %s", info.repository_url, info.commit_label, info.date_label)


def _on_builder_inited(app: Sphinx) -> None:
    """The PDF's title page: build date and commit in place of the date."""
    if isinstance(app.builder, LaTeXBuilder):
        info: BuildInfo = app.ldp_build_info
        app.builder.context["date"] = rf"{info.date_label}\\commit {info.commit_label}"


def _environment_files(app: Sphinx) -> list[Path]:
    root = Path(app.confdir)
    return [root / name for name in app.config.ldp_environment_files if (root / name).is_file()]


def footer_html(app: Sphinx, pagename: str, pathto) -> str:
    """The provenance paragraph of the footer of one page."""
    info: BuildInfo = app.ldp_build_info
    esc = html.escape
    repo = info.repository_url
    repo_label = repo.split("://", 1)[-1]
    parts = [f"Built on {esc(info.date_label)} from commit "]
    if info.commit and repo:
        parts.append(f'<a href="{esc(info.url("tree"))}"><code>{esc(info.short_commit)}</code></a>')
    else:
        parts.append(f"<code>{esc(info.short_commit)}</code>")
    if info.commit and info.dirty:
        parts.append(" + uncommitted changes")
    if repo:
        parts.append(f' of <a href="{esc(repo)}">{esc(repo_label)}</a>')
    env_files = _environment_files(app)
    if env_files:
        links = ", ".join(f'<a href="{esc(pathto(p.name, 1))}">{esc(p.name)}</a>' for p in env_files)
        parts.append(f"; environment: {links} (Python {esc(info.python)})")
    parts.append(".")
    if pagename in app.env.all_docs and repo:
        src = source_path(app, pagename)
        parts.append(f' Source of this page: <a href="{esc(info.url("blob", src))}"><code>{esc(src)}</code></a>.')
    return '<p class="ldp-provenance">' + "".join(parts) + "</p>"


def _on_html_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if not hasattr(app, "ldp_build_info"):
        return
    static = context.get("theme_extra_footer") or ""
    context["theme_extra_footer"] = static + footer_html(app, pagename, context["pathto"])


def _on_launch_buttons(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Launch buttons (Binder, Colab) open a chapter's source notebook in the repository.

    The theme builds their addresses from the page's path, ``_generated/notebooks/NAME``: the
    executed copy, which is not in the repository. Point them at ``notebooks/NAME.ipynb``.
    """
    for group in context.get("header_buttons") or []:
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            url = button.get("url")
            if not url:
                continue
            for generated, source in app.config.ldp_generated_sources.items():
                url = url.replace(f"/{generated}", f"/{source}")
            button["url"] = url


def _on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    files = {}
    for path in _environment_files(app):
        shutil.copyfile(path, out / path.name)
        files[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    info = app.ldp_build_info.as_json() | {"environment_sha256": files}
    (out / "build-info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


class BuildProvenance(SphinxDirective):
    """``{build-provenance}``: a paragraph with the build facts (for HTML and PDF)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_reread()  # the facts change with every build
        info: BuildInfo = self.env.app.ldp_build_info
        para = nodes.paragraph()
        para += nodes.Text(f"This copy of the book (version {info.version}) was built on {info.date_label} from commit ")
        para += nodes.literal(text=info.commit_label)
        if info.repository_url:
            para += nodes.Text(" of ")
            para += nodes.reference(text=info.repository_url, refuri=info.repository_url)
        para += nodes.Text(f", with Python {info.python}")
        for name in self.config.ldp_environment_files:
            para += nodes.Text(" and the packages pinned in ")
            if info.repository_url:
                ref = nodes.reference(refuri=info.url("blob", name))
                ref += nodes.literal(text=name)
                para += ref
            else:
                para += nodes.literal(text=name)
        para += nodes.Text(".")
        return [para]


def setup(app: Sphinx) -> dict[str, Any]:
    # executed-notebook folder -> source folder (scripts/run_notebooks.py copies them)
    app.add_config_value("ldp_generated_sources", {"_generated/notebooks/": "notebooks/"}, "env")
    # files that pin the environment, copied into the HTML output and linked in the footer
    app.add_config_value("ldp_environment_files", ["requirements.txt"], "env")
    app.connect("config-inited", _on_config_inited)
    app.connect("builder-inited", _on_builder_inited)
    app.connect("html-page-context", _on_html_page_context)
    app.connect("html-page-context", _on_launch_buttons, priority=600)  # after the theme's (501)
    app.connect("build-finished", _on_build_finished)
    app.add_directive("build-provenance", BuildProvenance)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
