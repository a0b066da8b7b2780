"""The result store, the evaluation of every claim on the paper-scale figure data, and the renderings.

tests/data/reporting/ holds the paper-scale figure CSVs of a full build (two thinned, see its README) and the
extra result tables as the chapters will save them.
"""
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ldp.book import answer as AN
from ldp.book import report as PG
from ldp.book.chapters import CLAIMS, REGISTRY
from ldp.book.claims import claim as C
from ldp.book.claims import evaluation as RP
from ldp.book.claims import verdicts as V
from ldp.book.claims.store import MissingResult, ResultStore
from ldp.book.rerun import cli

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "reporting"


@pytest.fixture(scope="module")
def table():
    return RP.evaluate(ResultStore(FIXTURE, mode="full"), REGISTRY)


def verdicts(t):
    return t.set_index("id")["verdict"]


def copy_fixture(tmp_path: Path, name: str = "store") -> Path:
    dst = tmp_path / name
    shutil.copytree(FIXTURE, dst)
    return dst


# --------------------------------------------------------------------------- #
# the store
# --------------------------------------------------------------------------- #
def test_store_save_load_roundtrip(tmp_path):
    store = ResultStore(tmp_path / "s")
    frame = pd.DataFrame({"dataset": ["AOL", "URL"], "n": [657427, 1160004]})
    path = store.save("06_evaluation", "datasets", frame, meta={"seed": 1})
    assert path == tmp_path / "s" / "tables" / "06_evaluation" / "datasets.csv"
    pd.testing.assert_frame_equal(store.load("06_evaluation", "datasets"), frame)
    side = store.meta("06_evaluation", "datasets")
    assert side["meta"] == {"seed": 1} and side["columns"] == ["dataset", "n"] and side["rows"] == 2
    assert store.has("06_evaluation", "datasets") and not store.has("06_evaluation", "other")
    assert sorted(p.name for p in path.parent.iterdir()) == ["datasets.csv", "datasets.json"]  # no temporaries


