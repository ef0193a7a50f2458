# The few commands everybody runs. Each one creates .venv and installs the project when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SESSION ?= sample_sessions/claude-code/overflow.jsonl

.PHONY: run test test-loaded lint bench bench-quick screenshots docs samples lock clean

# Installs from the lock (constraints.txt): the versions the tests and the snapshots were made with.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/ctxscope $(SESSION)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The suite runs in two processes per core (pytest-xdist): a third of its time is spent waiting
# for a frame, a child process or a socket, and a second worker per core fills it (on 2 cores:
# 5:50 with -n 2, 4:11 with -n 4). JOBS=1 runs it in this process.
JOBS ?= $(shell $(PYTHON) -c 'import os; print(2 * len(os.sched_getaffinity(0)))')
test: lint
	$(BIN)/python -m pytest -q -n $(JOBS)

# The suite beside two processes that keep a core busy each (started and stopped here), as on a
# loaded CI machine: no test may depend on the machine's speed. LOADED_RUNS=2 runs it twice;
# TESTS names the tests to run (default: all), e.g. the most timing-sensitive ones:
# make test-loaded TESTS="tests/tui/test_render_cache.py tests/tui/test_load_cancel.py tests/tui/test_load_preview.py"
LOADED_RUNS ?= 1
TESTS ?=
test-loaded: lint
	@$(BIN)/python -c 'while True: pass' & one=$$!; \
	$(BIN)/python -c 'while True: pass' & two=$$!; \
	trap 'kill $$one $$two 2>/dev/null' EXIT INT TERM; \
	status=0; for run in $$(seq $(LOADED_RUNS)); do \
	echo "== run $$run of $(LOADED_RUNS), beside two busy processes"; \
	$(BIN)/python -m pytest -q -n $(JOBS) $(TESTS) || { status=1; break; }; done; exit $$status

# Every benchmark at full size (the README's figures; analyze and the TUI at 10, 100 and 200 MB:
# tens of minutes). bench-quick: analyze and the TUI on 10 MB files, for day-to-day use. Both
# first compile the project's modules, as an installed copy has them: with
# PYTHONDONTWRITEBYTECODE set, each run would otherwise compile them again inside what it times.
# (a module whose name starts with _ is a helper the scripts import, not a benchmark)
bench: $(STAMP)
	@$(BIN)/python -m compileall -q core tui
	@status=0; for script in $$(ls bench/*.py | grep -v /_); do echo "== $$script"; $(BIN)/python $$script || status=1; done; \
	if [ $$status -ne 0 ]; then echo "some figures missed their bounds (see above)"; fi; exit $$status

bench-quick: $(STAMP)
	@$(BIN)/python -m compileall -q core tui
	@status=0; for script in bench/analyze.py bench/tui_app.py; do echo "== $$script --quick"; \
	$(BIN)/python $$script --quick || status=1; done; exit $$status

screenshots: $(STAMP)
	$(BIN)/python -m tools.screenshots

# The generated reference sections of README.md and docs/REPLAY_API.md (the tests fail when one
# is out of date).
docs: $(STAMP)
	$(BIN)/python -m tools.apidoc
	$(BIN)/python -m tools.export_readme
	$(BIN)/python -m tools.agents_readme

samples: $(STAMP)
	$(BIN)/python sample_sessions/generate.py

# Rewrite the lock from what .venv holds (after a deliberate upgrade: pip install -U PKG, make test).
lock: $(STAMP)
	{ sed -n '/^#/p' constraints.txt; $(BIN)/python -m pip freeze --all --exclude-editable \
	  --exclude ctxscope --exclude setuptools; } > constraints.txt.new && mv constraints.txt.new constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
