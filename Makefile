# Linear Attention Lab. Two commands matter:
#   make serve   build the static site if needed and serve it on http://127.0.0.1:8000
#   make test    lint, unit and UI tests, then the built site in headless Chromium
# Everything installs itself: a virtual environment with the pinned packages, and on Debian as
# root what the system lacks from apt (python3-venv, nodejs for the build, a Chromium).

SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000
REQS   := requirements/pip.txt requirements/app.txt requirements/dev.txt requirements/build.txt
STAMP  := $(VENV)/.installed-$(shell cat $(REQS) | cksum | cut -d' ' -f1)
SOURCES := $(shell find sim ui site assets sitebuild -type f -not -name '*.pyc' 2>/dev/null) build.py pins.toml pyproject.toml
APT    := DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
ROOT_APT := [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null
# apt-get update unless the package lists are less than an hour old
APT_UPDATE := [ -n "$$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | head -1)" ] || apt-get update -qq
# Phase timings: a recipe's first line starts its clock, its last line adds "phase seconds" to TIMES.
TIMES  := .cache/phase-times
tick    = @mkdir -p .cache && date +%s%N > .cache/t-$(1)
tock    = @echo "$(1) $$(( ($$(date +%s%N) - $$(cat .cache/t-$(1))) / 1000000 ))" >> $(TIMES)
tick_sh = date +%s%N > .cache/t-$(1)
tock_sh = echo "$(1) $$(( ($$(date +%s%N) - $$(cat .cache/t-$(1))) / 1000000 ))" >> $(TIMES)

.PHONY: serve test test-slow build venv system browser axe lint unit e2e bench clean

serve: build
	$(PY) serve.py --port $(PORT)

# The suite in two lanes of the same tests (tests/conftest.py says which test is in which):
# `make test`, the gate, and `make test-slow`, what only repeats a path the gate takes, and every
# hypothesis property at its full count. tests/lane.sh runs a lane after the venv: the tests
# without a browser on two workers while the site builds and Chromium installs from apt, then
# lint (the gate) and the browser tests on two workers; it prints each phase's time, the lane's
# ten slowest tests, the tests each directory collected, and one closing line.
PYTEST := $(PY) -m pytest -q -p no:cacheprovider
test: venv
	@PY=$(PY) MAKE="$(MAKE)" bash tests/lane.sh gate

test-slow: venv
	@PY=$(PY) MAKE="$(MAKE)" bash tests/lane.sh slow

unit: venv
	$(PY) -m pytest -q tests/sim tests/ui tests/site_build tests/js

e2e: build browser axe
	$(PY) -m pytest -q -n 2 --dist worksteal tests/e2e

lint: venv
	$(PY) -m ruff check .

build: dist/site/index.html

dist/site/index.html: $(STAMP) $(SOURCES) | system
	$(call tick,build)
	$(PY) build.py
	$(call tock,build)

venv: $(STAMP)

$(STAMP): $(REQS) | system
	$(call tick,venv)
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements/pip.txt
# --no-compile: pip would compile every module of every package (17 s of the 24 here, most of
# it never imported); Python compiles what is imported, once, on first use.
	$(PY) -m pip install -q --no-compile -r requirements/dev.txt
	$(PY) -m pip install -q --no-compile --require-hashes --only-binary=:all: -r requirements/build.txt
	touch $@
	$(call tock,venv)

# What the build needs from the system, from apt in one call when missing (Debian, as root):
# a Python with venv, and Node.js, which runs the shipped Pyodide to compile the site's bytecode.
# npm is not needed for the build: it fetches its npm packages itself (KaTeX, and esbuild, which
# bundles the shell: pins.toml), verified against their pinned integrity.
system:
	@mkdir -p .cache
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "error: Python 3.11 or newer is needed as $(PYTHON) (found $$($(PYTHON) --version 2>&1))"; exit 2; }
	@need=""; \
	$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || need="$$need python3-venv"; \
	[ -n "$$LAB_NODE" ] || command -v node >/dev/null || command -v nodejs >/dev/null || need="$$need nodejs"; \
	if [ -z "$$need" ]; then :; \
	elif $(ROOT_APT); then \
	  echo "installing from apt:$$need"; $(call tick_sh,system); $(APT_UPDATE) && $(APT) $$need >/dev/null && \
	  $(call tock_sh,system); \
	else \
	  echo "missing:$$need (on Debian: apt-get install$$need)"; \
	  case "$$need" in *python3-venv*) exit 2;; esac; \
	  echo "without Node.js the site ships Python source, and starts slower"; \
	fi

# Debian's Chromium drives the browser tests (Playwright's own download is never used here).
# Without recommends: headless tests need neither its sandbox helper (--no-sandbox) nor the
# desktop extras; DejaVu gives the pages a font.
browser: | system
	$(call tick,browser)
	@if [ -n "$$LAB_CHROMIUM" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then :; \
	elif $(ROOT_APT); then \
	  echo "installing Chromium from apt"; \
	  $(APT_UPDATE) && $(APT) chromium fonts-dejavu-core >/dev/null; \
	else \
	  echo "No Chromium found. Install one (Debian: apt-get install chromium), set LAB_CHROMIUM=/path/to/chrome,"; \
	  echo "or, with internet access: $(PY) -m playwright install chromium"; exit 2; \
	fi
	$(call tock,browser)

# axe-core (accessibility checks of the live pages, tests/e2e/conftest.py; never shipped), pinned in
# tests/e2e/node/package-lock.json. Debian's nodejs/npm from apt when npm is missing.
AXE := tests/e2e/node/node_modules/axe-core/axe.min.js
axe: $(AXE)

$(AXE): tests/e2e/node/package.json tests/e2e/node/package-lock.json
	@command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; \
	  else echo "npm is needed for the accessibility tests (Debian: apt-get install npm)"; exit 2; fi; }
	npm ci --prefix tests/e2e/node --no-audit --no-fund
	touch $@

bench: build browser
	$(PY) bench/steps.py
	$(PY) bench/boot.py
	$(PY) bench/frames.py
	$(PY) bench/jank.py
	$(PY) bench/network.py
	$(PY) bench/scenes.py
	$(PY) bench/choices.py

clean:
	rm -rf dist .pytest_cache
