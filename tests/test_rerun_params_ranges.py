"""The checks before a rerun: each value against its parameter's real range, refused before any work.

Every parameter of every chapter states its range in the parameters cell (``[range: ...]``); a value
outside it, not finite, of the wrong type, too long to read or for no parameter is refused by
``python -m ldp rerun`` with an error naming the parameter and the range, before a kernel starts and
before any folder is made.  No kernel runs here.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from ldp.book import rerun as R

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PARAMS = {nb.stem: R.notebook_parameters(nb) for nb in NOTEBOOKS}


def _list_text(item: str, n: int) -> str:
    return "[" + ", ".join([item] * n) + "]"


@pytest.fixture
def no_work(tmp_path, monkeypatch):
    """Runs' folders go under tmp_path/runs; starting a kernel or executing a notebook fails the test."""
    runs = tmp_path / "runs"
    monkeypatch.setenv(R.RUNS_DIR_ENV, str(runs))

    def forbidden(*args, **kwargs):
        raise AssertionError("a kernel was started for a value the checks should have refused")

    monkeypatch.setattr("ldp.book.rerun.run.ensure_kernel", forbidden)
    monkeypatch.setattr("ldp.book.rerun.run.execute", forbidden)
    return runs


def _refused(capsys, runs: Path, notebook: str, setting: str, out: Path | None) -> str:
    argv = ["rerun", notebook, "--set", setting] + (["--out", str(out)] if out is not None else [])
    assert R.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m ldp rerun: error: ")
    assert not runs.exists(), "a refused rerun made a folder"
    if out is not None:
        assert not out.exists(), "a refused rerun made its --out folder"
    return err


# notebook, NAME=VALUE, what the message says besides the parameter's name and range
OUT_OF_RANGE = [
    ("02", "epsilon=1e999", "must be a finite number"),
    ("02", "epsilon=1e-300", "got 1e-300"),
    ("02", "epsilon=-1", "got -1.0"),
    ("06", "eps_fixed=1e999", "must be a finite number"),
    ("06", "eps_fixed=1e-300", "got 1e-300"),
    ("02", "k=2**200", "got 1606938044258990275541962092341162602522202993782792835301376"),
    ("02", "n_users=2**40", "got 1099511627776"),
    ("06", "n_synthetic=2**40", "got 1099511627776"),
    ("06", "repetitions=10**9", "got 1000000000"),
    ("05", "n_repetitions=10**9", "got 1000000000"),
    ("06", "epsilons=" + _list_text("1.0", 100_000), "at most MAX_LITERAL_CHARS = 65,536 characters; got 500,000"),
    ("06", "ks=" + _list_text("1", 1_000), "got 1,000 items"),
    ("06", "epsilons=[1.0, 2.0, 1e999]", "each item of epsilons must be a finite number"),
    ("06", "epsilons=[1.0, 1e-300]", "got 1e-300 among the items"),
    ("06", "eps_fixed=1e999 - 1e999", "got nan"),  # a NaN
    ("06", "epsilons=[1.0, 1e999 - 1e999]", "got nan"),
    ("06", "seed=2**200", "got 1606938044258990275541962092341162602522202993782792835301376"),
    ("06", "n_jobs=0", "got 0"),
    ("06", "n_jobs=10**6", "got 1000000"),
    ("10", "price_pools=[2**22]", "got 4194304 among the items"),
    ("10", "price_engine=shell", "got 'shell'"),
    ("10", "benchmark_csv=../../../etc/passwd", "got '../../../etc/passwd'"),
    ("10", "benchmark_csv=pyproject.toml", "got 'pyproject.toml'"),
    ("01", "grr_domain=2", "got 2"),
    ("09", "trials=10**9", "got 1000000000"),
]


@pytest.mark.parametrize("with_out", [True, False], ids=["--out", "my-runs"])
@pytest.mark.parametrize("notebook, setting, says", OUT_OF_RANGE, ids=[s[:40] for _, s, _ in OUT_OF_RANGE])
def test_a_value_out_of_range_is_refused_before_any_work(notebook, setting, says, with_out, no_work, tmp_path,
                                                         capsys):
    name = setting.split("=", 1)[0]
    param = next(p for stem, ps in PARAMS.items() if stem.startswith(notebook) for p in ps.values() if p.name == name)
    err = _refused(capsys, no_work, notebook, setting, tmp_path / "mine" if with_out else None)
    first = err.splitlines()[0]
    assert name in first and f"[range: {param.range_text}]" in first and says in first, first
    assert len(first) < 600, "the message repeats the value"


