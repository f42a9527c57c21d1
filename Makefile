# Two entry points (see README): `make demo` and `make test`. Both create the virtual
# environment on first use, so a fresh clone needs nothing but Python 3.11+.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

.PHONY: install demo test lint bench
install: $(STAMP)

demo: $(STAMP)
	$(BIN)/toposolve compare --time-limit 20

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

test: $(STAMP) lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_heuristic.py
