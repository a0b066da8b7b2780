"""Open every page of the built book in headless Chromium and check what a reader sees.

The book is built by ``make test`` (``make book QUICK=1``) before pytest runs; these
tests never build it themselves. They serve ``_build/html`` from a local HTTP
server on 127.0.0.1 and check, on every page listed in ``_toc.yml``:

- the page loads (no error title, the main article has text);
- every image in the article has loaded with a non-zero size (``naturalWidth``);
- math is typeset by the local MathJax (``mjx-container`` elements for each math
  node, no raw ``\\(``, ``\\[`` or ``$$`` left in the text);
- no TeX outside typeset math anywhere a reader sees text: the document title, the
  sidebars, the article, the previous/next links and every link text (no ``\\(``, ``$``,
  ``\\varepsilon`` or ``x^{..}``);
- every figure is numbered: a figure of the paper with the paper's number
  (``book/_ext/paper_numbers.yml``), any other in the book's own series "Figure A.n";
- the browser fetched nothing from outside the local server and logged no errors;

and, without the browser, that every figure has the download link of its data
(``NAME.csv``) right under it.

Each page is opened once at 1280 x 1000 and every check reads that opening (the fixtures and the
probes of ``tests/browsing.py``). Under ``CI=true`` a missing browser or a missing build is a
failure; elsewhere the tests are skipped with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from browsing import DESKTOP

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.browser


def toc_pages() -> list[str]:
    """Document names listed in _toc.yml (root first), e.g. ``book/intro``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    walk(toc.get("sections"))
    return [str(Path(p).with_suffix("")) if p.endswith((".md", ".ipynb")) else p for p in pages]


PAGES = toc_pages()


# --------------------------------------------------------------------------- #
# page inspection (JavaScript run in the page; each page is opened once, see tests/browsing.py)
# --------------------------------------------------------------------------- #
INSPECT = """
const article = document.querySelector('article.bd-article, main, [role=main]');
const visibleText = (root) => {
  // text outside code, scripts and MathJax's own output
  const clone = root.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight')
       .forEach((el) => el.remove());
  return clone.textContent;
};
// images a reader sees: not those of a closed menu (the launch buttons' logos in the header)
const imgs = article ? Array.from(article.querySelectorAll('img')).filter((im) => !im.closest('.dropdown-menu')) : [];
const figSvgs = article ? Array.from(article.querySelectorAll('figure svg, .cell_output svg'))
                                .filter((s) => !s.closest('mjx-container')) : [];
const mathNodes = article ? article.querySelectorAll('.math') : [];
return {
  title: document.title,
  articleText: article ? article.textContent.trim().length : -1,
  images: imgs.map((im) => ({src: im.getAttribute('src'), complete: im.complete,
                              naturalWidth: im.naturalWidth,
                              width: im.getBoundingClientRect().width,
                              height: im.getBoundingClientRect().height})),
  svgs: figSvgs.map((s) => ({w: s.getBoundingClientRect().width,
                              h: s.getBoundingClientRect().height})),
  mathNodes: mathNodes.length,
  mathUntypeset: Array.from(mathNodes).filter((n) => !n.querySelector('mjx-container'))
                      .map((n) => n.textContent.slice(0, 80)),
  mjx: document.querySelectorAll('mjx-container').length,
  // formulas of the page's own content (the "on this page" sidebar repeats headings, and
  // the theme hides it in narrow windows, so its copies may have no size)
  mjxZero: Array.from((document.querySelector('article.bd-article') || article || document)
                  .querySelectorAll('mjx-container'))
                .filter((c) => c.getBoundingClientRect().width <= 0).length,
  rawText: article ? visibleText(article) : '',
  resources: performance.getEntriesByType('resource').map((e) => e.name),
};
"""

RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$")


DESKTOP.probe("inspect")(lambda driver, page: driver.execute_script(INSPECT))
# the log since the last reading: this page's messages (a probe runs right after the page has loaded)
DESKTOP.probe("console")(lambda driver, page: driver.get_log("browser"))


