"""The claims registry: integrity of every entry (ids, quotes, sections, figures, links, settings)."""
import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest
from myst_parser.mdit_to_docutils.base import default_slugify

from ldp.book import chapters as figures
from ldp.book.chapters import CLAIMS, REGISTRY
from ldp.book.claims import claim as C
from ldp.book.claims import rules as R
from ldp.book.rerun import notebook_parameters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
IDS = [c.id for c in CLAIMS]
sys.path.insert(0, str(ROOT / "scripts"))
import check_quotes  # noqa: E402


def heading_anchors(md: Path) -> set[str]:
    """The anchors MyST gives the headings (levels 1-3, myst_heading_anchors: 3) of a Markdown page."""
    out, fence = set(), False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        m = re.match(r"^(#{1,3}) (.*)$", line)
        if m and not fence:
            out.add(default_slugify(m.group(2).replace("`", "")))
    return out


def figure_labels(chapter: str) -> set[str]:
    nb = json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return set(re.findall(r":name: (fig-[a-z0-9-]+)", text))


TITLES = {**C.paper_titles(), **REGISTRY.titles}


def test_registry_size_and_unique_ids():
    assert len(CLAIMS) >= 35
    assert len(set(IDS)) == len(IDS)
    for claim_id in IDS:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", claim_id), claim_id
    assert REGISTRY.get("fig7b-theta-0005").section == "6.2.3"
    with pytest.raises(KeyError, match="no claim"):
        REGISTRY.get("fig99-nothing")
    with pytest.raises(ValueError, match="share an id"):
        C.Registry(sentences=(CLAIMS[0], CLAIMS[0]))


def test_claims_are_frozen_and_built_by_keyword():
    claim = CLAIMS[0]
    with pytest.raises(TypeError):
        C.Claim(claim.id, claim.section, claim.ref, claim.quote, claim.says, claim.test)  # type: ignore[misc]
    with pytest.raises(TypeError):
        C.Test(claim.test.what, claim.test.measure, claim.rule, claim.chapter)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.id = "x"  # type: ignore[misc]
    test = dataclasses.replace(claim.test, reads=None)
    if test.figure:
        assert test.inputs == (f"figure:{test.figure}",)  # the figure's CSV unless told otherwise
    assert dataclasses.replace(test, reads=("06_evaluation/anomalies",)).inputs == ("table:06_evaluation/anomalies",)


def test_the_records_are_small():
    """A claim and its test are each read at a glance: about ten fields, no flags tying rows together."""
    assert len(dataclasses.fields(C.Claim)) <= 10 and len(dataclasses.fields(C.Test)) <= 10
    for name in ("part_of", "decides", "ours", "reading", "stand_in_decides"):
        assert name not in {f.name for f in dataclasses.fields(C.Claim) + dataclasses.fields(C.Test)}


def test_every_figure_module_follows_the_pattern():
    """frame, NAME (or NAMES) and ENGINES; draw for a figure; its claims read only its own figures and tables."""
    for module in figures.MODULES:
        names = {module.NAME} if hasattr(module, "NAME") else set(module.NAMES.values())
        assert callable(module.frame) and module.ENGINES, module.__name__
        if any(n.startswith("fig-") for n in names):
            assert callable(module.draw), module.__name__
        own = {f"figure:{n}" for n in names} | {f"table:{t}" for t in module.ENGINES}
        for sentence in getattr(module, "CLAIMS", ()):
            for claim in sentence.every():
                if claim.chapter == sentence.chapter:  # a part another chapter measures reads that chapter's
                    assert set(claim.test.inputs) <= own, (module.__name__, claim.id, claim.test.inputs)


def test_the_rows_readers_asked_for_are_in_the_registry():
    for claim_id in ("fig7b-theta-0005", "fig5-lead-grows-with-eps", "fig6-spm-small-k", "fig6-url-pem-k",
                     "fig4-analysis-matches", "fig3-analysis-matches", "fig3b-eta-optimal", "fig8c-assumption-similar",
                     "fig5-pem-best"):
        assert claim_id in IDS


def test_every_paper_section_and_figure_has_claims():
    majors = {c.section.split(".")[0] for c in CLAIMS}
    assert {"2", "3", "4", "5", "6"} <= majors
    refs = " ".join(c.ref for c in CLAIMS)
    for n in range(1, 10):
        assert re.search(rf"Figures? (\d, )*{n}\b", refs), f"no claim about Figure {n}"
    for eq in ("(1)", "(3)", "(4)", "(5)"):
        assert f"eq. {eq}" in refs


