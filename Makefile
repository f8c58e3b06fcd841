# fa4-audit: two entry points for a fresh machine -- `make audit` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TE     ?= 2.20.2
FA4    ?= 4.0.0b11 newest
OUT    ?= audit-out
PYTEST_ARGS ?=

.PHONY: setup test audit bench clean

setup: $(STAMP)

# Rebuilt only when the project metadata changes; a second `make setup` is a no-op.
$(STAMP): pyproject.toml analyzer/__init__.py transcriptions/__init__.py fa4_patch/__init__.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first and pinned: the CPU build of 2.13.0 (an unpinned torch is a multi-GB CUDA build)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q -ra $(PYTEST_ARGS)

audit: $(STAMP)
	$(PY) -m analyzer make-audit --te $(TE) $(foreach f,$(FA4),--fa4 $(f)) --out $(OUT)

bench: $(STAMP)
	$(PY) -m analyzer.bench

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache
