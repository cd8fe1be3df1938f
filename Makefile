# Two entry points for readers: `make book` (build the HTML book) and `make test` (everything CI runs).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PYTHONHASHSEED := 0
JOBS ?= 2
# Tests and chapters run in JOBS processes, which fill the cores: each evaluates the search's
# blocks on one thread (the same results as on two; two threads each would only contend).
ONE_THREAD := INFERENCE_MATH_THREADS=1

.PHONY: bench help venv book pdf executed test unit lint nbval book-strict test-browser clean lock

help:
	@echo "make book   - set up .venv, execute every chapter, build the HTML book"
	@echo "make test   - set up .venv, unit/property tests, ruff, chapters under nbval, strict book build, browser"
	@echo "make venv   - only set up .venv: the pinned packages (requirements.txt) and the library, editable"
	@echo "make unit   - the unit and property tests (pytest, $(JOBS) workers; not the browser test)"
	@echo "make lint   - ruff on the library and the tests"
	@echo "make nbval  - every chapter run cell by cell in a clean kernel; its outputs become the book's cache"
	@echo "make executed - the chapters' outputs for the present sources (nbval only if they are stale)"
	@echo "make book-strict - the book with every Sphinx warning an error"
	@echo "make test-browser - the built site in headless Chromium (builds it first if missing)"
	@echo "make pdf    - the book as a PDF through LaTeX (installs TeX Live from Debian; slower)"
	@echo "make bench  - CPU time of the 35 canonical frontiers; the side-by-side speed-up"
	@echo "make lock   - re-pin requirements.txt from the current .venv"
	@echo "make clean  - remove _build (the built book, the executed chapters, caches)"
	@echo "make help   - this list"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

# Chapters import inference_math, which Sphinx's cache does not track: every build starts clean.
# The chapters' outputs come from `executed` (below), never from an older run.
CLEAN_BUILD := rm -rf _build/html _build/jupyter_execute _build/.doctrees
# Frontiers computed by one chapter execution are reused by the next (nbval, then the book build);
# the key includes a digest of the library's source and data, so a code change recomputes.
CACHE := INFERENCE_MATH_CACHE=$(CURDIR)/_build/cache

book: executed
	$(CLEAN_BUILD)
	$(CACHE) $(BIN)/jupyter-book build . --builder html
	@echo "The book is at $(CURDIR)/_build/html/index.html"

unit: $(STAMP)
	$(ONE_THREAD) $(BIN)/pytest -q -n $(JOBS) tests --ignore=tests/browser

lint: $(STAMP)
	$(BIN)/ruff check inference_math tests

# Every chapter runs cell by cell in a clean kernel (converted copies, never in place), two at a
# time. The notebooks nbval ran, with their outputs, become the book builds' notebook cache, so no
# build executes a chapter again (inference_math.book.executed).
nbval: $(STAMP)
	rm -rf _build/nbval _build/executed _build/cache _build/.jupyter_cache && mkdir -p _build/nbval
	for f in $$(grep -l '^kernelspec:' book/*.md); do \
	  $(BIN)/jupytext --quiet --to ipynb --output _build/nbval/$$(basename $$f .md).ipynb $$f; \
	done
	$(CACHE) $(ONE_THREAD) $(BIN)/pytest -q -n $(JOBS) --dist loadfile --nbval-lax --nbval-current-env \
	  --nbval-cell-timeout=600 -p no:python -p no:cacheprovider -p inference_math.book.executed \
	  _build/nbval
	$(BIN)/python -m inference_math.book.executed prime

# The chapters' outputs for the present sources: nbval runs only if the cache is missing or stale.
executed: $(STAMP)
	$(BIN)/python -m inference_math.book.executed fresh || $(MAKE) --no-print-directory nbval

# The book again, with every Sphinx warning (missing glue key, bad reference, ...) an error.
book-strict: executed
	$(CLEAN_BUILD)
	$(CACHE) $(BIN)/jupyter-book build . --builder html -W -n --keep-going

# The book as a PDF: jupyter-book's LaTeX builder, run by xelatex (the prose has Unicode that
# pdflatex cannot set) through latexmk. Debian's TeX Live packages are installed when missing.
TEX_PACKAGES := latexmk texlive-xetex texlive-latex-extra texlive-fonts-recommended \
	fonts-freefont-otf
# jupyter-book's LaTeX class loads bbm.sty (blackboard-bold macros the book never uses), which
# Debian ships only in texlive-fonts-extra (a 500 MB download): a stand-in maps \mathbbm to \mathbb.
TEX_STANDIN := _build/texinputs

pdf: executed
	dpkg -s $(TEX_PACKAGES) >/dev/null 2>&1 || { $(SUDO) apt-get update && \
	  $(SUDO) apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 $(TEX_PACKAGES); }
	rm -rf _build/latex $(TEX_STANDIN) _build/jupyter_execute _build/.doctrees
	mkdir -p $(TEX_STANDIN)
	kpsewhich bbm.sty >/dev/null || printf '%s\n' '\ProvidesPackage{bbm}' \
	  '\providecommand\mathbbm{\mathbb}' > $(TEX_STANDIN)/bbm.sty
	$(CACHE) TEXINPUTS=$(CURDIR)/$(TEX_STANDIN): $(BIN)/jupyter-book build . --builder pdflatex
	@echo "The PDF is at $(CURDIR)/_build/latex/book.pdf"

# A benchmark, not a test: prints CPU seconds and quotes the speed-up over the original code
# measured side by side on one machine (data/erdil_code/timings_side_by_side.json).
bench: $(STAMP)
	$(BIN)/python -m inference_math.analysis.bench

# The built site in Debian's Chromium, headless, driven by Playwright (its own browser download is
# never used). In `make test` the strict build has just made the site; alone, it is built if missing.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 chromium

test-browser: $(STAMP) $(CHROMIUM)
	[ -f _build/html/index.html ] || $(MAKE) --no-print-directory book
	$(BIN)/pytest -q -p no:cacheprovider tests/browser

test: lint unit nbval book-strict test-browser
	@echo "make test: all checks passed"

# Re-pin requirements.txt from the current .venv (after installing or upgrading something in it).
lock: $(STAMP)
	head -n 2 requirements.txt > requirements.lock.tmp
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^inference-math' >> requirements.lock.tmp
	mv requirements.lock.tmp requirements.txt

clean:
	rm -rf _build
