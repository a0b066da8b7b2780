"""The artifact appendix, generated from the claims registry and the build manifest.

Security venues evaluate an artifact through an appendix in a fixed layout (USENIX
Security's: A.1 abstract, A.2 description and requirements, A.3 set-up, A.4 evaluation
workflow with the major claims C1...Cn and the experiments E1...En, A.5 reusability,
A.6 version).  Everything that layout asks for is already recorded here:

* the claims: :data:`ldp.book.chapters.REGISTRY` (each claim's id, statement, decision rule,
  chapter and figure; the paper's and ours, ``ours=True``), with each claim's verdict in
  the build computed by :func:`ldp.book.claims.evaluate_claim`, the one place a verdict is
  computed;
* the experiments: one per chapter that measures a claim, its command
  (``python -m ldp rerun``, :func:`ldp.book.rerun.run.command_line`) and parameters (the
  chapter's ``parameters`` cell: the paper's settings and the quick values);
* the times and the machine: the book build's manifest
  (``_generated/cache/<mode>/manifest.json``, written by :func:`ldp.book.rerun.build.run_all`),
  which records each chapter's wall time, when it finished and where it ran
  (:func:`ldp.book.rerun.build.run_facts`: commit, cores, CPU, memory, system, load).

:func:`collect` gathers them into an :class:`Appendix`; :func:`render_markdown` writes
the book's page (``_generated/artifact/appendix.md``, included by ``book/artifact.md``)
and :func:`render_latex` a standalone LaTeX document (``make artifact`` compiles it with
XeLaTeX into ``_build/artifact/artifact-appendix.pdf``).  :func:`missing` checks that a
rendering lists every claim of a registry with its command and a measured time.

Command line::

    .venv/bin/python -m ldp.book.artifact [--out DIR] [--mode full|quick]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..paths import atomic_path, generated_dir, repo_root

__all__ = ["Timing", "Experiment", "ClaimEntry", "Appendix", "read_manifest", "collect", "render_markdown",
           "render_latex", "missing", "write_appendix", "duration", "main"]

#: where the book build writes the appendix (under ``_generated/``)
ARTIFACT_DIR = "artifact"
TEX_NAME = "artifact-appendix.tex"
#: the layout the appendix follows
LAYOUT = "USENIX Security artifact appendix (sections A.1 to A.6, claims C1...Cn, experiments E1...En)"
MODES = ("full", "quick")
MODE_WORDS = {"full": "paper settings", "quick": "quick settings"}
_MAIN_PACKAGES = ("numpy", "scipy", "numba", "pandas", "seaborn", "papermill", "jupyter-book")


# --------------------------------------------------------------------------- #
# the data
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Timing:
    """One chapter's run in one build mode, as the manifest records it."""

    mode: str
    seconds: float
    finished: str
    ran_on: dict


@dataclass(frozen=True)
class Experiment:
    """One chapter that measures claims: its command, parameters and measured times."""

    key: str
    chapter: str
    title: str
    command: str
    quick_command: str
    parameters: tuple[tuple[str, str, str], ...]
    timings: dict
    claims: tuple[str, ...]

    def time_text(self) -> str:
        """``"85 s (paper settings), 55 s (quick settings)"`` or ``"not measured on this machine"``."""
        parts = [f"{duration(t.seconds)} ({MODE_WORDS[m]})" for m, t in self.timings.items()]
        return ", ".join(parts) if parts else "not measured on this machine (no book build yet)"


@dataclass(frozen=True)
class ClaimEntry:
    """One claim as the appendix lists it (the registry's public fields and its verdict)."""

    key: str
    id: str
    ours: bool
    where: str
    paper: str
    tested: str
    rule: str
    verdict: str
    experiment: str


@dataclass(frozen=True)
class Appendix:
    """Everything the appendix states; see :func:`collect`."""

    claims: tuple[ClaimEntry, ...]
    experiments: tuple[Experiment, ...]
    verdict_mode: str | None
    totals: dict  # mode -> (seconds, chapters timed)
    machine: dict
    version: str
    packages: tuple[tuple[str, str], ...]
    pins: int
    data: tuple[tuple[str, int], ...]


def duration(seconds: float) -> str:
    """``"12 s"`` below two minutes, else ``"3.4 min"`` (as the chapters print their times).

    >>> duration(12.3), duration(204)
    ('12 s', '3.4 min')
    """
    return f"{seconds:,.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def read_manifest(mode: str, generated: str | Path | None = None) -> dict:
    """The build manifest of ``mode`` (chapter -> seconds, params, values, finished, ran_on); ``{}`` if none.

    Raises
    ------
    ValueError
        If ``mode`` is not ``"full"`` or ``"quick"``, or the file is not a JSON object.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} must be one of {MODES}")
    path = (Path(generated) if generated is not None else generated_dir()) / "cache" / mode / "manifest.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a build manifest must be a JSON object, got {type(data).__name__}")
    return data


def _pins() -> tuple[int, tuple[tuple[str, str], ...]]:
    path = repo_root() / "requirements.txt"
    lines = path.read_text().splitlines() if path.is_file() else []
    pins = dict(line.split("==", 1) for line in (x.split("#")[0].strip() for x in lines) if "==" in line)
    return len(pins), tuple((name, pins[name]) for name in _MAIN_PACKAGES if name in pins)


def _data_files() -> tuple[tuple[str, int], ...]:
    from ..datasets import data_folder

    folder = data_folder()
    if folder is None or not folder.is_dir():
        return ()
    return tuple((p.name, p.stat().st_size) for p in sorted(folder.iterdir()) if p.is_file() and p.suffix != ".md")


def _where(section: str, ref: str, title: str) -> str:
    """``"section 6.2.1, Figure 5(a)"``: the figure's title only where the reference does not already say it."""
    place = f"section {section}" if section[:1].isdigit() else section
    parts = [place] + [x for x in (ref, title) if x and x != place]
    if title in parts and ref and title in ref:
        parts.remove(title)
    return ", ".join(dict.fromkeys(parts))


def _verdict_mode(generated: Path, manifests: dict) -> str | None:
    staged = generated / "MODE"
    mode = staged.read_text().strip() if staged.is_file() else ""
    if mode in manifests and manifests[mode]:
        return mode
    return next((m for m in MODES if manifests[m]), None)


