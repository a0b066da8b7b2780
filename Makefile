# The two commands:  make book   (build the Jupyter Book, paper settings)
#                    make test   (quick book build + the whole test suite)
# Also: make pdf (the reproduction as one PDF; make pdf-reference, the library reference; both need
# TeX Live, see README "The PDF")
# and, to rerun one chapter with your own values (see book/rerun.md):
#                    make rerun NB=06 QUICK=1 SET='epsilons=[1.0, 3.0] repetitions=2'
# Everything else is set up on demand from the package registries (PyPI, npm).
#
# Checks only (also the first step of make test): make lint (ruff, mypy, the layer contract,
# the GitHub workflows)
# Interactive: make lab (JupyterLab on notebooks/ with the ldp kernel). Releases: make dist.
#
# Variables: QUICK=1 (small settings), JOBS=2 (notebooks in parallel),
#            PYTEST_WORKERS=2, PYTEST_ARGS='-m "not slow"', FORCE=1 (re-execute
#            notebooks whose inputs did not change), PYTHON=python3.11 (venv base).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
QUICK ?= 0
JOBS ?= 2
FORCE ?= 0
PYTEST_WORKERS ?= 2
PYTEST_ARGS ?=

SETUP_STAMP := $(VENV)/.ldp-setup.stamp
PIP_INSTALL_V := $(PY) -m pip install --disable-pip-version-check --no-input --progress-bar off
PIP_INSTALL := $(PIP_INSTALL_V) -q
# pip configurations that list absent local indexes print one line per package
PIP_NOISE := is ignored: it is neither a file nor a directory
# pip's output, shortened to what it installs: "[setup]   numpy==2.4.6" per package
# (lines not recognised as routine, e.g. errors, are kept)
PIP_FILTER := awk '/$(PIP_NOISE)/ {next} \
    /^Collecting / {print "[setup]   " $$2; fflush(); next} \
    /^Processing .*\.(whl|tar\.gz|zip)/ {n = split($$2, p, "/"); split(p[n], w, "-"); \
        print "[setup]   " w[1] "==" w[2]; fflush(); next} \
    /^Successfully installed / {print "[setup]   done: " NF-2 " package(s) installed"; fflush(); next} \
    /^(Requirement already satisfied|Installing collected packages|Building wheels for collected|Obtaining|Looking in)/ {next} \
    /^  +(Using cached|Downloading|Preparing|Getting requirements|Installing build|Building|Created wheel|Stored in|Attempting|Found existing|Uninstalling|Successfully uninstalled|Checking)/ {next} \
    {print; fflush()}'
MATHJAX_STAMP := book/_static/mathjax/VERSION

truthy = $(filter 1 true yes on TRUE YES,$(1))
RUN_FLAGS := --jobs $(JOBS) $(if $(call truthy,$(QUICK)),--quick) $(if $(call truthy,$(FORCE)),--force)

# Data: the AOL tally ships in data/ (committed), so nothing is downloaded. LDP_DATA_DIR, when
# set, is the only folder the loaders search. Without a verified tally every chapter still
# builds: chapters 06 and 08 leave AOL out and say so (see data/README.md).

export JUPYTER_PLATFORM_DIRS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help setup mathjax notebooks html book pdf pdf-reference artifact citation lint test data rerun lab dist clean distclean