def open_page(views, server: str, page: str) -> dict:
    """What :data:`INSPECT` saw on ``page`` at the desktop size, with MathJax's state and the console's log."""
    view = views.get(page, DESKTOP)
    url = f"{server}/{page}.html"
    assert not str(view["mathjax"]).startswith("error"), f"MathJax failed on {url}: {view['mathjax']}"
    return view["inspect"] | {"mathjax": view["mathjax"], "console": view["console"]}


# --------------------------------------------------------------------------- #
# tests
# --------------------------------------------------------------------------- #
def test_every_toc_page_was_built(built_book: Path):
    missing = [p for p in PAGES if not (built_book / f"{p}.html").is_file()]
    assert not missing, f"pages in _toc.yml without HTML in {built_book}: {missing}"


@pytest.mark.parametrize("page", PAGES)
def test_page_renders(page: str, built_book: Path, server: str, views):
    if not (built_book / f"{page}.html").is_file():
        pytest.fail(f"{page}.html was not built")
    info = open_page(views, server, page)

    # loads, with content
    assert info["title"] and not re.search(r"\b(404|not found|error)\b", info["title"], re.I), (
        f"{page}: bad title {info['title']!r}"
    )
    assert info["articleText"] > 50, f"{page}: main article missing or empty"

    # figures and images
    for im in info["images"]:
        assert im["complete"] and im["naturalWidth"] > 0, f"{page}: image did not load: {im}"
        assert im["width"] > 0 and im["height"] > 0, f"{page}: image has zero size: {im}"
    for svg in info["svgs"]:
        assert svg["w"] > 0 and svg["h"] > 0, f"{page}: inline SVG figure has zero size"

    # math
    if info["mathNodes"]:
        assert info["mathjax"] == "typeset", f"{page}: has math but MathJax did not load"
        assert not info["mathUntypeset"], f"{page}: math not typeset: {info['mathUntypeset']}"
        assert info["mjx"] >= info["mathNodes"], f"{page}: {info['mjx']} typeset < {info['mathNodes']} math nodes"
        assert info["mjxZero"] == 0, f"{page}: {info['mjxZero']} typeset formulas have zero width"
    raw = RAW_TEX.findall(info["rawText"])
    assert not raw, f"{page}: raw TeX delimiters left in the text: {raw[:5]}"

    # nothing fetched from outside the local server; no console errors
    foreign = [r for r in info["resources"] if not r.startswith((server, "data:", "blob:"))]
    assert not foreign, f"{page}: fetched non-local resources: {foreign}"
    errors = [
        e for e in info["console"]
        if e.get("level") == "SEVERE" and "favicon.ico" not in e.get("message", "")
    ]
    assert not errors, f"{page}: browser console errors: {errors}"


PAPER_FIGURES = {label: entry["number"]
                 for entry in yaml.safe_load((ROOT / "book" / "_ext" / "paper_numbers.yml").read_text())["figures"]
                 for label in entry["book"]}


DESKTOP.probe("captions")(lambda driver, page: driver.execute_script(
    "return Array.from(document.querySelectorAll('figure[id^=\"fig-\"]')).map("
    "f => [f.id, f.querySelector('figcaption') ? f.querySelector('figcaption').textContent : null])"
))
DESKTOP.probe("pasted")(lambda driver, page: driver.execute_script(
    "return Array.from(document.querySelectorAll('.pasted-text, .pasted-inline')).map(e => e.textContent)"
))


@pytest.mark.parametrize("page", PAGES)
def test_figures_numbered_and_glue_filled(built_book: Path, views, page: str):
    """Every labelled figure is numbered with a caption (a paper figure with the paper's number,
    any other "Figure A.n"); every glued value is filled in."""
    captions = views.get(page, DESKTOP)["captions"]
    for fig_id, caption in captions:
        assert caption is not None, f"{page}: figure {fig_id} has no caption"
        number = re.match(r"\s*Figure (\d+|A\.\d+) ", caption)
        assert number, f"{page}: figure {fig_id} is not numbered: {caption[:60]!r}"
        expected = str(PAPER_FIGURES[fig_id]) if fig_id in PAPER_FIGURES else None
        assert number.group(1) == expected if expected else number.group(1).startswith("A."), (
            f"{page}: figure {fig_id} is numbered {number.group(1)}, expected {expected or 'A.n'}"
        )
    pasted = views.get(page, DESKTOP)["pasted"]
    empty = [i for i, t in enumerate(pasted) if not t.strip()]
    assert not empty, f"{page}: {len(empty)} glued values are empty"
    if page.startswith("_generated/notebooks/0") and page.split("/")[-1][:2] in {"05", "06", "07"}:
        assert captions, f"{page}: a paper-figure chapter shows no numbered figure"
        assert pasted, f"{page}: a paper-figure chapter glues no numbers"


# Everything a reader sees as text: the document title, the sidebars, the article, the
# previous/next links and every link text. Code (pre, code, .highlight), scripts and the
# formulas MathJax typeset (mjx-container) are left out; what remains must hold no TeX.
READER_TEXT = """
const strip = (root) => {
  if (!root) return '';
  const clone = root.cloneNode(true);
  clone.querySelectorAll('pre, code, kbd, samp, script, style, mjx-container, .highlight, .headerlink')
       .forEach((el) => el.remove());
  return clone.textContent;
};
const one = (sel) => strip(document.querySelector(sel));
return {
  'document title': document.title,
  'primary sidebar': one('.bd-sidebar-primary'),
  'secondary sidebar': one('.bd-sidebar-secondary'),
  'article': one('article.bd-article'),
  'previous/next links': one('.prev-next-area'),
  'link texts': Array.from(document.querySelectorAll('a')).map(strip).join(' | '),
};
"""
# \( \) \[ \] and $ (math delimiters), \name (a TeX command), x^{..} and x_{..} (TeX's
# super- and subscripts written out as plain text)
TEX_IN_TEXT = re.compile(r"\\[()\[\]]|\$|\\[A-Za-z]+|[\^_]\{")
# and, in the prose (outside code outputs), x^y
CARET_IN_PROSE = re.compile(r"\S\^\S")
# The prose of a page without the notebooks' outputs (tables printed by code); on the rerun
# page also without its parameter tables, which are the notebooks' code comments
# (scripts/run_notebooks.py writes them from the parameters cells).
PROSE = """
const article = document.querySelector('article.bd-article');
if (!article) return '';
const clone = article.cloneNode(true);
clone.querySelectorAll('pre, code, kbd, samp, script, style, mjx-container, .highlight, .headerlink, .cell_output')
     .forEach((el) => el.remove());
if (arguments[0]) clone.querySelectorAll('table').forEach((el) => el.remove());
return clone.textContent;
"""
GENERATED_TABLES = {"book/rerun"}
DESKTOP.probe("reader text")(lambda driver, page: driver.execute_script(READER_TEXT))
DESKTOP.probe("prose")(lambda driver, page: driver.execute_script(PROSE, page in GENERATED_TABLES))


def tex_left_in(texts: dict, pattern: re.Pattern = TEX_IN_TEXT) -> dict:
    """For each part of a page, the TeX left in its plain text, with some context."""
    found = {}
    for part, text in texts.items():
        hits = [text[max(m.start() - 30, 0):m.end() + 30].replace("\n", " ") for m in pattern.finditer(text)]
        if hits:
            found[part] = hits[:5]
    return found


def test_tex_left_in_text_detected():
    """The pattern catches what a reader must never see, and passes plain text."""
    bad = ["effect of \\(\\varepsilon\\)", "effect of \\varepsilon", "costs $k$", "T_{k-j}", "2^{γ+η}·g",
           "\\[x\\]"]
    assert all(tex_left_in({"t": b}) for b in bad)
    assert not tex_left_in({"t": "Evaluation: effect of ε and k; d′ = ⌈e^ε + 1⌉; T_k and n[i]; 2²⁰"})
    assert tex_left_in({"t": "1/(e^ε + 1)"}, CARET_IN_PROSE) and not tex_left_in({"t": "2²⁰, a ^ b"}, CARET_IN_PROSE)