def test_store_errors(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(MissingResult, match="06_evaluation/datasets"):
        store.load("06_evaluation", "datasets")
    with pytest.raises(MissingResult, match="fig-nothing.csv"):
        store.figure("fig-nothing")
    for bad in ("../x", "a/b", "x.csv", ""):
        with pytest.raises(ValueError, match="plain name"):
            store.save("06_evaluation", bad, pd.DataFrame())
    with pytest.raises(TypeError, match="DataFrame"):
        store.save("06_evaluation", "x", [1, 2])
    with pytest.raises(TypeError):  # meta must be JSON-serialisable
        store.save("06_evaluation", "x", pd.DataFrame({"a": [1]}), meta={"f": object})
    assert not (tmp_path / "tables" / "06_evaluation" / "x.csv").exists()
    with pytest.raises(ValueError, match="mode"):
        ResultStore(tmp_path, mode="paper")
    with pytest.raises(ValueError, match="mode"):
        ResultStore.for_build("rerun")


def test_store_locations(tmp_path, monkeypatch):
    assert ResultStore.for_build("quick", tmp_path).root == (tmp_path / "cache" / "quick").resolve()
    monkeypatch.setenv("LDP_FIGURE_DIR", str(tmp_path / "cache" / "full" / "figures"))
    env = ResultStore.from_environment()
    assert env.root == (tmp_path / "cache" / "full").resolve() and env.mode == "full"
    run = tmp_path / "07_evaluation_more-0123456789"
    (run / "figures").mkdir(parents=True)
    (run / "parameters.json").write_text(json.dumps({"n_users": 1000}))
    monkeypatch.setenv("LDP_FIGURE_DIR", str(run / "figures"))
    assert ResultStore.from_environment().mode == "rerun"
    store = ResultStore.for_rerun(run)
    assert store.parameters("07_evaluation_more") == {"n_users": 1000}
    assert store.parameters("06_evaluation") is None
    with pytest.raises(FileNotFoundError, match="folder"):
        ResultStore.for_rerun(tmp_path / "nowhere")


def test_store_parameters_from_the_runner_manifest(tmp_path):
    store = ResultStore.for_build("quick", tmp_path)
    store.root.mkdir(parents=True)
    given = {"quick": True}
    (store.root / "manifest.json").write_text(json.dumps({"07_evaluation_more": {"params": given}}))
    assert store.parameters("07_evaluation_more") == given  # an older manifest: what papermill was given
    values = {"quick": True, "n_users": 100_000}  # the runner records every value the chapter ran with
    (store.root / "manifest.json").write_text(json.dumps({"07_evaluation_more": {"params": given, "values": values}}))
    assert store.parameters("07_evaluation_more") == values
    store.save_parameters("07_evaluation_more", {"n_users": 5})
    assert store.parameters("07_evaluation_more") == {"n_users": 5}


# --------------------------------------------------------------------------- #
# evaluation on the paper-scale data
# --------------------------------------------------------------------------- #
def test_every_claim_gets_a_verdict_from_the_vocabulary(table):
    assert list(table.columns) == RP.COLUMNS
    assert len(table) == len(CLAIMS)
    assert set(table["verdict"]) <= set(V.VERDICTS)
    assert table["covered"].all()
    decided = table[table["verdict"] != V.NOT_TESTABLE]
    assert (decided["measured"] != "").all() and (decided["explanation"] != "").all()


def test_paper_scale_verdicts(table):
    v = verdicts(table)
    # the reviewer's findings, now computed
    assert v["fig7b-theta-0005"] == V.NOT_REPRODUCED  # PEM 0.07 against MCM 0.46
    assert v["fig5-lead-grows-with-eps"] == V.NOT_REPRODUCED  # the lead peaks at eps = 0.9
    assert v["fig7a-lead-at-eps2"] == V.NOT_REPRODUCED
    assert v["fig6-spm-small-k"] == V.NOT_REPRODUCED and v["fig6-url-pem-k"] == V.NOT_REPRODUCED
    assert v["fig4-analysis-matches"] == V.PARTLY and v["fig3-analysis-matches"] == V.PARTLY
    assert v["fig7bc-pem-better"] == V.PARTLY
    # what holds
    for claim_id in ("fig2-analysis-matches", "fig5-pem-best", "fig6-pem-best", "fig3a-fewer-rounds",
                     "fig3c-half-optimal", "fig8b-eta-better", "s4-lemma-1", "s2-olh-dprime-optimal",
                     "s4-joint-unbiased", "fig9-mcm-below-spm"):
        assert v[claim_id] == V.REPRODUCED, claim_id
    # stand-ins that cannot decide, and claims never run here
    for claim_id in ("s61-url-size", "fig5-url-eps4-pem", "fig5-url-eps4-others", "fig7-other-datasets",
                     "fig8a-other-settings"):
        assert v[claim_id] == V.NOT_TESTABLE, claim_id


def test_paper_scale_numbers(table):
    row = table.set_index("id")
    assert "values released (mean): PEM 854" in row.loc["fig7b-theta-0005", "measured"]
    assert "2 excluded" in row.loc["fig5-pem-best", "measured"]  # the points where every method scores 0
    assert "7 of 52 points beyond 3 SE" in row.loc["fig4-analysis-matches", "measured"]
    assert "11 of 104 points beyond 3 SE" in row.loc["fig3-analysis-matches", "measured"]
    assert "maximum at 7 (zipf, F1)" in row.loc["fig3b-eta-optimal", "measured"]
    assert "the rule alone would give" in row.loc["fig5-url-eps4-pem", "explanation"]
    assert row.loc["s4-opt-rounds", "verdict"] == V.REPRODUCED and row.loc["s4-opt-gamma", "verdict"] == V.REPRODUCED
    assert row.loc["s4-opt-equal-eta", "verdict"] == V.REPRODUCED  # (12, 12, 12, 12, 11) for k = 32: one bit
    assert row.loc["s4-opt-max-eta", "verdict"] == V.NOT_REPRODUCED  # 12, not 13, for k = 16


def test_missing_inputs_are_not_testable(tmp_path):
    root = copy_fixture(tmp_path)
    for name in ("fig-eval-vary-eps", "fig-eval-vary-k"):  # a build without the AOL data
        f = pd.read_csv(root / "figures" / f"{name}.csv")
        f[f["dataset"] != "AOL"].to_csv(root / "figures" / f"{name}.csv", index=False)
    shutil.rmtree(root / "tables" / "06_evaluation")
    (root / "figures" / "fig-eval-var.csv").unlink()
    t = RP.evaluate(ResultStore(root, mode="full"), REGISTRY).set_index("id")
    assert t.loc["fig56-aol-pem-best", "verdict"] == V.NOT_TESTABLE
    assert "AOL" in t.loc["fig56-aol-pem-best", "explanation"]
    assert t.loc["s61-aol-users", "verdict"] == V.NOT_TESTABLE
    assert t.loc["fig9-mcm-below-spm", "explanation"].startswith("input missing")
    assert t.loc["fig5-pem-best", "verdict"] == V.REPRODUCED
    assert "AOL is not in this build" in t.loc["fig5-pem-best", "measured"]


def test_rerun_with_other_parameters_marks_claims_not_covered(tmp_path):
    run = tmp_path / "07_evaluation_more-abcdef0123"
    (run / "figures").mkdir(parents=True)
    t7 = pd.read_csv(FIXTURE / "figures" / "fig-evalmore-threshold.csv")
    t7[t7["threshold"] != 0.005].to_csv(run / "figures" / "fig-evalmore-threshold.csv", index=False)
    shutil.copy(FIXTURE / "figures" / "fig-evalmore-design.csv", run / "figures")
    params = {"thetas": [0.01, 0.023, 0.035], "eps_theta": [2.0, 4.0], "n_users": 1_000_000, "m_bits": 64,
              "query_limit": 2 ** 20, "theta_fixed": 0.023, "epsilons": [0.9, 1.2, 2.0, 4.0], "etas": [2, 10],
              "final_fraction": 0.1}
    (run / "parameters.json").write_text(json.dumps(params))
    t = RP.evaluate(ResultStore.for_rerun(run), REGISTRY, chapters=["07_evaluation_more"]).set_index("id")
    assert set(t["chapter"]) == {"07_evaluation_more"}
    row = t.loc["fig7b-theta-0005"]
    assert row["verdict"] == V.NOT_TESTABLE and not row["covered"]
    assert row["coverage"].startswith(RP.NOT_COVERED) and "0.005" in row["coverage"]
    assert t.loc["fig7a-pem-better", "covered"] and t.loc["fig7a-pem-better", "verdict"] == V.REPRODUCED
    # a smaller population is another setting: every claim at n = 10^6 is no longer covered
    (run / "parameters.json").write_text(json.dumps({**params, "n_users": 100_000}))
    t = RP.evaluate(ResultStore.for_rerun(run), REGISTRY, chapters=["07_evaluation_more"]).set_index("id")
    assert not t.loc["fig7a-pem-better", "covered"] and "n_users = 100000" in t.loc["fig7a-pem-better", "coverage"]
    # the same parameters in the grid itself: a store without parameters still finds the missing point
    bare = ResultStore(run / "figures", figures=run / "figures")
    assert not RP.evaluate(bare, C.Registry(sentences=(REGISTRY.get("fig7b-theta-0005"),))).iloc[0]["covered"]


def test_check_setting():
    claim = REGISTRY.get("fig7b-theta-0005")
    assert RP.check_setting(claim, None) == ""
    assert RP.check_setting(claim, {"thetas": [0.005, 0.01], "eps_theta": [2.0]}) == ""
    assert "leaves out 0.005" in RP.check_setting(claim, {"thetas": [0.01]})


def test_evaluate_rejects_a_path():
    with pytest.raises(TypeError, match="ResultStore"):
        RP.evaluate(str(FIXTURE), REGISTRY)


# --------------------------------------------------------------------------- #
# one row per sentence, causes, other readings
# --------------------------------------------------------------------------- #
def test_sentences_combine_their_parts(table):
    rows = RP.sentences(table).set_index("id")
    assert len(rows) == len(REGISTRY.sentences) < len(CLAIMS)
    assert list(rows.index) == [s.id for s in REGISTRY.sentences]  # in the registry's order
    opt = rows.loc["s4-opt-rounds"]  # one sentence, four parts, one of them not reproduced
    assert opt["parts"] == ["s4-opt-rounds", "s4-opt-gamma", "s4-opt-equal-eta", "s4-opt-max-eta"]
    assert opt["verdict"] == V.PARTLY and opt["cause_class"] == "genuine" and "(13, 13, 13, 13, 8)" in opt["cause"]
    k = rows.loc["fig6-decrease-with-k"]  # the details (anomalies at small k) do not decide the sentence
    assert set(k["parts"]) >= {"fig6-spm-small-k", "fig6-mcm-small-k", "fig6-url-pem-k"}
    assert k["verdict"] == verdicts(table)["fig6-decrease-with-k"]
    assert rows.loc["fig7bc-pem-better", "kind"] == "reading" and "fig7b-theta-0005" in rows.loc["fig7bc-pem-better",
                                                                                                  "parts"]
    assert rows.loc["s423-prefix-mass", "kind"] == "reading" and rows.loc["ours-pem-beats-sfp", "kind"] == "ours"
    top = RP.largest_differences(rows)
    assert (top["kind"] == "paper").all() and set(top["verdict"]) <= {V.NOT_REPRODUCED, V.PARTLY}
    assert "fig7b-theta-0005" not in set(top.index) and "fig7bc-pem-better" not in set(top.index)


def test_combine_states_the_rule():
    assert V.combine([]) == V.NOT_TESTABLE and V.combine([V.NOT_TESTABLE]) == V.NOT_TESTABLE
    assert V.combine([V.REPRODUCED, V.NOT_TESTABLE]) == V.REPRODUCED
    assert V.combine([V.NOT_REPRODUCED, V.NOT_REPRODUCED]) == V.NOT_REPRODUCED
    assert V.combine([V.PARTLY]) == V.PARTLY and V.combine([V.REPRODUCED, V.NOT_REPRODUCED]) == V.PARTLY


def test_every_verdict_but_reproduced_has_a_cause(table):
    rows = RP.sentences(table)
    off = rows[rows["verdict"] != V.REPRODUCED]
    assert len(off) and off["cause_class"].isin(V.CAUSES).all() and (off["cause"].str.len() > 20).all()
    assert not (rows.loc[rows["verdict"] == V.REPRODUCED, "cause"] != "").any()
    assert not off["cause_class"].eq("small-sample").any()  # a full build's causes are measured
    by = rows.set_index("id")
    assert by.loc["fig5-lead-grows-with-eps", "cause_class"] == "stand-in"  # our MCM finds far more than the paper's
    assert by.loc["fig7a-lead-at-eps2", "cause_class"] == "stand-in"
    assert by.loc["fig4-analysis-matches", "cause_class"] == "genuine"  # a model gap of 17.5 SE is no near-tie
    assert by.loc["fig6-syn-full-utility", "cause_class"] == "near-tie"
    assert by.loc["fig5-url-eps4-pem", "cause_class"] == "stand-in"
    assert by.loc["fig7-other-datasets", "cause_class"] == "not-run"
    parts = table.set_index("id")
    assert parts.loc["fig8a-mcm-split-below-02", "cause_class"] == "stand-in"


def test_readings_are_decided_under_each_alternative(table):
    by = table.set_index("id")
    for claim in CLAIMS:
        for s in json.loads(by.loc[claim.id, "sensitivity"]):
            assert s["verdict"] in V.VERDICTS and s["reading"] and s["anchor"]
        assert len(json.loads(by.loc[claim.id, "sensitivity"])) == (len(claim.test.other_readings) if by.loc[
            claim.id, "covered"] and by.loc[claim.id, "measured"] else 0)
    rows = RP.sentences(table).set_index("id")
    flips = json.loads(rows.loc["fig6-decrease-with-k", "flips"])
    assert flips == {REGISTRY.get("fig6-decrease-with-k").test.other_readings[0].reading: V.REPRODUCED}
    assert json.loads(rows.loc["fig9-complies-var-olh", "flips"])  # the exact variance of the scaled estimate


def test_a_claim_without_cause_states_its_measurement(tmp_path):
    """No declared cause: a strict ordering that fails on ties only is a near-tie, else the measurement itself."""
    claim = REGISTRY.get("s7-treehist-poor")
    row = RP.evaluate_claim(claim, ResultStore(FIXTURE, mode="full"))
    assert row["verdict"] == V.PARTLY and row["cause_class"] == "near-tie" and "none is reversed" in row["cause"]
    quick = RP.evaluate_claim(claim, ResultStore(FIXTURE, mode="quick"))
    assert quick["cause_class"] == "small-sample"


# --------------------------------------------------------------------------- #
# renderings (ldp.book.report)
# --------------------------------------------------------------------------- #
BANNER = "Quick build."


def test_report_page(table):
    page = PG.render_report(table, "full")
    rows = RP.sentences(table)
    assert BANNER not in page and page.index("## Summary") < page.index("## Evidence, sentence by sentence")
    assert page.index("## Evidence, sentence by sentence") < page.index("{dropdown} Section 2")
    assert "## How the verdicts are decided" in page and "`FAMILY_ALPHA`" in page and "* - Cause\n  - Meaning" in page
    assert "{only}" not in page  # one table for the browser and the PDF: numbered as the reader sees them
    assert page.count(":class: ldp-explorer longtable") == 2
    summary, ours = page.split(":::{list-table} ")[1:3]
    assert summary.startswith("The paper's result sentences") and "  - The paper says" in summary
    assert ours.startswith("Our readings and our own claims") and "The paper says" not in ours
    for _, r in rows.iterrows():  # one summary row and one evidence block per sentence, each part inside it
        assert page.count(f"* - {{ref}}`{r['id']} <claim-{r['id']}>`") == 1, r["id"]
        assert f"(claim-{r['id']})=" in page
        if r["cause_class"]:  # the whole cause, never cut
            assert PG.caret_math(re.sub(r"\s+", " ", r["cause"]).replace("|", "\\|").strip()) in page, r["id"]
    assert " …" not in page and "..." not in page.split("## Evidence")[0]
    for claim in CLAIMS:
        assert (f"`{claim.id}`" in page) or (f"{{dropdown}} {claim.id} · " in page), claim.id
    assert "{bdg-success}`reproduced`" in page and "{bdg-danger}`not reproduced`" in page
    assert "{numref}`Figure %s <fig-eval-vary-eps>`" in page  # measured in its figure, numbered as the paper
    assert "{doc}`/_generated/notebooks/01_frequency_oracles`" in page  # a claim without a figure: its chapter
    assert "{dropdown} Our readings of sentences that state no result" in page and "{dropdown} Our own claims" in page
    assert "](/book/interpretation.md#3-url-set-section-61-calibrated-stand-in)" in page
    assert "the verdict flips" in page and "Under another reading" in page
    with pytest.raises(ValueError, match="mode"):
        PG.render_report(table, "paper")


def test_the_report_folds_everything_but_its_summary(table):
    """After the summary, every block sits in a dropdown: a section's sentences in one, each sentence in its own."""
    page = PG.render_report(table, "full")
    rest = page[page.index("## Our readings and our own claims"):]
    depth, outside = 0, []
    for line in rest.splitlines():
        fence = re.match(r"^(:{4,})(\{dropdown\})?", line)
        if fence and fence.group(2):
            depth += 1
        elif fence and line == fence.group(1):
            depth -= 1
        elif depth == 0 and line.strip() and not line.startswith(("## ", ":class-container:")):
            outside.append(line)
    assert depth == 0
    assert [line[:24] for line in outside] == ["Our readings of sentence", "Each sentence's quote, w"]  # intros
    rows = RP.sentences(table)
    paper = rows[rows["kind"] == "paper"]
    groups = paper["section"].map(PG.major_section).nunique() + rows.loc[rows["kind"] != "paper", "kind"].nunique()
    sections = re.findall(r"^:::::\{dropdown\} (.*)$", page, re.M)
    assert len(sections) == groups and all(re.search(r"\(\d+ sentences?: \d+ ", s) for s in sections), sections


def test_every_rendering_of_a_quick_build_carries_the_banner(table):
    assert PG.render_report(table, "quick").startswith("```{warning}\n**" + BANNER)
    assert AN.render_answer(table, "quick").startswith("```{warning}\n:class: ldp-banner\n**" + BANNER)
    assert "quick build" in PG.render_scorecard(table, "quick", REGISTRY)
    assert BANNER not in AN.render_answer(table, "full") and "quick" not in PG.render_scorecard(table, "full", REGISTRY)
    assert RP.NOT_COVERED in PG.render_report(table, "rerun")


def test_scorecard(table):
    card = PG.render_scorecard(table, "full", REGISTRY)
    assert card.startswith("::::{dropdown} The scorecard in detail")  # folded: the answer comes first
    assert card.count("::::{dropdown}") == 2 and "::::{dropdown} What computed each figure" in card
    rows = RP.sentences(table)
    paper = rows[rows["kind"] == "paper"]
    counts = RP.verdict_counts(paper)
    one = card.split("\n\n")[1]  # the scorecard opens with one sentence
    assert one.startswith(f"**{counts[V.REPRODUCED]} of the paper's {len(paper)} result sentences are reproduced**")
    for kind in set(paper.loc[paper["verdict"].isin([V.PARTLY, V.NOT_REPRODUCED]), "cause_class"]):
        assert V.CAUSES[kind][0] in one
    assert all(PG.caret_math(r) in one for r in paper.loc[paper["verdict"] == V.NOT_REPRODUCED, "ref"])  # named
    for verdict in V.VERDICTS:
        assert f"**{counts[verdict]}** {verdict}" in card
    top = RP.largest_differences(rows)
    assert len(top) == 3 and (top["kind"] == "paper").all()
    for _, r in top.iterrows():  # each links to its evidence and names its cause
        assert f"{{ref}}`{r['id']} <claim-{r['id']}>`" in card and PG.caret_math(r["cause"])[:40] in card
    assert "URL data set: a calibrated stand-in" in card and "count engine (10 runs)" in card
    assert "SPM: re-implemented from the paper's text" in card and "- Figure 5 (`fig-eval-vary-eps`)" in card
    assert "{doc}`the reproduction report </book/reproduction>`" in card
    quick = PG.render_scorecard(table, "quick", REGISTRY)
    assert "(10 runs)" not in quick and "quick build" in quick.lower()  # no paper-scale run counts in a quick card


def _sentence(table, claim_id):
    return table.set_index("id").loc[claim_id]


def test_the_answer_quotes_the_build_s_numbers(table):
    """At most five sentences; PEM against SPM and MCM and the analysis against simulation with the counts
    their rules decided on, the verdicts counted, what did not reproduce and the largest difference's cause."""
    answer = AN.answer_sentences(table)
    assert 1 <= len(answer) <= 5 and all(s.endswith(".") for s in answer)
    rows = RP.sentences(table)
    paper = rows[rows["kind"] == "paper"]
    pem, analysis, counts = answer[:3]
    missed = next(s for s in answer if s.startswith("Not reproduced"))
    largest = next(s for s in answer if s.startswith("The largest difference"))
    for claim_id, figure in (("fig5-pem-best", "Figure 5"), ("fig6-pem-best", "Figure 6")):
        n = json.loads(_sentence(table, claim_id)["numbers"])
        assert f"{n['holds']} of {n['points']} " in pem and f"{figure} <claim-{claim_id}>" in pem
    assert pem.startswith("The paper finds PEM better than SPM and MCM")
    for claim_id in ("fig2-analysis-matches", "fig3-analysis-matches", "fig4-analysis-matches"):
        row = _sentence(table, claim_id)
        n = json.loads(row["numbers"])
        assert f"{n['points'] - n['holm_rejected']} of {n['points']} " in analysis, claim_id
        assert (f"<claim-{claim_id}>` ({row['verdict']})" in analysis) == (row["verdict"] != V.REPRODUCED)
    assert counts.startswith(f"Of the paper's {len(paper)} result sentences, ")
    for verdict, n in RP.verdict_counts(paper).items():
        assert (f" {n} {AN.COUNT_WORDS[verdict]}" in counts) == (n > 0), verdict
    for _, r in paper[paper["verdict"] == V.NOT_REPRODUCED].iterrows():
        assert f"<claim-{r['id']}>`" in missed and V.CAUSES[r["cause_class"]][0] in missed
    top = RP.largest_differences(rows, 1).iloc[0]
    assert f"<claim-{top['id']}>`" in largest and PG.caret_math(top["cause"]) in largest


def test_the_answer_follows_the_rows(table):
    """Another build's rows, another answer: a changed count, verdict or cause flows through."""
    changed = table.copy()
    at = changed.index[changed["id"] == "fig5-pem-best"][0]
    numbers = json.loads(changed.at[at, "numbers"]) | {"holds": 41, "points": 58}
    changed.loc[at, ["numbers", "verdict"]] = [json.dumps(numbers), V.PARTLY]
    pem = AN.answer_sentences(changed)[0]
    assert "41 of 58 points of {ref}`Figure 5 <claim-fig5-pem-best>` (partly reproduced)" in pem
    gone = table[table["id"] != "fig6-pem-best"]
    assert "Figure 6" not in AN.answer_sentences(gone)[0]
    untested = table.copy()
    at = untested.index[untested["id"] == "fig2-analysis-matches"][0]
    untested.loc[at, ["verdict", "numbers", "cause"]] = [V.NOT_TESTABLE, "{}", "input missing: no figure"]
    assert "which cannot be tested here (input missing: no figure)" in AN.answer_sentences(untested)[1]


def test_the_gallery_shows_the_nine_figures_with_their_verdicts(table, tmp_path):
    figures = tmp_path / "figures"
    figures.mkdir()
    labels = [next(iter(f["book"])) for f in C.paper_numbers()["figures"]]
    assert len(labels) == 9
    for label in labels[:-1]:
        (figures / f"{label}.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    gallery = AN.render_gallery(table, figures)
    assert gallery.startswith("```{only} html\n::::::{grid}")
    cards = gallery.split(":::::{grid-item-card}")[1:]
    assert len(cards) == 9
    data = PG.claims_json(table, "full")
    for number, (label, card) in enumerate(zip(labels, cards), 1):
        assert f":link: {label}\n:link-type: ref" in card and f"**Figure {number}**" in card
        assert (f":::{{image}} /_generated/figures/{label}.svg" in card) == (number < 9)
        rows = [r for r in data["rows"] if label in r["figures"]]  # the rows of the figure's evidence box
        for verdict in V.VERDICTS:
            n = sum(r["verdict"] == verdict for r in rows)
            assert (f"`{n} {AN.GALLERY_WORDS[verdict]}`" in card) == (n > 0), (label, verdict)
    assert "*(not drawn in this build)*" in cards[-1]


@pytest.mark.slow
def test_rendered_pages_build_without_warnings(table, tmp_path):
    """The report, scorecard and evidence boxes in a small book built with -W -n (every link resolves)."""
    import minibook

    book = tmp_path / "book"
    minibook.scaffold(book, ["book/interpretation", "book/rerun", "book/deployment", "book/reproduction",
                             "book/scorecard"]
                      + [f"_generated/notebooks/{c}" for c in sorted({c.chapter for c in CLAIMS})])
    shutil.copy(ROOT / "book" / "interpretation.md", book / "book" / "interpretation.md")
    (book / "book" / "rerun.md").write_text("# Rerun\n")  # interpretation.md links to it
    (book / "book" / "deployment.md").write_text("(deployment)=\n# Deployment\n")  # and to this one
    (book / "book" / "reproduction.md").write_text("# Reproduction report\n\n" + PG.render_report(table, "quick"))
    (book / "book" / "scorecard.md").write_text("# Scorecard\n\n" + AN.render_answer(table, "quick")
                                                + AN.render_gallery(table, book / "_generated" / "figures")
                                                + PG.render_scorecard(table, "full", REGISTRY))
    report = book / "_generated" / PG.REPORT_DIR
    report.mkdir(parents=True)
    (report / PG.CLAIMS_JSON).write_text(json.dumps(PG.claims_json(table, "full")))  # the boxes under the figures
    stubs = book / "_generated" / "notebooks"
    stubs.mkdir(parents=True)
    (book / "_generated" / "figures").mkdir()
    (book / "_generated" / "figures" / "f.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>')
    for chapter in sorted({c.chapter for c in CLAIMS}):
        figs = sorted({c.figure for c in CLAIMS if c.chapter == chapter and c.figure})
        if chapter == "06_evaluation":
            figs = sorted({*figs, "fig-eval-var"})  # every paper figure of a chapter in the build must be there
        eqs = sorted(label for eq in C.paper_numbers()["equations"] for label, doc in eq["book"].items()
                     if doc.endswith("/" + chapter))  # the chapter's paper equations, as ldp_numbers expects
        text = f"# {chapter}\n\n" + "".join(f"$$\nx = 1\n$$ ({e})\n\n" for e in eqs) + "".join(
            f"```{{figure}} /_generated/figures/f.svg\n:name: {f}\n\nCaption.\n```\n\n" for f in figs)
        (stubs / f"{chapter}.md").write_text(text)
    proc = minibook.build(book)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_a_changed_table_fails_loudly_naming_the_claim(tmp_path):
    root = copy_fixture(tmp_path)
    f = pd.read_csv(root / "figures" / "fig-eval-var.csv").rename(columns={"var_mean": "mse"})
    f.to_csv(root / "figures" / "fig-eval-var.csv", index=False)
    with pytest.raises(RuntimeError, match="claim fig9-mcm-below-spm: measuring it failed .*var_mean"):
        RP.evaluate(ResultStore(root), REGISTRY)


def test_write_outputs_and_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LDP_ROOT", str(tmp_path))
    shutil.copytree(FIXTURE, tmp_path / "_generated" / "cache" / "quick")
    (tmp_path / "_generated" / "MODE").write_text("quick\n")
    assert cli.main(["report"]) == 0
    out = tmp_path / "_generated" / "cache" / "quick" / "report"
    assert f"{len(CLAIMS)} claims" in capsys.readouterr().out
    claims = pd.read_csv(out / "claims.csv")
    assert list(claims["id"]) == [c.id for c in CLAIMS]
    assert (out / "report.md").read_text().startswith("```{warning}\n**" + BANNER)
    assert BANNER in (out / "answer.md").read_text()
    # a rerun: only its chapter, into --out
    run = tmp_path / "my-runs" / "06_evaluation-0123456789"
    shutil.copytree(FIXTURE / "figures", run / "figures")
    (run / "parameters.json").write_text(json.dumps({"k_fixed": 16, "epsilons": [1.0, 3.0]}))
    assert cli.main(["report", "--rerun", str(run), "--out", str(tmp_path / "r")]) == 0
    t = pd.read_csv(tmp_path / "r" / "claims.csv").set_index("id")
    assert set(t["chapter"]) == {"06_evaluation"}
    assert not t.loc["fig5-url-eps4-pem", "covered"]  # epsilons leave out 4
    assert RP.NOT_COVERED in (tmp_path / "r" / "report.md").read_text()


def test_a_chapter_without_claims_renders():
    """A rerun of a chapter that measures no claim (04) still writes its claims page."""
    empty = pd.DataFrame(columns=RP.COLUMNS)
    assert RP.sentences(empty).empty and "## Summary" in PG.render_report(empty, "rerun")
