"""``python -m ldp rerun``: parameters checked before any work, quick values that never
replace a user's value, one folder per run, and every documented command working.

- The fast tests check the value parser, the merge defaults < quick < user, the
  errors (with the parameter list) and that nothing is written before a refusal.
- ``test_documented_command_runs`` runs, for every notebook, the command printed on
  the book's *Rerun* page (``_generated/params.md``) verbatim, in quick mode with
  the notebook's example values (one of each kind of parameter it has), and checks
  the run's folder: executed notebook with its figures inline, HTML copy,
  parameters, and figures that differ from the quick build's.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from ldp.book import rerun as R

from builds import require
from test_notebooks import runner  # scripts/run_notebooks.py, loaded once (tests/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = R.source_notebooks()
KINDS = ("list", "int", "float", "str")


def nb(name: str) -> Path:
    return R.find_notebook(name)


# --------------------------------------------------------------------------- #
# values
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("text, value", [
    ("[1.0, 3.0]", [1.0, 3.0]), ("2**20", 1_048_576), ("1_000_000", 1_000_000), ("-1", -1),
    ("1e-3", 0.001), ("10**6 // 4", 250_000), ("'text'", "text"), ("True", True), ("(1, 2)", (1, 2)),
    ("[2**10, -0.5]", [1024, -0.5]),
])
def test_literal_value(text, value):
    got = R.literal_value(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text", [
    "__import__('os')", "os.system", "abs(1)", "x", "[1, y]", "2**5000", "1j", "1/0", "{'a': 1}", "[1,",
    "'a' * 3",
])
def test_literal_value_refuses(text):
    with pytest.raises(ValueError):
        R.literal_value(text)


def test_parse_assignments():
    got = R.parse_assignments(["epsilons=[1.0, 3.0] repetitions=2", "fig2_reading = text"])
    assert got == {"epsilons": "[1.0, 3.0]", "repetitions": "2", "fig2_reading": "text"}
    with pytest.raises(R.ParameterError, match="set twice"):
        R.parse_assignments(["a=1", "a=2"])
    with pytest.raises(R.ParameterError, match="NAME=VALUE"):
        R.parse_assignments(["repetitions"])


# --------------------------------------------------------------------------- #
# merging: defaults < quick < user
# --------------------------------------------------------------------------- #
def test_resolve_defaults_quick_user():
    path = nb("06")
    params = R.notebook_parameters(path)
    values, injected = R.resolve_parameters(path)
    assert injected == {} and values["quick"] is False
    assert values["epsilons"] == params["epsilons"].default and values["query_limit"] == 2**20

    values, injected = R.resolve_parameters(path, quick=True)
    assert injected["quick"] is True and values["ks"] == params["ks"].quick != params["ks"].default
    assert values["repetitions"] == params["repetitions"].quick

    sets = {"epsilons": "[1, 3]", "repetitions": "2", "ks": str(params["ks"].default)}
    values, injected = R.resolve_parameters(path, sets, quick=True)
    assert values["epsilons"] == [1.0, 3.0] and all(isinstance(e, float) for e in values["epsilons"])
    assert values["repetitions"] == 2
    # a user value equal to the default still wins over the quick value
    assert values["ks"] == params["ks"].default and "ks" not in injected
    assert values["engine_check_runs"] == params["engine_check_runs"].quick  # not set: quick


def test_int_for_float_and_bool_is_not_int():
    path = nb("06")
    values, _ = R.resolve_parameters(path, {"eps_fixed": "3", "exp_scale": "1/20"})
    assert values["eps_fixed"] == 3.0 and isinstance(values["eps_fixed"], float)
    assert values["exp_scale"] == pytest.approx(0.05)
    with pytest.raises(R.ParameterError, match="k_fixed must be an integer"):
        R.resolve_parameters(path, {"k_fixed": "True"})
    with pytest.raises(R.ParameterError, match="repetitions must be an integer"):
        R.resolve_parameters(path, {"repetitions": "2.5"})
    with pytest.raises(R.ParameterError, match="ks must be a list of integers"):
        R.resolve_parameters(path, {"ks": "[1, 2.5]"})
    with pytest.raises(R.ParameterError, match="at least one value"):
        R.resolve_parameters(path, {"epsilons": "[]"})
    with pytest.raises(R.ParameterError, match="must be a list"):
        R.resolve_parameters(path, {"epsilons": "2.0"})


def test_str_parameter_takes_a_bare_word():
    path = nb("05")
    assert R.resolve_parameters(path, {"fig2_reading": "text"})[0]["fig2_reading"] == "text"
    assert R.resolve_parameters(path, {"fig2_reading": "'text'"})[0]["fig2_reading"] == "text"


def test_unknown_name_lists_the_parameters():
    path = nb("06")
    with pytest.raises(R.ParameterError) as info:
        R.resolve_parameters(path, {"epsilon": "2.0"})
    msg = str(info.value)
    assert "has no parameter 'epsilon'" in msg and "did you mean epsilons" in msg
    for p in R.notebook_parameters(path).values():  # every parameter, with its type and default
        assert f"{p.name}: {p.type} = {p.default_text}" in msg
    with pytest.raises(R.ParameterError, match="--quick"):
        R.resolve_parameters(path, {"quick": "True"})


@pytest.mark.parametrize("name", ["6", "06", "06_evaluation", "06_evaluation.ipynb", "notebooks/06_evaluation.ipynb"])
def test_find_notebook(name):
    assert R.find_notebook(name).name == "06_evaluation.ipynb"


def test_find_notebook_errors():
    with pytest.raises(R.NotebookError, match="several"):
        R.find_notebook("evaluation")
    with pytest.raises(R.NotebookError, match="01_frequency_oracles"):
        R.find_notebook("99")


# --------------------------------------------------------------------------- #
# the command line refuses before any work
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("args, message", [
    (["--set", "epsilon=2.0"], "has no parameter 'epsilon'"),
    (["--set", "query_limit=2**"], "query_limit=2**"),
    (["--quick", "--set", "epsilons=[1.0, 3.0]", "--set", "repetitions=two"], "repetitions"),
])
def test_cli_refuses_before_work(args, message, tmp_path, capsys):
    out = tmp_path / "run"
    assert R.main(["rerun", "06", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Parameters of 06_evaluation" in err and "repetitions: int = 10" in err
    assert not out.exists()


def test_outside_a_checkout(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LDP_ROOT", str(tmp_path))
    assert R.main(["rerun", "06", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "no notebooks/ folder" in err and "source repository" in err


def test_params_listing(capsys):
    assert R.main(["rerun", "05", "--params"]) == 0
    out = capsys.readouterr().out
    assert "fig2_reading: str = \"caption\"" in out and "(quick: 10)" in out


def test_make_rerun_passes_set_intact():
    """`make rerun SET='...'` hands spaces and brackets through to the command unchanged."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.run(["make", "--no-print-directory", "rerun", "NB=06", "QUICK=1",
                           "SET=epsilons=[1.0, 3.0] nope='x y'"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "has no parameter 'nope'" in proc.stderr, proc.stdout + proc.stderr
    assert "epsilons" not in proc.stderr.split("Parameters of")[0]  # the list value was accepted


