# The two set-up commands are `make run` and `make test`; both create .venv on first use.
# Pass arguments to bothub with ARGS, e.g. `make chat ARGS="--chat work"`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
ARGS ?=

.PHONY: run chat onboard doctor test lint system-packages bench screenshots mutation clean

# Running needs only bothub's own dependencies; `make test` adds the dev extra (pytest, ruff, mypy, Playwright…).
$(STAMP): pyproject.toml
	@echo "==> first run: creating $(VENV) and installing bothub with what running needs (about a minute)"
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check --progress-bar on --upgrade pip
	$(BIN)/pip install --disable-pip-version-check --progress-bar on -e .
	touch $(STAMP)
	@echo "==> installed; the bothub command is $(BIN)/bothub (or run: source $(BIN)/activate)"

$(DEV_STAMP): $(STAMP)
	@echo "==> installing the test and lint tools (the dev extra)"
	$(BIN)/pip install --disable-pip-version-check --progress-bar on -e '.[dev]'
	touch $(DEV_STAMP)

run: $(STAMP)
	$(BIN)/bothub run $(ARGS)

chat: $(STAMP)
	$(BIN)/bothub chat $(ARGS)

onboard: $(STAMP)
	$(BIN)/bothub onboard

doctor: $(STAMP)
	$(BIN)/bothub doctor $(ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check bot adapters tests bench
	$(BIN)/mypy

system-packages:  # what the tests drive (PostgreSQL, bubblewrap, Chromium…): installed as root, else one line
	.ci/system-packages

# Two phases. The replica tests (several `bothub run` processes failing over on one PostgreSQL, timed by their
# heartbeats) run alone, one at a time: beside other tests on 2 cores they starved. The rest runs on two workers,
# one per core (pytest-xdist), a test file at a time (a file's tests share module fixtures, e.g. one browser page,
# and some build on the one before), each worker with its own throwaway PostgreSQL (tests/postgres.py). Coverage,
# child processes' included, is added up over both phases.
TEST_WORKERS ?= 2
test: system-packages lint
	$(BIN)/pytest -q -n 0 --cov --cov-report= --cov-fail-under=0 tests/replicas; replicas=$$?; \
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --cov --cov-append --cov-report=term:skip-covered \
		--ignore=tests/replicas; rest=$$?; \
	exit $$(( replicas || rest ))  # both phases run whatever the first found

# Mutation testing of the security-critical modules ([tool.mutmut] in pyproject.toml); MUTATE=path/to/module.py
# runs one of them. The score is killed / (killed + survived); `mutmut browse` shows each survivor.
mutation: $(DEV_STAMP)
	$(BIN)/mutmut run $(if $(MUTATE),"$(subst /,.,$(MUTATE:.py=)).*")
	$(BIN)/mutmut export-cicd-stats && cat mutants/mutmut-cicd-stats.json

bench: $(DEV_STAMP)
	$(BIN)/python -m bench

screenshots: $(DEV_STAMP)  # the browser tests, saving their pictures to docs/img/ for the README
	BOTHUB_SCREENSHOTS=1 $(BIN)/pytest -q tests/web

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage .coverage.* mutants .hypothesis
