"""A chapter's sentences about a claim state the registry's decision, never their own.

The chapters glue :func:`ldp.book.claim_values` in their last cell: for every claim the
chapter measures, ``claim_<id>_verdict``, ``_measured``, ``_explanation`` and the numbers
its rule decided on.  Checked here:

- in the sources: every ``{glue}`claim_...``` a chapter pastes is one of its own claims'
  values; no sentence or table of a chapter types a verdict word outside a glued value, or
  gives its own verdict in other words ("we agree", "this differs from the paper");
- in the quick build (``make test`` builds it first; under ``CI`` a missing build fails):
  every chapter glued every one of its claims, each glued verdict is the verdict the
  registry gives on that build's results (what the report page says), and no other glued
  value carries a verdict word.
"""
import json
import re
from pathlib import Path

import pytest

from ldp.book import claim_key
from ldp.book.chapters import REGISTRY
from ldp.book.claims import ResultStore, evaluate
from ldp.book.claims.verdicts import VERDICTS

from builds import QUICK, require

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted({c.chapter for c in REGISTRY.claims})
WORDS = re.compile(r"\b(" + "|".join(re.escape(v) for v in sorted(VERDICTS, key=len, reverse=True)) + r")\b",
                   re.IGNORECASE)
OWN = re.compile(r"\bwe (dis)?agree\b|\b(this|it) (differs|departs) from the paper\b|\ball pass\b|\bconfirms the paper",
                 re.IGNORECASE)  # a chapter's own verdict in other words
COMPUTED = re.compile(r"\{glue(?::\w+)?\}`[^`]*`|`[^`]*`|\$[^$]*\$")  # glued values, inline code and math
CLAIM_GLUE = re.compile(r"\{glue(?::\w+)?\}`(claim_\w+?)(?::[^`]*)?`")


def markdown(chapter: str) -> str:
    cells = json.loads((ROOT / "notebooks" / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def glued(notebook: Path) -> dict[str, str]:
    """key -> text/plain (or text/markdown) of every value an executed notebook glued."""
    out = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook")
            if meta:
                data, prefix = o["data"], meta.get("mime_prefix", "")
                out[meta["name"]] = data.get(prefix + "text/markdown", data.get(prefix + "text/plain"))
    return out


def test_the_chapters_and_the_registry_agree_on_their_names():
    assert set(CHAPTERS) <= {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert all(claim_key(c.id).isidentifier() for c in REGISTRY.claims)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_pastes_only_its_own_claims(chapter):
    own = {claim_key(c.id) for c in REGISTRY.claims if c.chapter == chapter}
    pasted = CLAIM_GLUE.findall(markdown(chapter))
    assert pasted, f"{chapter} states no claim's verdict"
    stray = sorted({k for k in pasted if not any(k == o or k.startswith(o + "_") for o in own)})
    assert not stray, f"{chapter} pastes values of claims it does not measure: {stray}"


@pytest.mark.parametrize("chapter", sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_no_verdict_is_typed_in_a_chapter(chapter):
    typed = [line for line in markdown(chapter).splitlines()
             if WORDS.search(COMPUTED.sub("", line)) or OWN.search(COMPUTED.sub("", line))]
    assert not typed, f"{chapter} types a verdict instead of gluing the registry's:\n" + "\n".join(typed)


@pytest.fixture(scope="module")
def decided():
    require(QUICK / "manifest.json")
    return evaluate(ResultStore.for_build("quick"), REGISTRY).set_index("id")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_glued_verdicts_are_the_registrys(chapter, decided):
    values = glued(require(QUICK / "notebooks" / f"{chapter}.ipynb", f"the quick build of {chapter}"))
    for claim in (c for c in REGISTRY.claims if c.chapter == chapter):
        key = claim_key(claim.id)
        assert f"{key}_verdict" in values, f"{chapter} did not glue {claim.id}"
        assert values[f"{key}_verdict"].strip("'\"") == decided.loc[claim.id, "verdict"], claim.id
        assert values[f"{key}_measured"].strip("'\"") == (decided.loc[claim.id, "measured"] or "not measured")
    loose = {k: v for k, v in values.items() if not k.startswith("claim_") and WORDS.search(str(v))}
    assert not loose, f"{chapter} glues verdict words outside the registry's values: {loose}"
