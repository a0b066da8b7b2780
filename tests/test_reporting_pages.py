"""The claims in the book: the generated pages, the evidence data, the build and rerun hooks, the banner.

Unit tests on small fake result stores (written here) and on the paper-scale fixture
(tests/data/reporting/, a full build's figure CSVs): what ``make book`` writes into
``_generated/report/`` after the notebooks ran (ldp.book.rerun.build.stage ->
ldp.book.pages.write_book_report), in quick and in full mode, and what a rerun writes into
its folder.
"""
import dataclasses
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ldp.book import pages as PG
from ldp.book import report as RPT
from ldp.book.chapters import CLAIMS, REGISTRY
from ldp.book.claims import claim as C
from ldp.book.claims import evaluation as RP
from ldp.book.claims import verdicts as V
from ldp.book.claims.store import ResultStore
from ldp.book.report import CLAIMS_JSON, REPORT_DIR

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "reporting"
BANNER = "Quick build."


def eval_vary_eps(pem_ahead: bool) -> pd.DataFrame:
    """A tiny Figure 5 table: two data sets, three methods, two budgets, F1 and NCR; 10 runs per point."""
    rows = []
    for ds in ("URL", "Synthetic"):
        for eps in (1.0, 2.0):
            for protocol, level in (("PEM", 0.8 if pem_ahead else 0.2), ("MCM", 0.5), ("SPM", 0.4)):
                for metric in ("f1", "ncr"):
                    rows.append({"panel": "a", "dataset": ds, "metric": metric, "protocol": protocol,
                                 "epsilon": eps, "mean": level + 0.05 * eps, "std": 0.02, "runs": 10})
    return pd.DataFrame(rows)


def fake_store(root: Path, pem_ahead: bool = True) -> Path:
    (root / "figures").mkdir(parents=True)
    eval_vary_eps(pem_ahead).to_csv(root / "figures" / "fig-eval-vary-eps.csv", index=False)
    return root


def rows_of(page: str) -> list[str]:
    """The sentence ids of the report's evidence blocks."""
    return re.findall(r"^\(claim-([a-z0-9-]+)\)=$", page, re.M)


# --------------------------------------------------------------------------- #
# a small fake store
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("pem_ahead, verdict", [(True, V.REPRODUCED), (False, V.NOT_REPRODUCED)])
def test_a_small_store_decides_figure_5(tmp_path, pem_ahead, verdict):
    store = ResultStore(fake_store(tmp_path / "s", pem_ahead), mode="quick")
    row = RP.evaluate(store, C.Registry(sentences=(REGISTRY.get("fig5-pem-best"),))).iloc[0]
    assert row["verdict"] == verdict
    assert "holds at 8 of 8 points" in row["measured"] if pem_ahead else "0 of 8" in row["measured"]


def test_quick_build_pages_carry_the_banner(tmp_path):
    generated = tmp_path / "_generated"
    fake_store(generated / "cache" / "quick")
    paths = PG.write_book_report("quick", REGISTRY, generated)
    folder = generated / REPORT_DIR
    assert paths["report.md"] == folder / "report.md" and paths[CLAIMS_JSON] == folder / "claims.json"
    report = (folder / "report.md").read_text()
    assert report.startswith("```{warning}\n**" + BANNER) and "not** the reproduction's verdicts" in report
    assert BANNER in (folder / "answer.md").read_text() and "quick build" in (folder / "scorecard.md").read_text()
    data = json.loads((folder / "claims.json").read_text())
    sentences = {s.id for s in REGISTRY.sentences}
    assert data["mode"] == "quick" and len(data["rows"]) == len(sentences)
    assert sum(len(r["parts"]) for r in data["rows"]) == len(CLAIMS)
    assert sum(data["counts"].values()) == len([r for r in data["rows"] if r["kind"] == "paper"])
    fig5 = [r for r in data["rows"] if "fig-eval-vary-eps" in r["figures"]]
    best = next(r for r in fig5 if r["id"] == "fig5-pem-best")
    assert best["label"] == "claim-fig5-pem-best" and [p["id"] for p in best["parts"]] == ["fig5-pem-best",
                                                                                          "fig56-aol-pem-best"]
    assert best["parts"][0]["verdict"] == V.REPRODUCED and best["parts"][0]["quote"] == \
        "It is clear that PEM performs best among all three protocols."
    assert data["figures"]["fig-eval-vary-eps"] == "Figure 5"
    # everything else is missing in this store: not testable, never an error, each with its cause
    others = [p for r in data["rows"] for p in r["parts"] if p["figure"] != "fig-eval-vary-eps"
              and p["id"] not in ("fig6-f1-ncr-correlated", "fig6-better-f1-better-ncr")]
    assert {p["verdict"] for p in others} == {V.NOT_TESTABLE}
    assert all(p["cause_class"] in ("missing", "not-run", "stand-in") and p["cause"] for p in others)
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == ["answer.md", "claims.csv", "claims.json",
                                                                       "gallery.md", "report.md", "scorecard.md"]