def collect(registry, generated: str | Path | None = None, *, verdict_mode: str | None = None) -> Appendix:
    """The appendix's contents: the registry's claims, one experiment per chapter, the manifests' times.

    Parameters
    ----------
    registry : ldp.book.claims.Registry
        The claims (:data:`ldp.book.chapters.REGISTRY`); only their public fields are read.
    generated : path-like, optional
        The build's folder (default :func:`ldp.paths.generated_dir`).
    verdict_mode : {"full", "quick"}, optional
        Whose results decide the verdicts; default the staged build's mode (``_generated/MODE``),
        else a mode with a manifest; None when no build ran (verdicts "not evaluated").

    Returns
    -------
    Appendix
    """
    from .claims import ResultStore, evaluate_claim
    from .rerun.notebooks import notebook_title, source_notebooks
    from .rerun.parameters import notebook_parameters
    from .rerun.run import command_line

    if verdict_mode is not None and verdict_mode not in MODES:
        raise ValueError(f"verdict_mode={verdict_mode!r} must be one of {MODES} or None")
    base = Path(generated) if generated is not None else generated_dir()
    manifests = {m: read_manifest(m, base) for m in MODES}
    mode = verdict_mode if verdict_mode is not None else _verdict_mode(base, manifests)
    store = ResultStore.for_build(mode, base) if mode else None
    notebooks = {p.stem: p for p in source_notebooks()}

    chapters = list(dict.fromkeys(c.chapter for c in registry.claims))  # registry order
    keys = {ch: f"E{i}" for i, ch in enumerate(chapters, 1)}
    entries = []
    for i, claim in enumerate(registry.claims, 1):
        where = _where(claim.section, claim.ref, registry.title(claim.figure) if claim.figure else "")
        verdict = evaluate_claim(claim, store)["verdict"] if store is not None else "not evaluated (no build yet)"
        one_line = [" ".join(str(x).split()) for x in (where, claim.says, claim.test.what, claim.rule.describe())]
        entries.append(ClaimEntry(key=f"C{i}", id=claim.id, ours=claim.kind == "ours", where=one_line[0],
                                  paper=one_line[1], tested=one_line[2], rule=one_line[3], verdict=verdict,
                                  experiment=keys[claim.chapter]))
    experiments = []
    for ch in chapters:
        nb = notebooks.get(ch, Path(f"{ch}.ipynb"))
        params = notebook_parameters(nb) if ch in notebooks else {}
        timings = {m: Timing(m, float(manifests[m][ch]["seconds"]), str(manifests[m][ch].get("finished", "")),
                             dict(manifests[m][ch].get("ran_on") or {}))
                   for m in MODES if ch in manifests[m] and "seconds" in manifests[m][ch]}
        experiments.append(Experiment(
            key=keys[ch], chapter=ch, title=notebook_title(nb) if ch in notebooks else ch,
            command=command_line(nb, [], quick=False), quick_command=command_line(nb, [], quick=True),
            parameters=tuple((p.name, p.default_text, p.quick_text if p.has_quick else "") for p in params.values()),
            timings=timings, claims=tuple(e.key for e in entries if e.experiment == keys[ch])))
    totals = {m: (sum(float(v["seconds"]) for v in manifests[m].values() if "seconds" in v),
                  sum("seconds" in v for v in manifests[m].values())) for m in MODES if manifests[m]}
    ran = [t for e in experiments for t in e.timings.values() if t.ran_on]
    machine = dict(max(ran, key=lambda t: (t.mode == "full", t.finished)).ran_on) if ran else {}
    loads = [float(t.ran_on["load"]) for t in ran if t.ran_on.get("load") is not None]
    if loads:  # what else ran on the cores while the chapters did (the manifest's 1-minute load averages)
        machine["loads"] = (min(loads), max(loads))
    from .. import __version__

    pins, packages = _pins()
    return Appendix(claims=tuple(entries), experiments=tuple(experiments), verdict_mode=mode, totals=totals,
                    machine=machine, version=__version__, packages=packages, pins=pins, data=_data_files())


