# Linear Attention Lab. Two commands matter:
#   make serve   build the static site if needed and serve it on http://127.0.0.1:8000
#   make test    lint, unit and UI tests, then the built site in headless Chromium
# Everything installs itself: a virtual environment with the pinned packages, and on Debian as
# root a Chromium from apt when none is found.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000
STAMP  := $(VENV)/.installed-$(shell cat requirements/app.txt requirements/dev.txt | cksum | cut -d' ' -f1)
SOURCES := $(shell find sim ui site assets -type f -not -name '*.pyc' 2>/dev/null) build.py pins.toml

.PHONY: serve test build venv browser axe lint unit e2e bench clean

serve: build
	$(PY) serve.py --port $(PORT)

test: build browser axe
	$(PY) -m ruff check .
	$(PY) -m pytest -q -p no:cacheprovider tests

unit: venv
	$(PY) -m pytest -q tests/sim tests/ui

e2e: build browser axe
	$(PY) -m pytest -q tests/e2e

lint: venv
	$(PY) -m ruff check .

build: dist/site/index.html

dist/site/index.html: $(STAMP) $(SOURCES)
	$(PY) build.py

venv: $(STAMP)

$(STAMP): requirements/app.txt requirements/dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "error: Python 3.11 or newer is needed as $(PYTHON) (found $$($(PYTHON) --version 2>&1))"; exit 2; }
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; \
	  else echo "error: $(PYTHON) lacks venv/ensurepip (on Debian: apt-get install python3-venv)"; exit 2; fi; }
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/dev.txt
	touch $@

# Debian's Chromium drives the browser tests (Playwright's own download is never used here).
browser: venv
	@if [ -n "$$LAB_CHROMIUM" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Chromium from apt"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; \
	else \
	  echo "No Chromium found. Install one (Debian: apt-get install chromium), set LAB_CHROMIUM=/path/to/chrome,"; \
	  echo "or, with internet access: $(PY) -m playwright install chromium"; exit 2; \
	fi

# axe-core (accessibility checks in tests/e2e/test_screens.py only; never shipped), pinned in
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

clean:
	rm -rf dist .pytest_cache