def test_full_build_pages_on_the_paper_scale_fixture(tmp_path):
    """The full-mode path that `make book` takes, on a full build's figure data: >= 35 decided rows, no banner."""
    generated = tmp_path / "_generated"
    shutil.copytree(FIXTURE, generated / "cache" / "full")
    PG.write_book_report("full", REGISTRY, generated)
    folder = generated / REPORT_DIR
    report = (folder / "report.md").read_text()
    assert BANNER not in report and BANNER not in (folder / "answer.md").read_text()
    firsts = list(REGISTRY.sentences)  # one block per sentence: the paper's in its order, then ours
    kind = {c.id: c.kind for c in firsts}
    assert rows_of(report) == [c.id for k in ("paper", "reading", "ours") for c in firsts if kind[c.id] == k]
    data = json.loads((folder / "claims.json").read_text())
    parts = {p["id"]: p for r in data["rows"] for p in r["parts"]}
    assert len([p for p in parts.values() if p["verdict"] != V.NOT_TESTABLE]) >= 35
    by_id = {r["id"]: r for r in data["rows"]}
    assert parts["fig7b-theta-0005"]["verdict"] == V.NOT_REPRODUCED and not parts["fig7b-theta-0005"]["decides"]
    assert by_id["fig7bc-pem-better"]["kind"] == "reading"  # 7(b)'s sentence states no result: apart
    assert by_id["fig5-lead-grows-with-eps"]["verdict"] == V.NOT_REPRODUCED
    assert by_id["fig5-lead-grows-with-eps"]["cause_label"] == V.CAUSES["stand-in"][0]  # MCM finds 7.4 URLs, not 2
    assert "tolerance 0.020" in parts["fig8c-assumption-similar"]["explanation"]
    assert parts["ours-pem-beats-sfp"]["ours"] and by_id["ours-pem-beats-sfp"]["kind"] == "ours"
    table = pd.read_csv(folder / "claims.csv")
    assert data["counts"] == RP.verdict_counts(RP.sentences(table).query("kind == 'paper'"))
    assert "## How the verdicts are decided" in report and "`SIMILAR_F1`" in report
    figures = {f for r in data["rows"] for f in r["figures"]}
    for fig in ("fig-eval-vary-eps", "fig-eval-vary-k", "fig-evalmore-threshold", "fig-evalmore-design",
                "fig-eval-var", "fig-validation-identification", "fig-validation-configurations",
                "fig-validation-optimal", "fig-existing-all-methods"):  # the 9 paper figures all have rows
        assert fig in figures, fig


def test_the_build_stage_writes_the_report(tmp_path, monkeypatch):
    """ldp.book.rerun.build.stage (make book, make pdf) writes _generated/report/ for the mode it stages."""
    from ldp.book.rerun.build import stage

    monkeypatch.setenv("LDP_ROOT", str(tmp_path))
    (tmp_path / "notebooks").mkdir()  # a checkout without chapters
    fake_store(tmp_path / "_generated" / "cache" / "quick")
    stage(True)
    assert (tmp_path / "_generated" / "MODE").read_text() == "quick\n"
    assert (tmp_path / "_generated" / "figures" / "fig-eval-vary-eps.csv").is_file()
    report = tmp_path / "_generated" / REPORT_DIR / "report.md"
    assert report.read_text().startswith("```{warning}\n**" + BANNER)
    assert json.loads((report.parent / "claims.json").read_text())["mode"] == "quick"