help:
	@echo "make book          build the book with the paper's settings -> _build/html/index.html"
	@echo "make book QUICK=1  same with small, fast settings"
	@echo "make pdf           the reproduction as one PDF (LaTeX) -> _build/latex/ldp-book.pdf"
	@echo "make pdf-reference the library reference as a PDF -> _build/reference/_build/latex/ldp-reference.pdf"
	@echo "make artifact      the artifact appendix (USENIX layout) as a PDF -> _build/artifact/artifact-appendix.pdf"
	@echo "make lint          ruff, mypy, the layer contract of ldp/ (lint-imports) and the GitHub workflows"
	@echo "make test          make lint, quick book and PDF builds, then the whole test suite (pytest)"
	@echo "make citation      validate CITATION.cff (cffconvert, in .venv-cff)"
	@echo "make data          restore the AOL tally if missing or damaged (it ships in data/; see README)"
	@echo "make lab           JupyterLab on the chapter notebooks (kernel ldp), on 127.0.0.1; LAB_ARGS='...' for more"
	@echo "make dist          sdist and wheel of ldp-heavy-hitters into dist/, checked (twine check, versions)"
	@echo "make rerun NB=06 QUICK=1 SET='epsilons=[1.0, 3.0] repetitions=2' [OUT=dir]"
	@echo "                   rerun one chapter with your values -> my-runs/NAME-HASH/"
	@echo "                   (= .venv/bin/python -m ldp rerun; list a chapter's parameters:"
	@echo "                   .venv/bin/python -m ldp rerun 06 --params)"
	@echo "make clean         remove _build/ and _generated/ (keeps .venv, node_modules)"
	@echo "make distclean     also remove .venv/, .venv-cff/, .venv-release/, dist/, node_modules/ and MathJax"

# --- set-up ----------------------------------------------------------------
# (Re)installs when requirements.txt or pyproject.toml change.
$(SETUP_STAMP): requirements.txt pyproject.toml
	@if [ ! -x "$(PY)" ]; then \
	    command -v "$(PYTHON)" >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required; set PYTHON=...)" >&2; exit 1; }; \
	    echo "[setup] creating $(VENV) with $(PYTHON)"; \
	    "$(PYTHON)" -m venv "$(VENV)"; \
	fi
	@echo "[setup] pip: the $$(grep -c '==' requirements.txt) pinned packages of requirements.txt into $(VENV)" \
	    "(numpy, scipy, numba, pandas, papermill, jupyter-book, pytest, ...; only missing or changed ones are installed)"
	@$(PIP_INSTALL_V) -r requirements.txt 2>&1 | $(PIP_FILTER)
	@echo "[setup] pip: the package itself, editable (pip install -e .: distribution ldp-heavy-hitters, import ldp)"
	@# a distribution named "ldp" here is either this package under its old name (before 0.2.0) or
	@# PyPI's unrelated ldp, which is also imported as ldp: either would shadow this one
	@$(PY) -m pip uninstall --disable-pip-version-check -y -q ldp 2>/dev/null || true
	@$(PIP_INSTALL) --no-deps -e . 2>&1 | { grep -v "$(PIP_NOISE)" || true; }
	@echo "[setup] registering the Jupyter kernel 'ldp' (this venv's Python) for the notebooks"
	@$(PY) -m ldp kernel >/dev/null  # ldp.book.rerun.ensure_kernel: the one kernel installation
	@echo "[setup] done"
	@touch $@

setup: $(SETUP_STAMP)

# The optional cluster extras (dask.distributed), installed for the test suite so the
# LocalCluster test really runs; `make book` does not need them.
CLUSTER_STAMP := $(VENV)/.ldp-cluster.stamp
$(CLUSTER_STAMP): requirements-cluster.txt $(SETUP_STAMP)
	@echo "[setup] pip: requirements-cluster.txt (dask.distributed, for the cluster test) into $(VENV)"
	@$(PIP_INSTALL_V) -r requirements-cluster.txt 2>&1 | $(PIP_FILTER)
	@touch $@

# The peer implementation the cross-check tests compare with (pure-LDP, pinned with the
# undeclared imports it needs); installed for the test suite only, like the cluster extras.
CROSSCHECK_STAMP := $(VENV)/.ldp-crosscheck.stamp
$(CROSSCHECK_STAMP): requirements-crosscheck.txt $(SETUP_STAMP)
	@echo "[setup] installing requirements-crosscheck.txt into $(VENV)"
	$(PIP_INSTALL) -r requirements-crosscheck.txt 2>&1 | { grep -v "$(PIP_NOISE)" || true; }
	@touch $@

# A small venv of its own for a tool whose pinned dependencies clash with the book's environment:
# $(call small_venv,VENV,REQUIREMENTS FILE,what it is for), the recipe of VENV's stamp file.
define small_venv
	@if [ ! -x "$(1)/bin/python" ]; then \
	    command -v "$(PYTHON)" >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required; set PYTHON=...)" >&2; exit 1; }; \
	    echo "[setup] creating $(1) with $(PYTHON)"; \
	    "$(PYTHON)" -m venv "$(1)"; \
	fi
	@echo "[setup] pip: $(2) ($(3)) into $(1)"
	$(1)/bin/python -m pip install --disable-pip-version-check --no-input --progress-bar off -q \
	    -r $(2) 2>&1 | $(PIP_FILTER)
	@touch $@
endef

# cffconvert (validates CITATION.cff): it pins jsonschema<4, which the book's environment
# (jsonschema 4, for nbformat and Jupyter Book) cannot use.
CFF_VENV ?= .venv-cff
CFF_STAMP := $(CFF_VENV)/.ldp-cff.stamp
$(CFF_STAMP): requirements-cff.txt
	$(call small_venv,$(CFF_VENV),requirements-cff.txt,cffconvert validates CITATION.cff)

# build and twine (make dist): twine's readme_renderer wants other docutils and markdown-it-py
# versions than the book's environment pins.
RELEASE_VENV ?= .venv-release
RELEASE_STAMP := $(RELEASE_VENV)/.ldp-release.stamp
$(RELEASE_STAMP): requirements-release.txt
	$(call small_venv,$(RELEASE_VENV),requirements-release.txt,build and twine make and check the release files)

# MathJax 3 from npm (pinned by package-lock.json), copied to book/_static/mathjax/.
$(MATHJAX_STAMP): package.json package-lock.json scripts/fetch_mathjax.sh
	bash scripts/fetch_mathjax.sh

mathjax: $(MATHJAX_STAMP)

# --- the book --------------------------------------------------------------
notebooks: setup
	$(PY) scripts/run_notebooks.py $(RUN_FLAGS)

html: setup mathjax
	$(VENV)/bin/jupyter-book build . -W -n --keep-going --all

book: setup mathjax
	@$(PY) -m ldp.datasets check aol >/dev/null || \
	    echo "[book] warning: building without the AOL data: chapters 06 and 08 leave AOL out (\`make data\` restores the file)" >&2
	$(PY) scripts/run_notebooks.py $(RUN_FLAGS)
	$(VENV)/bin/jupyter-book build . -W -n --keep-going --all
	@echo "[book] $$(cat _generated/MODE | tr -d '\n') build: open _build/html/index.html"

# The same executed notebooks as the HTML, through LaTeX (XeLaTeX, latexmk): TeX Live
# packages from Debian, see README "The PDF" and .ci/run. `make pdf` prints the reproduction a reader
# reads (_toc_pdf.yml: the chapters, the report, the interpretation, how to cite); the library
# reference is its own PDF, `make pdf-reference` (_toc_reference.yml), built apart in _build/reference/.
TEX_PACKAGES := texlive-xetex texlive-latex-extra texlive-fonts-recommended fonts-freefont-otf latexmk
define need_tex
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null || { \
	    echo "error: make $(1) needs XeLaTeX and latexmk. Debian/Ubuntu:" >&2; \
	    echo "  apt-get install --no-install-recommends $(TEX_PACKAGES)" >&2; exit 1; }