def test_run_folder_depends_on_values(monkeypatch, tmp_path):
    monkeypatch.setenv(R.RUNS_DIR_ENV, str(tmp_path))
    path = nb("06")
    a = R.run_folder(path, R.resolve_parameters(path, {"repetitions": "2"}, quick=True)[0])
    b = R.run_folder(path, R.resolve_parameters(path, {"repetitions": "3"}, quick=True)[0])
    c = R.run_folder(path, R.resolve_parameters(path, {"repetitions": "2"}, quick=True)[0])
    assert a.parent == tmp_path and a.name.startswith("06_evaluation-") and a != b and a == c
    assert R.run_folder(path, {}, tmp_path / "mine") == tmp_path / "mine"


# --------------------------------------------------------------------------- #
# the notebooks: quick values are not applied in code; examples cover every kind
# --------------------------------------------------------------------------- #
def _code_cells(path: Path):
    from IPython.core.inputtransformer2 import TransformerManager

    to_python = TransformerManager().transform_cell  # IPython magics -> Python
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code" and "parameters" not in cell.metadata.get("tags", []):
            yield ast.parse(to_python(cell.source))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_quick_does_not_overwrite_parameters_in_code(path):
    """`if quick:` must not assign a parameter: the runner applies the [quick: ...] values."""
    names = set(R.notebook_parameters(path))
    bad = []
    for tree in _code_cells(path):
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id == "quick"
                                                for n in ast.walk(node.test)):
                for sub in node.body + node.orelse:
                    for n in ast.walk(sub):
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names:
                            bad.append(f"line {n.lineno}: {n.id}")
    assert not bad, f"{path.name}: `if quick:` assigns parameters {bad}; use a [quick: VALUE] mark instead"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_example_covers_every_kind(path):
    params = R.notebook_parameters(path)
    example = R.parse_assignments(R.rerun_example(path))
    have = {p.type for p in params.values()} & set(KINDS)
    covered = {params[n].type for n in example}
    assert have <= covered, (f"{path.name}: metadata ldp.rerun_example sets no {sorted(have - covered)} "
                             "parameter; set one of each kind the notebook has")
    values, _ = R.resolve_parameters(path, example, quick=True)
    for name in example:
        assert values[name] != params[name].quick, f"{path.name}: example {name} equals its quick value"