@pytest.mark.parametrize("page", PAGES)
def test_no_tex_outside_math(page: str, built_book: Path, server: str, views):
    """No raw TeX anywhere a reader sees text: title, sidebars, article, link texts."""
    open_page(views, server, page)  # MathJax typeset the page
    view = views.get(page, DESKTOP)
    found = tex_left_in(view["reader text"])
    found |= tex_left_in({"prose": view["prose"]}, CARET_IN_PROSE)
    assert not found, f"{page}: TeX outside rendered math: {found}"


ABSOLUTE_URL = re.compile(r"""(?:src|href)\s*=\s*["'](https?:)?//""", re.I)
RESOURCE_TAG = re.compile(r"<(script|img|iframe|source|link)\b[^>]*>", re.I)
CSS_URL = re.compile(r"""url\(\s*["']?(https?:)?//""", re.I)


def test_no_external_resources(built_book: Path):
    """No page or stylesheet loads anything (MathJax, fonts, scripts) from another host.

    Plain hyperlinks (``<a href="https://...">``) are allowed; resources are not.
    """
    offenders = []
    for html in built_book.rglob("*.html"):
        for tag in RESOURCE_TAG.finditer(html.read_text(encoding="utf-8", errors="replace")):
            text = tag.group(0)
            if tag.group(1).lower() == "link" and not re.search(
                r"""rel\s*=\s*["'][^"']*(stylesheet|preload|icon|modulepreload|prefetch)""", text, re.I
            ):
                continue
            if ABSOLUTE_URL.search(text):
                offenders.append(f"{html.relative_to(built_book)}: {text[:120]}")
    for css in (built_book / "_static").rglob("*.css"):
        if CSS_URL.search(css.read_text(encoding="utf-8", errors="replace")):
            offenders.append(f"{css.relative_to(built_book)}: url(http...)")
    assert not offenders, "external resources:\n" + "\n".join(offenders)
    mathjax = built_book / "_static" / "mathjax" / "tex-svg-full.js"
    assert mathjax.is_file(), f"local MathJax missing: {mathjax}"


def test_every_figure_offers_its_data(built_book: Path):
    """Right under every figure of the book, a link downloads the figure's plotted data.

    For each ``<figure>`` whose image is a generated ``NAME.svg``, the first download
    link after it on the page must be ``NAME.csv``; the linked copy must equal
    ``_generated/figures/NAME.csv``, a plain CSV with a header and at least one row.
    """
    import pandas as pd
    from bs4 import BeautifulSoup

    generated = ROOT / "_generated" / "figures"
    checked, problems = [], []
    for page in PAGES:
        html = built_book / f"{page}.html"
        if not html.is_file():
            continue
        text = html.read_text(encoding="utf-8")
        if "<figure" not in text.lower():  # no figure on the page (the API reference): nothing to parse
            continue
        soup = BeautifulSoup(text, "html.parser")
        for fig in soup.find_all("figure"):
            img = fig.find("img")
            name = Path(img["src"]).stem if img and img.get("src") else None
            if name is None or not (generated / f"{name}.svg").is_file():
                problems.append(f"{page}: figure {fig.get('id')} shows no generated image")
                continue
            checked.append(name)
            link = fig.find_next("a", class_="download")
            if link is None or Path(link.get("href", "")).name != f"{name}.csv":
                problems.append(f"{page}: no {name}.csv download link under figure {fig.get('id')}")
                continue
            target = (html.parent / link["href"]).resolve()
            source = generated / f"{name}.csv"
            if not (target.is_file() and source.is_file() and target.read_bytes() == source.read_bytes()):
                problems.append(f"{page}: {link['href']} is missing or differs from {source}")
                continue
            table = pd.read_csv(source)
            if table.empty or table.columns.empty:
                problems.append(f"{page}: {source} has no rows")
    assert not problems, "\n".join(problems)
    assert checked, "the book shows no figures"
