# Everything runs from a local virtualenv in .venv, built with nothing but python3
# and the package index.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench clean

$(BIN)/aidp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

# The main job: this repository's own open backlog.
run: $(BIN)/aidp
	$(BIN)/aidp tasks list

test: $(BIN)/aidp
	$(BIN)/ruff check src tests bench
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(BIN)/aidp
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info