# --------------------------------------------------------------------------- #
# the words (one text for both renderings; `{c}` marks code, `{e}` emphasis)
# --------------------------------------------------------------------------- #
def _sections(a: Appendix) -> list[tuple[str, list[str]]]:
    """The appendix as (heading, paragraphs), paragraphs with ``{c}code{/c}`` marks; claims/experiments apart."""
    m = a.machine
    paper = sum(not c.ours for c in a.claims)
    machine = (f"{m.get('cpus', '?')} cores ({m.get('cpu', 'unknown CPU')}), {m.get('memory_gb', '?')} GB of "
               f"memory, {m.get('system', 'unknown system')}, Python {m.get('python', '?')}"
               if m else "not recorded (no book build on this machine yet)")
    if m.get("loads"):
        low, high = m["loads"]
        machine += (f"; the 1-minute load average when a chapter finished was {low:.1f} to {high:.1f}"
                    + (", so other work shared the cores and the times are longer than on an idle machine"
                       if high > float(m.get("cpus") or 1) else ""))
    def total(mode: str) -> str:
        if mode not in a.totals:
            return "not yet measured on this machine"
        seconds, chapters = a.totals[mode]
        return f"measured here: {duration(seconds)}, the sum of the {chapters} chapters' times"
    pkgs = ", ".join(f"{n} {v}" for n, v in a.packages)
    data = ", ".join(f"{{c}}{n}{{/c}} ({size:,d} bytes)" for n, size in a.data) or "none found"
    return [
        ("A.1 Abstract", [
            "This artifact reproduces {e}Locally Differentially Private Heavy Hitter Identification{/e} (Wang, "
            "Li, Jha): the Python library {c}ldp{/c} (distribution ldp-heavy-hitters) with the frequency oracles, "
            "PEM and its rivals, a count engine, and a Jupyter Book whose chapters are parameterized notebooks. "
            f"It states {len(a.claims)} claims ({paper} of the paper's, {len(a.claims) - paper} of ours, marked "
            f"ours), each decided by a stated rule against the results a build saves, in {len(a.experiments)} "
            "experiments (one per chapter that measures claims). Every number below is generated from the claims "
            "registry and the build manifest, not typed."]),
        ("A.2 Description & Requirements", [
            "{e}Security, privacy, and ethical concerns.{/e} None for the evaluator: the experiments are "
            "simulations on this machine (seeded runs, which the book labels as simulations), with no network "
            "access and no personal data beyond the public AOL query tally (counts of 6-byte query prefixes, "
            "from the paper authors' repository).",
            "{e}How to access.{/e} The repository named in {c}_config.yml{/c} and {c}CITATION.cff{/c}; this "
            "appendix describes version " + a.version + ".",
            "{e}Hardware dependencies.{/e} None beyond a commodity x86-64 machine. The times below were measured "
            f"on: {machine}.",
            f"{{e}}Software dependencies.{{/e}} Linux, Python 3.11 and the {a.pins} pinned packages of "
            f"{{c}}requirements.txt{{/c}} ({pkgs}, ...), installed by {{c}}make setup{{/c}}; XeLaTeX and latexmk "
            "only for the PDFs.",
            f"{{e}}Benchmarks.{{/e}} The data files shipped in {{c}}data/{{/c}}: {data}; the synthetic, Zipf "
            "and URL (a calibrated stand-in) data sets are generated by code."]),
        ("A.3 Set-up", [
            "{e}Installation.{/e} {c}make setup{/c} creates {c}.venv{/c} with the pinned packages and the "
            "package itself, and registers the Jupyter kernel {c}ldp{/c}.",
            "{e}Basic test.{/e} {c}make book QUICK=1{/c} runs every chapter with the quick settings and builds "
            "the book (" + total("quick") + "); {c}make test{/c} also runs the test suite."]),
        ("A.4 Evaluation workflow", [
            "{c}make book{/c} runs every experiment at once with the paper's settings (" + total("full") + ", two "
            "chapters at a time by default) and writes the reproduction report; each experiment below reruns "
            "one chapter into its own folder, with the claims it decides in {c}claims.md{/c} there. Expected "
            "result: each claim's verdict is \"reproduced\" when its measurement meets the tolerance of its "
            "rule (stated with the claim). "
            + (f"Verdicts shown: this build's ({MODE_WORDS[a.verdict_mode]}"
               + (", small samples: not the reproduction's verdicts" if a.verdict_mode == "quick" else "") + ")."
               if a.verdict_mode else "No build has run here yet, so no verdict is shown.")]),
    ]


def _tail(a: Appendix) -> list[tuple[str, list[str]]]:
    return [
        ("A.5 Notes on Reusability", [
            "Every chapter takes your own values: {c}python -m ldp rerun NN --set NAME=VALUE{/c} (the book's "
            "rerun page lists each chapter's parameters); {c}make lab{/c} opens the notebooks in JupyterLab. "
            "The library's reference is in the book. A new claim is one {c}Claim{/c} beside its figure in "
            "{c}ldp/figures/{/c}; it appears in this appendix at the next build."]),
        ("A.6 Version", [
            f"Generated for ldp-heavy-hitters {a.version} in the layout of the {LAYOUT}, from the claims "
            "registry and the build manifest"
            + (f" (the timed runs: commit{'s' * (',' in _commit(a))} {_commit(a)})" if _commit(a) else "") + "."]),
    ]