# --------------------------------------------------------------------------- #
# progress and inline figures
# --------------------------------------------------------------------------- #
def test_run_grid_reports_progress(tmp_path, monkeypatch):
    from ldp.experiments import PROGRESS_ENV, Grid, run_grid

    assert PROGRESS_ENV == R.PROGRESS_ENV  # the runner polls the file run_grid writes
    progress = tmp_path / "progress.json"
    monkeypatch.setenv(R.PROGRESS_ENV, str(progress))
    grid = Grid(["PEM"], [("exponential", {"n": 2000, "m": 16}, "e")], {"epsilon": 2.0, "k": 4},
                repetitions=3, engine="counts")
    run_grid(grid, n_jobs=1, cache=False, progress=False)
    first = json.loads(progress.read_text())
    assert first["done"] == first["total"] == 3 and first["grid"] >= 1
    run_grid(grid, n_jobs=1, cache=False, progress=False)
    assert json.loads(progress.read_text())["grid"] == first["grid"] + 1


def test_save_figure_shows_the_figure(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from IPython import display as ipd

    from ldp.book.plotting import save_figure

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj: shown.append(obj))
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    monkeypatch.delenv(R.SHOW_FIGURES_ENV, raising=False)
    data = pd.DataFrame({"x": [0, 1], "y": [0, 1]})
    save_figure(fig, "a", data=data, folder=tmp_path, close=False)
    assert shown == []
    monkeypatch.setenv(R.SHOW_FIGURES_ENV, "1")
    save_figure(fig, "b", data=data, folder=tmp_path)
    assert len(shown) == 1 and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "b.svg").is_file()
    # the phone layout is for the book's pages; a rerun's page is the notebook, with the PNG
    assert (tmp_path / "a-narrow.svg").is_file() and not (tmp_path / "b-narrow.svg").exists()
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1])
    engine = fig.get_layout_engine()
    save_figure(fig, "c", data=data, folder=tmp_path, close=False, narrow=True)  # asked for: made
    assert len(shown) == 2 and (tmp_path / "c-narrow.svg").is_file()
    assert fig.get_layout_engine() is engine  # the PNG is drawn without a new layout, then the engine is back


def test_readable_markdown_pastes_glue_and_figure_captions():
    book = nbformat.v4.new_notebook()
    rec = "application/papermill.record/"
    out = [nbformat.v4.new_output("display_data", data={rec + "text/plain": "0.123456"},
                                  metadata={"scrapbook": {"name": "x", "mime_prefix": rec}}),
           nbformat.v4.new_output("display_data", data={rec + "text/plain": "'yes'"},
                                  metadata={"scrapbook": {"name": "word", "mime_prefix": rec}}),
           nbformat.v4.new_output("display_data", data={rec + "text/plain": "<Markdown>",
                                                        rec + "text/markdown": "*m*"},
                                  metadata={"scrapbook": {"name": "note", "mime_prefix": rec}})]
    book.cells = [nbformat.v4.new_code_cell("glue(...)", outputs=out),
                  nbformat.v4.new_markdown_cell(
                      "x = {glue:text}`x:.2f`, {glue:text}`word`, {glue:md}`note`, {glue:text}`nope:.1f`.\n\n"
                      "```{figure} /_generated/figures/fig-a.*\n:name: fig-a\n:width: 100%\n\nThe caption.\n```\n")]
    src = R.readable_markdown(book).cells[1].source
    assert src.startswith("x = 0.12, yes, *m*, {glue:text}`nope:.1f`.")
    assert "{figure}" not in src and "*Figure* `fig-a` (shown above): The caption." in src


@pytest.mark.slow
def test_execute_reports_progress(tmp_path):
    """The runner's progress callback sees the cell being executed while the notebook runs."""
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": R.KERNEL_NAME, "display_name": "ldp", "language": "python"}
    book.cells = [nbformat.v4.new_code_cell("quick: bool = False  # quick", metadata={"tags": ["parameters"]}),
                  nbformat.v4.new_code_cell("import time\ntime.sleep(3)")]
    src = tmp_path / "src.ipynb"
    nbformat.write(book, src)
    R.ensure_kernel()
    lines = []
    ok, report = R.execute(src, tmp_path / "out.ipynb", {}, tmp_path / "fig", tmp_path / "log.txt",
                           progress=lines.append, interval=0.5)
    assert ok, report
    assert any(re.search(r"cell [12]/2", line) for line in lines), lines
    assert "Executing Cell 2" in (tmp_path / "log.txt").read_text()