endef
# $(call latex_book,TOC,OUTPUT FOLDER (its _build/latex/ gets the PDF),PDF NAME): jupyter-book through XeLaTeX;
# latexmk -silent: XeLaTeX's page-by-page output goes to the log only; on an error, show it
define latex_book
	LATEXMKOPTS=-silent $(VENV)/bin/jupyter-book build . --toc $(1) --path-output $(2) --builder pdflatex \
	    -W -n --keep-going --all || { \
	    grep -A8 '^!' $(2)/_build/latex/$(3).log >&2 || true; \
	    echo "the PDF build failed; the LaTeX log is $(2)/_build/latex/$(3).log" >&2; exit 1; }
endef
pdf: setup
	$(call need_tex,pdf)
	@$(PY) -m ldp.datasets check aol >/dev/null || \
	    echo "[pdf] warning: building without the AOL data: chapters 06 and 08 leave AOL out (\`make data\` restores the file)" >&2
	$(PY) scripts/run_notebooks.py $(RUN_FLAGS)
	$(call latex_book,_toc_pdf.yml,.,ldp-book)
	@echo "[pdf] $$(cat _generated/MODE | tr -d '\n') build: _build/latex/ldp-book.pdf" \
	    "$$(pdfinfo _build/latex/ldp-book.pdf 2>/dev/null | awk '/^Pages:/ {print "(" $$2 " pages)"}')"

# The library reference alone (every public name of ldp, from its docstrings): no notebook runs.
pdf-reference: setup
	$(call need_tex,pdf-reference)
	$(call latex_book,_toc_reference.yml,_build/reference,ldp-reference)
	@echo "[pdf-reference] _build/reference/_build/latex/ldp-reference.pdf"

# The artifact appendix (USENIX Security's layout) as a standalone PDF: ldp.book.artifact writes its LaTeX from the
# claims registry and the manifests of the last builds (run `make book` first for the paper settings' times;
# a claim without a measured time is named on stderr), XeLaTeX compiles it. The book page is written by `make book`.
artifact: setup
	$(call need_tex,artifact)
	$(PY) -m ldp.book.artifact --out _build/artifact
	cd _build/artifact && latexmk -xelatex -silent -interaction=nonstopmode -halt-on-error artifact-appendix.tex \
	    >/dev/null || { grep -A8 '^!' artifact-appendix.log >&2 || true; \
	    echo "make artifact failed; the LaTeX log is _build/artifact/artifact-appendix.log" >&2; exit 1; }
	@echo "[artifact] _build/artifact/artifact-appendix.pdf"

# CITATION.cff against the Citation File Format schema
citation: $(CFF_STAMP)
	$(CFF_VENV)/bin/cffconvert --validate --infile CITATION.cff

# --- tests -----------------------------------------------------------------
# Static checks, configured in pyproject.toml: ruff (style and errors), mypy (types of ldp/),
# import-linter (the layer contract written in ldp/__init__.py; tests/test_layers.py runs it too),
# and the GitHub workflows, offline: GitHub's workflow schema (check-jsonschema's vendored copy)
# and zizmor's security audits (pinned actions, permissions, template injection, ...).
lint: setup
	$(VENV)/bin/ruff check ldp tests scripts benchmarks
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache --no-logo
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(VENV)/bin/zizmor --offline --no-progress .github/workflows

# The browser tests check the quick build, so it is made first. pytest's exit
# status is make's; "no tests collected" (status 5) is reported and fails.
# each phase's start is printed with the clock time, so a CI log shows where its minutes went
test: setup mathjax $(CLUSTER_STAMP) $(CROSSCHECK_STAMP) $(CFF_STAMP)
	@echo "[test] $$(date +%T) lint"
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory citation
	@echo "[test] $$(date +%T) the quick book"
	$(MAKE) --no-print-directory book QUICK=1 JOBS=$(JOBS)
	@echo "[test] $$(date +%T) the quick PDF"
	$(MAKE) --no-print-directory pdf QUICK=1 JOBS=$(JOBS)
	@echo "[test] $$(date +%T) pytest"
	@status=0; \
	$(PY) -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider --durations=30 $(PYTEST_ARGS) || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests; failing" >&2; fi; \
	echo "[test] $$(date +%T) pytest ended (status $$status)"; \
	exit $$status