def test_the_book_pages_include_the_generated_files():
    """book/reproduction.md and book/intro.md include what the build writes, the answer first, the details
    folded after the gallery; the report offers the claims as data; the extension is registered."""
    page = (ROOT / "book" / "reproduction.md").read_text()
    assert "```{include} ../_generated/report/report.md" in page
    assert "{download}`claims.csv </_generated/report/claims.csv>`" in page
    assert "{download}`claims.json </_generated/report/claims.json>`" in page
    intro = (ROOT / "book" / "intro.md").read_text()
    body = intro.split("\n# ", 1)[1].split("\n\n")
    assert body[1].startswith("```{include} ../_generated/report/answer.md")  # the answer opens the page
    order = [intro.index(f"```{{include}} ../_generated/report/{name}.md") for name in ("answer", "gallery",
                                                                                       "scorecard")]
    assert order == sorted(order) and order[0] < intro.index("**The paper:**") < order[1]
    assert "{doc}`the reproduction report <reproduction>`" in intro[:order[1]]
    config = (ROOT / "_config.yml").read_text()
    assert "ldp_evidence: book/_ext" in config and re.search(r"^\s+- ldp_evidence$", config, re.M)
    script = (ROOT / "book" / "_static" / "ldp-explorer.js").read_text()  # the explorer: our own script, offline
    assert "table.ldp-explorer" in script and not re.search(r"https?:|import\(|fetch\(", script)
    assert "@media (max-width" in (ROOT / "book" / "_static" / "ldp-explorer.css").read_text()


# --------------------------------------------------------------------------- #
# a rerun's claims table
# --------------------------------------------------------------------------- #
def test_rerun_writes_its_claims_table(tmp_path):
    run = tmp_path / "my-own-folder"  # --out: not named CHAPTER-HASH
    (run / "figures").mkdir(parents=True)
    t7 = pd.read_csv(FIXTURE / "figures" / "fig-evalmore-threshold.csv")
    t7[t7["threshold"] != 0.005].to_csv(run / "figures" / "fig-evalmore-threshold.csv", index=False)
    params = {"thetas": [0.01, 0.023, 0.035], "eps_theta": [2.0, 4.0], "n_users": 1_000_000, "m_bits": 64,
              "query_limit": 2 ** 20, "theta_fixed": 0.023, "epsilons": [0.9, 1.2, 2.0, 4.0], "etas": [2, 10],
              "final_fraction": 0.1}
    (run / "parameters.json").write_text(json.dumps(params))
    paths = PG.write_rerun_report(run, "07_evaluation_more", REGISTRY)
    table = pd.read_csv(paths["claims.csv"]).set_index("id")
    assert set(table["chapter"]) == {"07_evaluation_more"}
    assert not table.loc["fig7b-theta-0005", "covered"] and table.loc["fig7b-theta-0005", "verdict"] == V.NOT_TESTABLE
    assert table.loc["fig7a-pem-better", "covered"]
    page = paths["claims.md"].read_text()
    assert page.startswith("# Claims of this rerun of 07_evaluation_more") and RP.NOT_COVERED in page
    assert BANNER not in page


# --------------------------------------------------------------------------- #
# the Sphinx extension (book/_ext/ldp_evidence.py)
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def evidence_ext(request):
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    request.addfinalizer(lambda: sys.path.remove(str(ROOT / "book" / "_ext")))
    import ldp_evidence

    return ldp_evidence


PART = {"id": "fig5-pem-best", "section": "6.2.1", "ref": "Figure 5", "quote": r"When $\epsilon=4$, PEM wins",
        "measured": "holds at 8 of 8 points", "verdict": V.REPRODUCED, "explanation": "needs every point",
        "ours": False, "figure": "fig-eval-vary-eps", "decides": True}
ROW = {"id": "fig5-pem-best", "kind": "paper", "verdict": V.NOT_REPRODUCED, "cause_class": "bound",
       "cause_label": "ceiling/floor", "cause": "F1 at $1$ from ε = 2", "flips": {"another reading": V.REPRODUCED},
       "label": "claim-fig5-pem-best", "figures": ["fig-eval-vary-eps"], "parts": [PART]}