def _commit(a: Appendix) -> str:
    """The commits the timed runs were made from (``+modified``: with uncommitted changes), oldest first."""
    runs = sorted((t.finished, str(t.ran_on.get("commit") or "")) for e in a.experiments for t in e.timings.values())
    commits = list(dict.fromkeys(c for _, c in runs if c))
    return ", ".join(c[:12] + (" with uncommitted changes" if c.endswith("+modified") else "") for c in commits)


def _claim_text(c: ClaimEntry, e: Experiment) -> tuple[str, str]:
    """(title, body) of a claim: its id and statement; the rule, experiment, command, time, verdict."""
    title = f"{{c}}{c.id}{{/c}}" + (" (ours)" if c.ours else " (paper)") + f": {c.where}"
    body = (f"The paper: {{e}}{c.paper}{{/e}}; tested: {c.tested}. Expected result and tolerance: {c.rule}. "
            f"Experiment {e.key} (chapter {{c}}{e.chapter}{{/c}}): {{c}}{e.command}{{/c}}; time: {e.time_text()}. "
            f"Verdict: {c.verdict}.")
    return title, body


def _ranges(keys: list[str]) -> str:
    """``["C1", "C2", "C3", "C7"]`` -> ``"C1-C3, C7"`` (runs of consecutive numbers joined by a dash)."""
    nums = [int(k[1:]) for k in keys]
    runs: list[list[int]] = []
    for n in nums:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    prefix = keys[0][0] if keys else ""
    return ", ".join(f"{prefix}{r[0]}" + (f"-{prefix}{r[-1]}" if len(r) > 1 else "") for r in runs)


def _experiment_text(e: Experiment, keys: list[str]) -> tuple[str, list[str]]:
    first = next(iter(e.timings.values()), None)  # the paper settings' time if measured, else the quick one
    cost = f" [{duration(first.seconds)} of compute, {MODE_WORDS[first.mode]}]" if first else ""
    params = "; ".join(f"{{c}}{n} = {d}{{/c}}" + (f" (quick: {{c}}{q}{{/c}})" if q else "")
                       for n, d, q in e.parameters) or "none"
    claims = _ranges(keys)
    return f"{e.title}{cost}", [
        f"Chapter {{c}}{e.chapter}{{/c}}; tests {claims}.",
        f"{{e}}Execution.{{/e}} {{c}}{e.command}{{/c}} (the paper's settings); {{c}}{e.quick_command}{{/c}} "
        "for a quick check.",
        f"{{e}}Parameters{{/e}} (the paper's settings, with the quick values): {params}.",
        f"{{e}}Results.{{/e}} Time measured here: {e.time_text()}. The run's {{c}}claims.md{{/c}} gives "
        f"the verdict of {claims}, each by the rule stated with the claim."]


# --------------------------------------------------------------------------- #
# renderings
# --------------------------------------------------------------------------- #
_POWER = re.compile(r"(?<![\w.])([A-Za-z0-9.]+|\([^()]*\))\^([A-Za-z0-9.εηθγ]+)")


def caret_math(text: str) -> str:
    """Powers written with a caret (``10^6``, ``k^1.5``) as inline math, outside existing ``$...$`` spans."""
    parts = text.split("$")
    if len(parts) % 2 == 0:  # unbalanced dollars: leave the text as it is
        return text
    return "$".join(_POWER.sub(r"$\1^{\2}$", p) if i % 2 == 0 else p for i, p in enumerate(parts))


def _md(text: str) -> str:
    pieces = text.replace("|", "\\|").split("{c}")  # code spans ({c}...{/c}) keep their carets
    text = "{c}".join([caret_math(pieces[0])] + [c.split("{/c}", 1)[0] + "{/c}" + caret_math(c.split("{/c}", 1)[1])
                                                 if "{/c}" in c else c for c in pieces[1:]])
    return text.replace("{c}", "`").replace("{/c}", "`").replace("{e}", "*").replace("{/e}", "*")