# --- reruns ----------------------------------------------------------------
# make rerun NB=06 [QUICK=1] [SET='NAME=VALUE NAME=VALUE ...'] [OUT=dir]: python -m ldp rerun
# (passed through the environment, so SET may hold spaces, brackets and quotes)
rerun: export LDP_RERUN_NB := $(NB)
rerun: export LDP_RERUN_SET := $(SET)
rerun: export LDP_RERUN_OUT := $(OUT)
rerun: setup
	@if [ -z "$$LDP_RERUN_NB" ]; then \
	    echo "make rerun: name a chapter, e.g. make rerun NB=06 QUICK=1 SET='repetitions=2'" >&2; \
	    echo "chapters: $$(cd notebooks && ls *.ipynb | sed 's/\.ipynb$$//' | tr '\n' ' ')" >&2; exit 2; fi
	$(PY) -m ldp rerun "$$LDP_RERUN_NB" $(if $(call truthy,$(QUICK)),--quick) \
	    $${LDP_RERUN_SET:+--set "$$LDP_RERUN_SET"} $${LDP_RERUN_OUT:+--out "$$LDP_RERUN_OUT"}

# --- interactive reruns ------------------------------------------------------
# make lab: JupyterLab on the chapter notebooks (the sources in notebooks/), the kernel `ldp` (this
# venv's Python, registered by make setup), on 127.0.0.1 only, with a token. Figures a chapter
# saves go to my-runs/lab/figures (not the book's _generated/figures) and are also shown in the
# notebook. Nothing is fetched from elsewhere (no news, no update check, no extension
# manager's index). As root (a container, CI) it says --allow-root. More options:
# make lab LAB_ARGS='--no-browser --ServerApp.port=8899'
LAB_ARGS ?=
lab: export LDP_ROOT := $(CURDIR)
lab: export LDP_FIGURE_DIR := $(CURDIR)/my-runs/lab/figures
lab: export LDP_SHOW_FIGURES := 1
lab: export JUPYTER_PATH := $(CURDIR)/$(VENV)/share/jupyter
lab: setup
	@echo "[lab] JupyterLab on notebooks/ with the kernel ldp; stop it with Ctrl-C (twice) in this terminal"
	$(VENV)/bin/jupyter-lab --ServerApp.root_dir="$(CURDIR)/notebooks" --ServerApp.ip=127.0.0.1 \
	    --LabApp.news_url=None --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	    --LabApp.extension_manager=readonly $(if $(filter 0,$(shell id -u)),--ServerApp.allow_root=True) $(LAB_ARGS)

# --- releases ----------------------------------------------------------------
# make dist: the sdist and the wheel of ldp-heavy-hitters into dist/ (python -m build), checked
# by twine (--strict) and scripts/release_check.py (file names, contents, and the version agreed
# by pyproject.toml, ldp/__init__.py, CITATION.cff, .zenodo.json and CHANGELOG.md). The release
# workflow (.github/workflows/release.yml) runs this on a tag.
dist: $(RELEASE_STAMP)
	rm -rf dist
	$(RELEASE_VENV)/bin/python -m build --outdir dist .
	$(RELEASE_VENV)/bin/twine check --strict dist/*
	$(RELEASE_VENV)/bin/python scripts/release_check.py --dist dist

# --- data ------------------------------------------------------------------
# The AOL tally ships in data/; this restores it (download with pooch, sha256 verified) when
# it was deleted or damaged, or puts a copy in $LDP_DATA_DIR. A verified copy: nothing to do.
data: setup
	$(PY) -m ldp.datasets fetch aol

# --- cleaning --------------------------------------------------------------
clean:
	rm -rf _build _generated

distclean: clean
	rm -rf $(VENV) $(CFF_VENV) $(RELEASE_VENV) dist node_modules book/_static/mathjax .pytest_cache