# --------------------------------------------------------------------------- #
# every documented command works verbatim
# --------------------------------------------------------------------------- #
def _documented_commands() -> dict[str, str]:
    """Notebook stem -> the command printed in its section of the parameters page."""
    page = runner.params_markdown()
    built = ROOT / "_generated" / "params.md"
    if built.is_file():
        assert built.read_text(encoding="utf-8") == page, "_generated/params.md is stale: run make book QUICK=1"
    commands = re.findall(r"```bash\n(.*?)\n```", page, flags=re.S)
    out = {}
    for cmd in commands:
        words = shlex.split(cmd)
        out[R.find_notebook(words[4]).stem] = cmd
    return out


def test_every_notebook_has_a_documented_command():
    assert set(_documented_commands()) == {p.stem for p in NOTEBOOKS}


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_documented_command_runs(path, tmp_path):
    cmd = _documented_commands()[path.stem]
    words = shlex.split(cmd)
    assert words[:4] == [".venv/bin/python", "-m", "ldp", "rerun"] and "--quick" in words
    assert (ROOT / words[0]).exists(), "run `make setup` first"
    env = dict(os.environ, **{R.RUNS_DIR_ENV: str(tmp_path)})
    proc = subprocess.run(words, cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"

    folders = list(tmp_path.iterdir())
    assert len(folders) == 1 and folders[0].name.startswith(f"{path.stem}-")
    run = folders[0]
    example = R.parse_assignments(R.rerun_example(path))
    values = json.loads((run / "parameters.json").read_text())
    expected, _ = R.resolve_parameters(path, example, quick=True)
    assert values == json.loads(json.dumps(expected)) and values["quick"] is True
    assert (run / "run.log").stat().st_size > 0
    # the claims this chapter measures, decided on this run (ldp.book.pages.write_rerun_report)
    assert (run / "claims.csv").read_text().startswith("id,") and (run / "claims.md").is_file()
    html = (run / f"{path.stem}.html").read_text(encoding="utf-8")
    assert "data:image/png" in html  # figures embedded
    executed = nbformat.read(run / path.name, as_version=4)
    raw = re.findall(r"\{glue(?::\w+)?\}<code>([^<:]+)", html)  # roles left as text ...
    assert not set(raw) & set(_glue(executed)), "glued values not pasted into the HTML"  # ... only unknown keys

    injected = executed.metadata["papermill"]["parameters"]
    for name in example:
        assert injected[name] == values[name], name
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    svgs = sorted(f for f in (run / "figures").glob("*.svg") if not f.stem.endswith("-narrow"))  # not the phone layouts
    assert svgs, f"{path.stem}: the rerun saved no figures"
    pngs = sum("image/png" in o.get("data", {}) for c in executed.cells for o in c.get("outputs", []))
    assert pngs >= len(svgs), f"{path.stem}: {len(svgs)} figures saved but {pngs} shown inline"

    quick = ROOT / "_generated" / "cache" / "quick"
    pairs = [(f, quick / "figures" / f.name) for f in svgs if (quick / "figures" / f.name).is_file()]
    require(quick / "notebooks" / path.name, "the quick build to compare the rerun with")
    assert pairs, f"{path.stem}: the quick build has none of the rerun's figures"
    changed = [f.name for f, q in pairs if f.read_bytes() != q.read_bytes()]
    if path.stem in ANALYTIC_FIGURES:  # no figure can change: the simulated numbers must
        assert not changed, f"{path.stem}: a figure changed; remove it from ANALYTIC_FIGURES"
        mine, theirs = _glue(executed), _glue(nbformat.read(quick / "notebooks" / path.name, as_version=4))
        moved = [k for k in mine if k in theirs and mine[k] != theirs[k] and not TIMING.search(k)
                 and k not in ANALYTIC_FIGURES[path.stem]]
        assert moved, f"{path.stem}: {cmd} left every computed value as in the quick build"
    else:
        assert changed, f"{path.stem}: {cmd} left every figure as in the quick build"


#: notebooks whose figures depend on no parameter (analytic curves) -> the glue keys that
#: merely echo a parameter; for them the rerun test checks the simulated values instead
ANALYTIC_FIGURES = {"01_frequency_oracles": {"oracles_n_reps", "oracles_sim_eps", "oracles_n_users"}}
TIMING = re.compile(r"seconds|runtime|speed|_time|_s$|_ms")


def _glue(executed: nbformat.NotebookNode) -> dict[str, str]:
    """Name -> text of every value glued (myst_nb.glue) in an executed notebook."""
    out = {}
    for cell in executed.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                out[name] = json.dumps(o.get("data"), sort_keys=True)
    return out