def render_markdown(a: Appendix) -> str:
    """The appendix as MyST markdown (the book page's body), headings from level 2."""
    out = ["<!-- Generated by ldp.book.artifact from the claims registry and the build manifest. Do not edit. -->", ""]
    for head, paras in _sections(a):
        out += [f"## {head}", ""] + [p for para in paras for p in (_md(para), "")]
    out += ["### A.4.1 Major claims", ""]
    exps = {e.key: e for e in a.experiments}
    for c in a.claims:
        title, body = _claim_text(c, exps[c.experiment])
        out += [f"**({c.key})** {_md(title)}. {_md(body)}", ""]
    out += ["### A.4.2 Experiments", ""]
    for e in a.experiments:
        title, paras = _experiment_text(e, list(e.claims))
        out += [f"**({e.key})** {_md(title)}", ""] + [f"- {_md(p)}" for p in paras] + [""]
    for head, paras in _tail(a):
        out += [f"## {head}", ""] + [p for para in paras for p in (_md(para), "")]
    return "\n".join(out)


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
        "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "$": r"\$"}


def tex_escape(text: str) -> str:
    """Plain text for LaTeX: its special characters escaped (math is not kept: every ``$`` is literal)."""
    return "".join(_TEX.get(ch, ch) for ch in text)


def _tex(text: str) -> str:
    def code(m: re.Match) -> str:  # code may break after spaces, commas and slashes
        inner = tex_escape(m.group(1)).replace(",", ",\\allowbreak{}").replace("/", "/\\allowbreak{}")
        return r"\texttt{" + inner + "}"

    def words(piece: str) -> str:  # $...$ (a chapter title's math) stays math when the dollars pair up
        bits = piece.split("$") if piece.count("$") % 2 == 0 else [piece]
        return "".join(f"${b}$" if i % 2 else tex_escape(b).replace(r"\{e\}", r"\emph{").replace(r"\{/e\}", "}")
                       for i, b in enumerate(bits))

    parts = re.split(r"(\{c\}.*?\{/c\})", text)
    out = "".join(code(re.match(r"\{c\}(.*)\{/c\}", p, re.S)) if p.startswith("{c}") else  # type: ignore[arg-type]
                  words(p) for p in parts)
    return out.replace("--", "-{}-")


def render_latex(a: Appendix) -> str:
    """The appendix as a standalone LaTeX document for XeLaTeX (two columns, as USENIX's template)."""
    out = [
        "% Generated by ldp.book.artifact from the claims registry and the build manifest. Do not edit.",
        r"\documentclass[letterpaper,twocolumn,10pt]{article}",
        r"\usepackage[margin=0.75in,columnsep=0.33in]{geometry}",
        r"\usepackage{fontspec}",
        r"\setmainfont{FreeSerif}\setsansfont{FreeSans}\setmonofont{FreeMono}",
        r"\usepackage{enumitem}",
        r"\usepackage[hidelinks]{hyperref}",
        r"\setlength{\emergencystretch}{3em}",
        r"\renewcommand{\thesection}{A.\arabic{section}}",
        r"\title{Artifact Appendix: Locally Differentially Private Heavy Hitter Identification}",
        r"\author{" + tex_escape(f"ldp-heavy-hitters {a.version}") + "}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
    ]
    exps = {e.key: e for e in a.experiments}

    def section(head: str, paras: list[str]) -> None:
        name = head.split(" ", 1)[1]
        out.append(r"\section{" + tex_escape(name) + "}")
        out.extend(_tex(p) + "\n" for p in paras)

    for head, paras in _sections(a):
        section(head, paras)
    out += [r"\subsection{Major Claims}", r"\begin{description}[style=unboxed,leftmargin=0pt,font=\normalfont]"]
    for c in a.claims:
        title, body = _claim_text(c, exps[c.experiment])
        out.append(rf"\item[({c.key})] {_tex(title)}. {_tex(body)}")
    out += [r"\end{description}", r"\subsection{Experiments}",
            r"\begin{description}[style=unboxed,leftmargin=0pt,font=\normalfont]"]
    for e in a.experiments:
        title, paras = _experiment_text(e, list(e.claims))
        out.append(rf"\item[({e.key})] \textbf{{{_tex(title)}}}\\")
        out.append(r"\begin{itemize}[nosep]" + "".join(r"\item " + _tex(p) for p in paras) + r"\end{itemize}")
    out.append(r"\end{description}")
    for head, paras in _tail(a):
        section(head, paras)
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- #
# the check and the files
# --------------------------------------------------------------------------- #
_ENTRY = re.compile(r"(?:\*\*|\\item\[)\((C\d+)\)")
_TIME = re.compile(r"\d[\d.,]* (?:s|min) \((?:paper|quick) settings\)")


