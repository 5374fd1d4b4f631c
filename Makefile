# Everything runs from a local virtualenv in .venv, built with nothing but python3
# and the package index.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench browser clean agents test-agents install venv-check

# A .venv made by another Python (upgraded, removed, another machine's) has a broken
# interpreter link or another version: rebuild it instead of failing oddly later.
WANT_PY := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
HAVE_PY := $(shell $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
# The delete is a recipe (venv-check, a prerequisite only when stale), never run while
# the Makefile is read: `make -n` prints it and deletes nothing.
STALE_VENV :=
ifneq ($(wildcard $(VENV)),)
ifneq ($(WANT_PY),$(HAVE_PY))
STALE_VENV := venv-check
endif
endif

venv-check:
ifneq ($(STALE_VENV),)
	@echo ".venv was built by Python '$(HAVE_PY)' (missing or broken), not $(PYTHON)'s $(WANT_PY): rebuilding it"
	rm -rf $(VENV)
else
	@echo ".venv is missing or fits $(PYTHON) ($(WANT_PY)): nothing to do"
endif

$(BIN)/aidp: pyproject.toml $(STALE_VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

# The main job: this repository's own open backlog.
run: $(BIN)/aidp
	$(BIN)/aidp tasks list

test: $(BIN)/aidp
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The real agent CLIs (versions pinned in tests/agents/versions.toml), installed into
# $$AIDP_AGENTS_HOME (default .agents/). AGENTS_ARGS=--upgrade moves the pins to the latest.
agents: $(BIN)/aidp
	$(BIN)/python tests/agents/install.py $(AGENTS_ARGS)

# `aidp run --agent NAME` against each real CLI and a scripted model server on
# 127.0.0.1, with no network but loopback where the machine allows a network namespace
# (tests/agents/offline.sh). When the CLIs cannot be installed (no node/npm, no
# registry), it says why and skips (exit 0); any other install failure fails.
test-agents: $(BIN)/aidp
	@rc=0; $(BIN)/python tests/agents/install.py || rc=$$?; \
	if [ $$rc -eq 75 ]; then \
		echo "SKIPPED the real-agent suite: no agent CLI could be installed (reason above)"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; \
	else AIDP_REAL_AGENTS=1 tests/agents/offline.sh $(BIN)/python -m pytest -q tests/agents \
		$(PYTEST_ARGS); fi

# The headless browser that tests/browser/ drives (aidp report --html): Debian's
# chromium and the playwright package from PyPI, pointed at it (Playwright's own
# browser download is never used). apt-get needs root, or sudo.
browser: $(BIN)/aidp
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium; }
	$(BIN)/python -c 'import playwright' 2>/dev/null || \
	  $(BIN)/python -m pip install -q -e '.[test,browser]'

# `aidp` on your PATH, in an isolated environment of its own (PEP 668 keeps pip out of
# a system Python): pipx if it is there, else uv, else the hint.
install:
	@if command -v pipx >/dev/null 2>&1; then pipx install --force .; \
	elif command -v uv >/dev/null 2>&1; then uv tool install --force .; \
	else echo "make install needs pipx or uv (e.g. apt install pipx, or see README 'Install');" \
	  "or use $(BIN)/aidp after 'make run'"; exit 1; fi

bench: $(BIN)/aidp
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info