@pytest.mark.parametrize("claim", CLAIMS, ids=IDS)
def test_quote_is_well_formed(claim):
    q = claim.quote
    assert q and q == q.strip() and len(q) <= 300
    assert "\n" not in q and "..." not in q and "…" not in q  # verbatim, never abridged
    assert q.count("$") % 2 == 0, "unbalanced math"
    assert q.count("{") == q.count("}"), "unbalanced braces"
    shown = C.display_quote(q)
    assert shown and "\\itergroup" not in shown and "\\hash" not in shown and "\\ref" not in shown


@pytest.mark.parametrize("claim", CLAIMS, ids=IDS)
def test_entry_is_complete(claim):
    assert re.fullmatch(r"[1-7](\.\d){0,2}|Appendix", claim.section), claim.section  # 1: the introduction
    if claim.kind == "ours":  # ours: after PEM (08), malicious users (09), PEM at scale (10), said so in the ref
        assert claim.chapter in ("08_after_pem", "09_malicious_users", "10_scale") and "ours" in claim.ref
    for m in re.finditer(r"Figures? ([\d, ]+)", claim.ref):  # the paper's numbering: Figures 1 to 9
        assert all(1 <= int(n) <= 9 for n in re.findall(r"\d+", m.group(1)))
    assert claim.says and claim.test.what
    assert callable(claim.test.measure)
    assert isinstance(claim.rule, R.Rule) and claim.rule.describe()
    assert (NOTEBOOKS / f"{claim.chapter}.ipynb").is_file()
    if claim.figure:
        assert claim.figure in figure_labels(claim.chapter), f"{claim.figure} is not a figure of {claim.chapter}"
        assert claim.figure in TITLES and claim.figure in REGISTRY.engines
    for item in claim.test.inputs:
        kind, _, name = item.partition(":")
        if kind == "figure":
            assert name in TITLES, item
        else:
            assert kind == "table", item
            chapter, _, table = name.partition("/")
            assert table in REGISTRY.tables[chapter], item
    assert set(claim.test.stand_ins) <= set(C.STAND_INS)


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.test.readings], ids=lambda c: c.id)
def test_interpretation_links_point_at_headings(claim):
    anchors = heading_anchors(ROOT / "book" / "interpretation.md")
    for anchor in claim.test.readings:
        assert anchor in anchors, f"{anchor} is not a heading of book/interpretation.md"


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.test.other_readings], ids=lambda c: c.id)
def test_every_alternative_reading_is_documented(claim):
    anchors = heading_anchors(ROOT / "book" / "interpretation.md")
    for alt in claim.test.other_readings:
        assert alt.anchor in anchors and len(alt.reading) > 20, (claim.id, alt.anchor)


def test_every_claim_on_a_reading_is_decided_under_another():
    # reading-sensitivity verdicts are shown for every claim that rests on a reading
    bare = [c.id for c in CLAIMS if c.test.readings and not c.test.other_readings]
    assert not bare, f"claims citing a reading with no Alternative to decide them under: {bare}"
    assert sum(bool(c.test.other_readings) for c in CLAIMS) >= 60


def test_a_sentence_is_counted_once():
    """A sentence holds its parts; two sentences never quote the same words; a part is of its sentence's kind."""
    quotes = {s.id: [C.display_quote(c.quote) for c in s.every()] for s in REGISTRY.sentences
              if s.kind != "ours"}  # our claims quote our own bar, not the paper
    for a, qa in quotes.items():
        for b, qb in quotes.items():
            if a < b:
                assert not any(x in y or y in x for x in qa for y in qb), (a, b)
    decrease = REGISTRY.get("fig6-decrease-with-k")
    assert {"fig6-spm-small-k", "fig6-mcm-small-k", "fig6-url-pem-k"} == {c.id for c in decrease.details}
    assert not any(REGISTRY.decides(c.id) for c in decrease.details)  # details of 'most cases'
    assert all(REGISTRY.sentence_of(c.id) is decrease for c in decrease.every())
    assert "k^{1.5}" not in REGISTRY.get("fig6-mcm-small-k").quote  # the sentence its rule tests
    assert REGISTRY.sentence_of("fig7b-theta-0005").id == "fig7bc-pem-better"
    assert REGISTRY.get("fig7bc-pem-better").kind == "reading"
    assert REGISTRY.get("s423-prefix-mass").kind == "reading"  # an assumption of the analysis, not a result
    part = REGISTRY.get("fig56-aol-pem-best")
    with pytest.raises(ValueError, match="parts of their own"):  # a part of a part
        dataclasses.replace(CLAIMS[0], parts=(dataclasses.replace(part, parts=(CLAIMS[3],)),))
    with pytest.raises(ValueError, match="kind"):  # a part is of its sentence's kind
        C.Registry(sentences=(dataclasses.replace(REGISTRY.get("fig7bc-pem-better"), kind="paper"),))
    assert C.Registry(sentences=(REGISTRY.get("fig7b-theta-0005"),))  # a rerun's registry may hold a part alone
    with pytest.raises(ValueError, match="cause kind"):
        dataclasses.replace(CLAIMS[0].test, cause=C.Cause("a typo", str))
    with pytest.raises(ValueError, match="kind"):
        dataclasses.replace(CLAIMS[0], kind="mine")


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.test.setting], ids=lambda c: c.id)
def test_setting_names_are_parameters_of_the_chapter(claim):
    params = notebook_parameters(NOTEBOOKS / f"{claim.chapter}.ipynb")
    for name, value in claim.test.setting.items():
        assert name in params, f"{claim.chapter} has no parameter {name}"
        default = params[name].default
        if isinstance(value, tuple):  # the paper's setting is in the chapter's default list
            assert all(any(abs(float(v) - float(d)) < 1e-9 for d in default) for v in value), (name, default)
        else:
            assert default == value, (name, default, value)