def missing(text: str, registry) -> dict[str, str]:
    """Claims of ``registry`` that a rendering does not list with a rerun command and a measured time.

    Parameters
    ----------
    text : str
        :func:`render_markdown` or :func:`render_latex` output.
    registry : ldp.book.claims.Registry

    Returns
    -------
    dict
        Claim id -> what is missing (``"absent"``, ``"no command"``, ``"no time"``); empty when complete.
    """
    blocks = {}
    pieces = _ENTRY.split(text)
    for body in pieces[2::2]:
        body = body.split("\n", 1)[0]  # a claim is one line of either rendering
        found = re.search(r"(?:`|\\texttt\{)([A-Za-z0-9.-]+)(?:`|\})", body)
        if found:
            blocks[found.group(1)] = body.replace("\\allowbreak{}", "").replace("\\_", "_")
    out = {}
    for claim in registry.claims:
        body = blocks.get(claim.id)
        if body is None:
            out[claim.id] = "absent"
        elif not re.search(r"python -m ldp rerun \S+", body):
            out[claim.id] = "no command"
        elif not _TIME.search(body):
            out[claim.id] = "no time"
    return out


def write_appendix(registry, generated: str | Path | None = None, out: str | Path | None = None, *,
                   verdict_mode: str | None = None) -> dict[str, Path]:
    """Write ``appendix.md`` and ``artifact-appendix.tex`` (atomically) into ``out``.

    ``out`` defaults to ``<generated>/artifact``; see :func:`collect` for the other parameters.
    Returns the written paths by name.
    """
    a = collect(registry, generated, verdict_mode=verdict_mode)
    folder = Path(out) if out is not None else (Path(generated) if generated else generated_dir()) / ARTIFACT_DIR
    paths = {}
    for name, text in (("appendix.md", render_markdown(a)), (TEX_NAME, render_latex(a))):
        with atomic_path(folder / name) as tmp:
            tmp.write_text(text, encoding="utf-8")
        paths[name] = folder / name
    return paths


def main(argv: list[str] | None = None) -> int:
    """``python -m ldp.book.artifact``: write the appendix (markdown and LaTeX), naming the claims without a time."""
    ap = argparse.ArgumentParser(prog="python -m ldp.book.artifact", description=main.__doc__)
    ap.add_argument("--out", help="folder for appendix.md and artifact-appendix.tex (default _generated/artifact)")
    ap.add_argument("--mode", choices=MODES, help="whose results decide the verdicts (default: the staged build)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a claim lacks a command or a measured time")
    args = ap.parse_args(argv)
    from .chapters import REGISTRY

    paths = write_appendix(REGISTRY, out=args.out, verdict_mode=args.mode)
    for name, path in paths.items():
        print(f"[artifact] {name}: {path}")
    gaps = missing(paths[TEX_NAME].read_text(encoding="utf-8"), REGISTRY)
    if gaps:
        chapters = sorted({c.chapter for c in REGISTRY.claims if c.id in gaps})
        print(f"[artifact] warning: {len(gaps)} claim(s) without a command or a measured time, of the chapters "
              f"{', '.join(chapters)} (no build has timed them: run `make book`)", file=sys.stderr)
    return 1 if gaps and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
