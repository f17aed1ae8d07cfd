# Two commands from a fresh clone: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test-services demo test test-fast bench lint smoke clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/usersim demo --out runs/demo

# the services some tests need, set up on first run and only checked after that
# (scripts/test-services.sh): headless Chromium (Debian's chromium through apt-get, unless
# USERSIM_CHROMIUM names one or one is on PATH) and Arize Phoenix in its own venv, $(PHOENIX_VENV)
# (unless USERSIM_PHOENIX names a `phoenix` executable); the tests find it through USERSIM_PHOENIX
PHOENIX_VENV ?= .cache/phoenix-venv
USERSIM_PHOENIX ?= $(abspath $(PHOENIX_VENV))/bin/phoenix
test-services:
	PYTHON=$(PYTHON) PHOENIX_VENV=$(PHOENIX_VENV) bash scripts/test-services.sh

# the whole suite on every core (tests are independent; a module's fixtures stay on one worker).
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: every worker and every subprocess a
# test starts would otherwise compile (and assertion-rewrite) the whole package again.
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE USERSIM_PHOENIX=$(USERSIM_PHOENIX)
test: install test-services
	$(TEST_ENV) $(PY) -m pytest -n auto --dist loadscope

# everything but the tests marked slow (Ray, determinism across processes, the C5 gradient, fuzzing)
test-fast: install test-services
	$(TEST_ENV) $(PY) -m pytest -n auto --dist loadscope -m "not slow"

# the `bench` extra (openevals); if it cannot be installed the bench records null with the reason
bench: install
	-$(PY) -m pip install -q -e '.[dev,bench]'
	$(PY) bench/run.py

# ruff (pinned in pyproject), the import-layer contract (pyproject [tool.importlinter]) and mypy
# (pinned; strict for core, the gate and the record path: pyproject [tool.mypy])
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# the wheel in a fresh venv outside the checkout, beside the index's `judges` and `adapters`
smoke:
	bash .ci/wheel-smoke

clean:
	rm -rf $(VENV) runs .usersim_cache .pytest_cache