# notebook, NAME=VALUE, what the message says (the parameter is named)
NOT_A_VALUE = [
    ("06", "k_fixed=2.5", "k_fixed must be an integer such as 3 or 2**20 within [range: 1 ≤ x ≤ 1024] (type int)"),
    ("06", "repetitions='ten'", "repetitions must be an integer"),
    ("06", "eps_fixed=True", "eps_fixed must be a number"),
    ("06", "epsilons=2.0", "epsilons must be a list"),
    ("06", "ks=[1, 2.5]", "ks must be a list of integers"),
    ("06", "eps_fixed=nan", "eps_fixed=nan: 'nan' is not a Python literal"),
    ("06", "eps_fixed=float('nan')", "is not a Python literal"),
    ("06", "seed=__import__('os').getpid()", "is not a Python literal"),
    ("06", "seed=" + "1" * 5000, "is not a Python literal (Exceeds the limit"),
    ("06", "seed=" + "-" * 60_000 + "1", "is nested too deeply"),
    ("06", "seed=" + "[" * 300 + "]" * 300, "too many nested parentheses"),
    ("10", "benchmark_csv=" + "x" * 70_000, "benchmark_csv must be text"),
    ("06", "repetiton=3", "06_evaluation has no parameter 'repetiton' (did you mean repetitions?)"),
    ("06", "epsilon=2.0", "06_evaluation has no parameter 'epsilon'"),
]


@pytest.mark.parametrize("notebook, setting, says", NOT_A_VALUE, ids=[s[:40] for _, s, _ in NOT_A_VALUE])
def test_a_wrong_type_an_unreadable_value_or_an_unknown_name_is_refused(notebook, setting, says, no_work,
                                                                        tmp_path, capsys):
    err = _refused(capsys, no_work, notebook, setting, tmp_path / "mine")
    first = err.splitlines()[0]
    assert says in first, first
    assert len(first) < 1000, "the message repeats the value"
    assert "Parameters of " in err  # and the notebook's parameters are listed, with their ranges
    assert "[range: " not in err.split("Parameters of ", 1)[1] and "(allowed: " in err


def test_the_guard_sees_a_kernel_start(no_work, tmp_path):
    """The fixture above would catch a run that got past the checks (so the refusals above mean something)."""
    with pytest.raises(AssertionError, match="a kernel was started"):
        R.main(["rerun", "06", "--quick", "--set", "repetitions=2", "--out", str(tmp_path / "mine")])


