"""The tables of contents: the book's sidebar (``_toc.yml``) follows what a reader does, and the two PDFs split
the book in the reproduction a reader prints (``_toc_pdf.yml``) and the library reference (``_toc_reference.yml``).

- the sidebar: the reproduction report first, the chapters that reproduce the paper after it; "Beyond the
  paper" apart from the reproduction; "Use the library" (deployment, reruns, citing, the artifact) apart
  from the library reference; every page of the book is in it;
- the reader's PDF holds every page of the sidebar's reproduction and its "Beyond the paper", and how to cite,
  and nothing of the library's pages; the reference's PDF holds every page of the library reference.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def parts(name: str) -> dict[str, list[str]]:
    """Caption -> the files of that part (sections included), in order."""
    toc = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))

    def walk(entries) -> list[str]:
        out = []
        for entry in entries or []:
            out.append(entry["file"])
            out += walk(entry.get("sections"))
        return out

    if "parts" not in toc:
        return {"": walk(toc.get("chapters"))}
    return {part["caption"]: walk(part["chapters"]) for part in toc["parts"]}


def root(name: str) -> str:
    return yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))["root"]


def test_the_sidebar_follows_what_readers_do():
    book = parts("_toc.yml")
    assert list(book) == ["Reproduction", "Beyond the paper", "Use the library", "Library reference"]
    assert root("_toc.yml") == "book/intro" and book["Reproduction"][0] == "book/reproduction"  # the report first
    assert book["Reproduction"][1:8] == [f"_generated/notebooks/{n}" for n in (
        "01_frequency_oracles", "02_existing_methods", "03_pem", "04_count_engine", "05_validation", "06_evaluation",
        "07_evaluation_more")]
    assert book["Beyond the paper"] == ["_generated/notebooks/08_after_pem", "_generated/notebooks/09_malicious_users",
                                        "book/deploying_safely", "_generated/notebooks/10_scale"]
    assert book["Use the library"] == ["book/deployment", "book/rerun", "book/cite", "book/artifact"]
    assert all(page.startswith("book/api/") for page in book["Library reference"])


def test_every_page_is_in_the_sidebar():
    listed = {root("_toc.yml"), *(page for pages in parts("_toc.yml").values() for page in pages)}
    pages = {f"book/{p.stem}" for p in (ROOT / "book").glob("*.md")}
    pages |= {f"book/api/{p.stem}" for p in (ROOT / "book" / "api").glob("*.rst")}
    pages |= {f"_generated/notebooks/{p.stem}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert pages == listed, (sorted(pages - listed), sorted(listed - pages))


def test_the_pdfs_split_the_book():
    book = parts("_toc.yml")
    reader = parts("_toc_pdf.yml")
    printed = [page for pages in reader.values() for page in pages]
    assert root("_toc_pdf.yml") == root("_toc.yml")
    assert sorted(printed) == sorted([*book["Reproduction"], *book["Beyond the paper"], "book/cite"])
    assert not [page for page in printed if page.startswith("book/api/") or page in book["Use the library"]
                and page != "book/cite"]
    reference = parts("_toc_reference.yml")[""]
    assert root("_toc_reference.yml") == "book/api/index"
    assert ["book/api/index", *reference] == book["Library reference"]