def test_ours_are_marked_and_chapter_08s_rows_exist():
    ours = {c.id for c in CLAIMS if c.kind == "ours"}
    assert {"ours-pem-beats-successors-eps", "ours-pem-beats-successors-k", "ours-pem-beats-sfp",
            "ours-successors-f1-08", "ours-treehist-fewer-groups"} <= ours
    assert REGISTRY.get("s7-treehist-poor").kind == "paper"  # the paper's own sentence about TreeHist
    assert all(REGISTRY.get(i).section == "7" for i in ours)
    ids = [c.id for c in CLAIMS]
    assert ids.index("ours-pem-beats-sfp") > ids.index("fig8c-assumption-similar")  # after the paper's claims


def test_figure_numbers_come_from_the_books_list():
    """The paper's numbers of figures and equations are read from book/_ext/paper_numbers.yml, not retyped."""
    data = C.paper_numbers()
    for fig in data["figures"]:
        for label in fig["book"]:
            assert TITLES[label] == f"Figure {fig['number']}"
    assert len([f for f in TITLES.values() if f.startswith("Figure ") and f[7:].isdigit()]) == 9
    assert C.display_quote(r"see~\eqref{var_grr} and Figure~\ref{fig:eval_var}") == "see (1) and Figure 9"
    assert C.paper_numbers(str(ROOT / "no-such-file.yml")) == {k: [] for k in ("figures", "equations",
                                                                               "statements", "sections")}


def test_extra_tables_are_few_and_documented():
    # a claim reads its figure's frame; a chapter saves at most two tables beside its figures
    assert all(len(t) <= 2 for t in REGISTRY.tables.values()), {c: list(t) for c, t in REGISTRY.tables.items()}
    for chapter, tables in REGISTRY.tables.items():
        assert (NOTEBOOKS / f"{chapter}.ipynb").is_file()
        for columns, meaning in tables.values():
            assert columns and meaning


def test_display_quote_prints_the_macros():
    assert C.display_quote(r"It is clear that \itergroup performs best") == "It is clear that PEM performs best"
    assert C.display_quote(r"When $\epsilon=4$, \itergroup achieves $\fone=0.9$,") == \
        r"When $\epsilon=4$, PEM achieves $\mathsf{F1}=0.9$,"
    assert C.display_quote(r"in Figure~\ref{fig:eval_improve} and~\eqref{var_olh}.") == "in Figure 8(a) and (3)."


TEX = r"""
\section{Intro} text
\section{Background}
\subsection{DP}
\subsection{Oracles}
\subsubsection{GRR}
we have $p=1$ and
the variance   is
  small.
\section{Problem}
\appendix
\mypara{Proof} A lemma holds.
"""


def test_check_quotes_against_a_source():
    parts = dict(check_quotes.paper_sections(TEX))
    assert "2.2.1" in parts and "Appendix" in parts and "3" in parts
    claims = [dataclasses.replace(CLAIMS[0], id=i, section=sec, quote=q) for i, sec, q in (
        ("a-b", "2.2.1", "we have $p=1$ and the variance is small."), ("c-d", "2.2", "the variance is large"),
        ("e-f", "2.2", "A lemma holds."))]
    out = check_quotes.check_quotes(TEX, claims).set_index("id")
    assert out.loc["a-b", "found"] and out.loc["a-b", "section_ok"]  # line breaks do not matter
    assert not out.loc["c-d", "found"]
    assert out.loc["e-f", "found"] and out.loc["e-f", "sections"] == "Appendix" and not out.loc["e-f", "section_ok"]
