# The two set-up commands are `make run` and `make test`; both create .venv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run chat test lint bench clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/bothub run

chat: $(STAMP)
	$(BIN)/bothub chat

lint: $(STAMP)
	$(BIN)/ruff check bot adapters tests bench
	$(BIN)/mypy

test: lint
	PTB_TIMEDELTA=true $(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
