# Two commands from a fresh clone: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/usersim demo --out runs/demo

test: install
	$(PY) -m pytest

bench: install
	$(PY) bench/run.py

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) runs .usersim_cache .pytest_cache