def test_a_refusal_leaves_an_earlier_run_folder_untouched(no_work, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert R.main(["rerun", "06", "--set", "repetitions=10**9", "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and (out / "notes.txt").read_text() == "mine"
    assert not no_work.exists()


def test_values_within_range_pass(no_work):
    values, _ = R.resolve_parameters(ROOT / "notebooks/06_evaluation.ipynb",
                                     {"epsilons": _list_text("2.0", 50), "repetitions": "1000", "eps_fixed": "20",
                                      "n_jobs": "-1", "seed": "2**128 - 1", "n_synthetic": "10**8"})
    assert len(values["epsilons"]) == 50 and values["repetitions"] == 1000 and values["seed"] == 2**128 - 1
    with pytest.raises(R.ParameterError, match=r"epsilons must be within .*; got 51 items"):
        R.resolve_parameters(ROOT / "notebooks/06_evaluation.ipynb", {"epsilons": _list_text("2.0", 51)})


# --------------------------------------------------------------------------- #
# every parameter states a real range, and its default and quick value lie in it
# --------------------------------------------------------------------------- #
ALL = [(stem, p) for stem, ps in PARAMS.items() for p in ps.values() if p.name != "quick"]


@pytest.mark.parametrize("stem, param", ALL, ids=[f"{s}:{p.name}" for s, p in ALL])
def test_every_parameter_states_its_range_and_its_default_lies_in_it(stem, param):
    assert param.range_text, f"{stem}: {param.name} has no [range: ...] mark"
    rng = R.parse_range(param.range_text)
    assert R.range_problem(rng, param.default) is None, (stem, param.name, param.default)
    assert R.range_problem(rng, param.quick) is None, (stem, param.name, param.quick)
    # a real range: bounded where the machine or the run time is
    if param.type in ("int", "float", "list"):
        assert R.range_problem(rng, [2**200] if param.type == "list" else 2**200), f"{param.name}: no upper bound"
        assert R.range_problem(rng, [math.nan] if param.type == "list" else math.nan), f"{param.name}: takes nan"
    if param.type == "list":
        assert rng.length is not None and R.range_problem(rng, param.default * 100_000), f"{param.name}: no len bound"
        assert R.range_problem(rng, []), f"{param.name}: takes an empty list"
    if param.type == "str":
        assert R.range_problem(rng, "x" * 1000), f"{param.name}: takes any text"
    if param.name.startswith("eps") or "epsilon" in param.name:  # a privacy budget
        for eps in (1e-300, 0.0, -1.0, 1e3):
            assert R.range_problem(rng, [eps] if param.type == "list" else eps), f"{param.name} takes {eps}"


def test_the_range_is_listed_with_the_parameters(capsys):
    assert R.main(["rerun", "06", "--params"]) == 0
    out = capsys.readouterr().out
    assert "repetitions: int = 10  # runs per point (paper: 10) (allowed: 1 ≤ x ≤ 1000) (quick: 3)" in out


# --------------------------------------------------------------------------- #
# the grammar of a range mark
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("text, value, ok", [
    ("1 ≤ x ≤ 10**8", 10**8, True), ("1 ≤ x ≤ 10**8", 10**8 + 1, False), ("0 < x < 1", 0.0, False),
    ("x in (-1,) or 1 ≤ x ≤ 256", -1, True), ("x in (-1,) or 1 ≤ x ≤ 256", 0, False),
    ("x in ('a', 'b')", "a", True), ("x in ('a', 'b')", "c", False), ("x ≠ 3", 3, False),
    ("x > 0; 1 ≤ len ≤ 3", [1, 2, 3], True), ("x > 0; 1 ≤ len ≤ 3", [1, 2, 3, 4], False),
    ("x > 0; 1 ≤ len ≤ 3", [], False), ("x > 0; 1 ≤ len ≤ 3", [1, -2], False), ("len ≤ 3", "abcd", False),
    ("x ≥ 1", "text", False), ("len ≤ 3", 5, False),
])
def test_range_holds(text, value, ok):
    assert R.in_range(text, value) is ok


@pytest.mark.parametrize("text, says", [
    ("x = 1", "write ≤, ≥ or ≠"), ("y > 1", "mentions neither x nor len"), ("x > 1; x < 2", "two conditions on x"),
    ("x > 1 and len < 3", "not both"), ("x > 1; len < 3; x < 5", "one condition on x"),
    ("x > abs(1)", "not a Python literal"), ("__import__('os')", "only comparisons"),
    ("x in files('../*')", "without '..'"), ("x in files('/etc/*')", "relative to the repository's root"),
    ("x in files(a)", "one quoted pattern"), ("x > 2**5000", "too large"),
])
def test_a_bad_range_mark_is_refused(text, says):
    with pytest.raises(ValueError) as info:
        R.parse_range(text)
    assert says in str(info.value), str(info.value)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_files_are_the_repository_s_regular_files_only(tmp_path, monkeypatch):
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "a.csv").write_text("x\n")
    (results / "dir.csv").mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside.csv"
    outside.write_text("secret\n")
    (results / "link.csv").symlink_to(outside)
    monkeypatch.setenv("LDP_ROOT", str(tmp_path))
    assert R.repository_files("benchmarks/results/*.csv") == ("benchmarks/results/a.csv",)
    assert R.in_range("x in files('benchmarks/results/*.csv')", "benchmarks/results/a.csv")
    assert not R.in_range("x in files('benchmarks/results/*.csv')", "benchmarks/results/link.csv")


def test_literal_text_is_bounded():
    assert R.literal_value(_list_text("1", 16_000))[-1] == 1
    with pytest.raises(ValueError, match="MAX_LITERAL_CHARS"):
        R.literal_value("1" * (R.MAX_LITERAL_CHARS + 1))