def test_evidence_box_nodes(evidence_ext):
    from docutils import nodes
    from sphinx import addnodes

    box = evidence_ext.evidence_box("5", [ROW], quick=False, docname="x")
    assert isinstance(box, nodes.admonition) and "ldp-evidence" in box["classes"]
    assert box[0].astext() == "Evidence: Figure 5 of the paper"
    text = box.astext()
    assert "The paper (§6.2.1, Figure 5)" in text and "We measure: holds at 8 of 8 points" in text
    assert f"Verdict: {V.NOT_REPRODUCED}. Cause (ceiling/floor): F1 at" in text and BANNER not in text
    assert f"Under another reading it would be {V.REPRODUCED}." in text
    assert [m.astext() for m in box.findall(nodes.math)] == [r"\epsilon=4", "1"]
    refs = list(box.findall(addnodes.pending_xref))
    assert len(refs) == 1 and refs[0]["reftarget"] == "claim-fig5-pem-best" and refs[0]["reftype"] == "ref"
    quick = evidence_ext.evidence_box("5", [ROW | {"kind": "ours"}], quick=True, linkable=False)
    assert quick.astext().count(BANNER) == 1 and "(quick build)" in quick[0].astext()
    assert "not the reproduction's verdicts" in quick.astext() and "Ours (not the paper's)" in quick.astext()
    assert not list(quick.findall(addnodes.pending_xref))  # no report page in the build: named, not linked
    assert evidence_ext.inline("a $x$ b $y") == [nodes.Text("a $x$ b $y")]  # unbalanced: left as text


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["quick", "full"])
def test_evidence_boxes_in_a_built_book(tmp_path, mode):
    """A small book with the project's configuration: the box follows Figure 5 and links to its report row."""
    from bs4 import BeautifulSoup

    import minibook

    book = tmp_path / "book"
    minibook.scaffold(book, ["_generated/notebooks/06_evaluation", "book/reproduction"])
    store = fake_store(book / "_generated" / "cache" / mode)
    table = RP.evaluate(ResultStore(store, mode=mode), REGISTRY)
    PG.write_outputs(ResultStore(store, mode=mode), REGISTRY, book / "_generated" / REPORT_DIR, mode=mode)
    (book / "_generated" / "figures").mkdir(parents=True)
    (book / "_generated" / "notebooks").mkdir(parents=True)
    (book / "_generated" / "figures" / "fig5.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>')
    page = "# Evaluation\n\n" + "".join(  # the chapter's three paper figures (ldp_numbers checks they are there)
        f"```{{figure}} /_generated/figures/fig5.svg\n:name: {name}\n\nCaption of {name}.\n```\n\nText.\n\n"
        for name in ("fig-eval-vary-eps", "fig-eval-vary-k", "fig-eval-var"))
    (book / "_generated" / "notebooks" / "06_evaluation.md").write_text(page)
    # the rows' anchors as the report has them (the whole report builds in test_rendered_pages_build_without_warnings)
    labels = sorted(RPT.anchor(i) for i in RP.sentences(table)["id"])
    (book / "book" / "reproduction.md").write_text("# Report\n\n" + "".join(f"({x})=\n## {x}\n\n" for x in labels))
    proc = minibook.build(book)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html = BeautifulSoup((book / "_build" / "html" / "_generated" / "notebooks" / "06_evaluation.html").read_text(),
                         "html.parser")
    fig = html.find("figure", id="fig-eval-vary-eps")
    box = fig.find_next_sibling()
    assert "ldp-evidence" in box["class"]
    assert box.find(class_="admonition-title").get_text(strip=True).startswith("Evidence: Figure 5 of the paper")
    text = box.get_text(" ", strip=True)
    assert (BANNER in text) == (mode == "quick")
    verdict = RP.sentences(table).set_index("id").loc["fig5-pem-best", "verdict"]
    assert f"Verdict: {verdict}" in text
    link = box.find("a", href=re.compile(r"reproduction\.html#claim-fig5-pem-best$"))
    assert link is not None, box


def test_a_quick_build_decides_at_its_smaller_population_and_says_so(tmp_path):
    """Quick: a smaller n is the point of the build (the banner says so), a missing grid point is not covered."""
    root = tmp_path / "quick"
    (root / "figures").mkdir(parents=True)
    shutil.copy(FIXTURE / "figures" / "fig-evalmore-threshold.csv", root / "figures")
    params = {"thetas": [0.01, 0.023, 0.035], "eps_theta": [2.0, 4.0], "n_users": 100_000, "m_bits": 64,
              "query_limit": 2 ** 20, "theta_fixed": 0.023, "epsilons": [0.9, 1.2, 2.0, 4.0]}
    claims = [REGISTRY.get("fig7a-pem-better"), REGISTRY.get("fig7b-theta-0005")]
    for mode in ("quick", "rerun"):
        store = ResultStore(root, mode=mode)
        store.save_parameters("07_evaluation_more", params)
        t = RP.evaluate(store, C.Registry(sentences=tuple(claims))).set_index("id")
        assert not t.loc["fig7b-theta-0005", "covered"]  # 0.005 is not in the grid: never decided
        row = t.loc["fig7a-pem-better"]
        if mode == "quick":
            assert row["covered"] and row["verdict"] == V.REPRODUCED
            assert row["coverage"].startswith("quick build, smaller population: n_users = 100000")
            assert row["coverage"] in RPT.render_report(t.reset_index(), "quick")  # shown in the claim's flags
        else:  # a rerun at another population is another setting
            assert not row["covered"] and "n_users = 100000" in row["coverage"]


@pytest.mark.parametrize("name", sorted(p.stem for p in (FIXTURE / "figures").glob("*.csv")))
def test_thin_figure_data_never_breaks_the_report(tmp_path, name):
    """A rerun with a small grid (a figure CSV with no rows, or three): every claim still gets a verdict."""
    frame = pd.read_csv(FIXTURE / "figures" / f"{name}.csv")
    for how, part in (("empty", frame.iloc[:0]), ("three rows", frame.head(3))):
        root = tmp_path / how.replace(" ", "-")
        shutil.copytree(FIXTURE / "tables", root / "tables")
        shutil.copytree(FIXTURE / "figures", root / "figures")
        part.to_csv(root / "figures" / f"{name}.csv", index=False)
        readers = [c for c in CLAIMS if f"figure:{name}" in c.test.inputs]
        alone = tuple(dataclasses.replace(c, parts=(), details=()) for c in readers)  # each claim on its own
        table = RP.evaluate(ResultStore(root, mode="rerun"), C.Registry(sentences=alone))
        assert len(table) == len(readers) and set(table["verdict"]) <= set(V.VERDICTS), how
        if how == "empty":
            only = [c.id for c in readers if c.test.inputs == (f"figure:{name}",)]
            assert (table.set_index("id").loc[only, "verdict"] == V.NOT_TESTABLE).all(), how


def test_too_few_runs_for_figure_9_is_not_testable(tmp_path):
    root = shutil.copytree(FIXTURE, tmp_path / "s")
    v = pd.read_csv(root / "figures" / "fig-eval-var.csv").assign(var_count=1)  # no run found a heavy hitter 3 times
    v.to_csv(root / "figures" / "fig-eval-var.csv", index=False)
    t = RP.evaluate(ResultStore(root), C.Registry(sentences=(REGISTRY.get("fig9-complies-var-olh"),
                                                          REGISTRY.get("fig9-mcm-below-spm"))))
    assert (t["verdict"] == V.NOT_TESTABLE).all() and t["explanation"].str.contains("3 runs").all()


def test_no_caret_powers_left_in_the_pages(tmp_path):
    """x^y in plain text shows as TeX in the book (tests/test_book_browser.py): the pages write powers as math."""
    assert RPT.caret_math("d = 2^16, d' = e^ε + 1, $x^2$") == r"d = $2^{16}$, d' = $e^{\varepsilon}$ + 1, $x^2$"
    assert RPT.caret_math("k^1.5 channels; a ^ b") == "$k^{1.5}$ channels; a ^ b"
    table = RP.evaluate(ResultStore(FIXTURE, mode="full"), REGISTRY)
    data = RPT.claims_json(table, "full")
    for text in (RPT.render_report(table, "full"), RPT.render_scorecard(table, "full", REGISTRY),
                 json.dumps([{k: p[k] for k in ("paper", "measured", "explanation", "ref", "cause")}
                             for r in data["rows"] for p in r["parts"]] + [r["cause"] for r in data["rows"]],
                            ensure_ascii=False)):
        plain = re.sub(r"\$[^$]*\$|`[^`]*`", "", text)
        assert not re.findall(r".{20}\S\^\S.{20}", plain)
