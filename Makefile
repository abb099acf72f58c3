# lineage-warehouse. Needs Java 17 and Python 3.11 on PATH; everything else goes into .venv.
#   make run    set up .venv and run the extraction job on the embedded default (sample logs)
#   make test   set up .venv and run every test (unit + Spark/Delta)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
ARGS   ?=

# spark-submit ignores spark.jars.packages set in code: it reads conf/spark-defaults.conf here.
export SPARK_CONF_DIR := $(CURDIR)/conf
# driver and local workers use the venv interpreter (lineage_udfs, sqlglot, pandas)
export PYSPARK_PYTHON := $(CURDIR)/$(PY)
export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)
# Extra Maven repositories for the packages (comma-separated URLs): a company's artifact mirror,
# or the local repository ../shared/maven when it exists (it serves GraphFrames where Maven
# Central does not). spark-submit gets them as --repositories; the session builder and the test
# session read the environment variable. Empty: Maven Central only.
SHARED_MAVEN := $(abspath $(CURDIR)/../shared/maven)
LINEAGE_MAVEN_REPOSITORIES ?= $(if $(wildcard $(SHARED_MAVEN)/io),file://$(SHARED_MAVEN))
export LINEAGE_MAVEN_REPOSITORIES
SUBMIT := $(VENV)/bin/spark-submit $(if $(LINEAGE_MAVEN_REPOSITORIES),--repositories $(LINEAGE_MAVEN_REPOSITORIES))

.PHONY: venv run run-python sql maintain test-maintain bench-serve graph explore test test-fast test-deps test-engine engine-diff analyze-graph bench-graph bench-small bench-hostile lint sample clean-warehouse

$(VENV)/.installed: pyproject.toml scripts/install.sh
	scripts/install.sh --python $(PYTHON) --venv $(VENV) --extras spark,emit,cli,dev --editable
	touch $@

venv: $(VENV)/.installed

run: venv  ## spark-submit jobs/extract.py [--config conf/X.yaml ...] via ARGS="..."
	$(SUBMIT) jobs/extract.py $(ARGS)

run-python: venv  ## the same job, with pyspark starting the JVM itself
	$(PY) jobs/extract.py $(ARGS)

sql: venv  ## SQL over the lineage tables by plain name: make sql Q="SELECT * FROM table_closure" [ARGS="--config conf/X.yaml"]
	@# Q reaches the job through the environment (make exports command-line variables): a
	@# multi-line Q expanded into this line would be run as several shell commands.
	$(SUBMIT) jobs/query.py --sql-env Q $(ARGS)

maintain: venv  ## Z-order / compact and vacuum the lineage tables (keeps 30 days of time travel): ARGS="--retain-hours 1440"
	$(SUBMIT) jobs/maintain.py $(ARGS)

test-maintain: venv  ## the maintenance job on the sample and on a generated warehouse: every lineage answer unchanged (CI)
	$(PY) -m pytest tests/spark/cli/test_maintain_sample.py tests/spark/cli/test_generated_warehouse.py -q

bench-serve: venv  ## lineage answers on the graph benchmark's warehouses (build them first: bench/graph_bench.py --sizes 100k 1m --no-reference); writes bench/results/serve.{json,md}
	$(PY) bench/serve_bench.py --warehouse bench/data/warehouse-100k --label after
	$(PY) bench/serve_bench.py --warehouse bench/data/warehouse-1m --label after

analyze-graph: venv  ## the graph stage alone (GraphFrames): ARGS="--full-refresh" or ARGS="--path A B"
	$(SUBMIT) jobs/analyze_graph.py $(ARGS)

explore: venv  ## the lineage explorer on http://127.0.0.1:8765/ after make run (ARGS="--port N --config conf/X.yaml")
	$(VENV)/bin/lineage serve $(ARGS)

T ?= reports.daily_revenue
graph: venv  ## the upstream graph of T (default reports.daily_revenue) as lineage-graph.html, after make run
	$(VENV)/bin/lineage upstream $(T) --html lineage-graph.html $(ARGS)

test-deps:  ## system packages the CLI tests need (Debian/Ubuntu, as root): Chromium and its driver, Graphviz
	command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v dot >/dev/null || \
	  { apt-get update && apt-get install -y --no-install-recommends chromium chromium-driver graphviz; }

TEST_PROCESSES ?= 2
test: venv test-deps  ## all tests: unit, doctests of the core, Spark + Delta (pyproject's testpaths; the engine slice: test-engine)
	$(PY) -m pytest -m "not engine" -n $(TEST_PROCESSES) --dist loadfile

test-engine: venv  ## the parser against Spark's own lineage (OpenLineage listener jar from Maven)
	$(PY) -m pytest -m engine tests/engine

engine-diff: venv  ## the full differential run; writes bench/results/engine_diff.{md,json}
	$(PY) bench/engine_diff.py --json bench/results/engine_diff.json --report bench/results/engine_diff.md

bench-small: venv  ## fixed cost of small and no-op runs (builds a 1M-row warehouse once under bench/data/small: hours on 2 cores); records the scenarios in bench/results/small_runs.json, renders small_runs.md from it
	$(PY) bench/small_runs.py build
	$(PY) bench/small_runs.py scenarios --label now
	$(PY) bench/small_runs.py record scenarios --labels now
	$(PY) bench/small_runs.py report

bench-hostile: venv  ## the job on 100k generated hostile rows (about 30 min on 2 shared cores; its files under bench/data/hostile); writes bench/results/hostile.{json,md}, fails when a row is not accounted for, a task failed, a secret was found or a table could not be checked
	$(PY) bench/hostile_bench.py --rows 100000 --out bench/data/hostile \
	    --json bench/results/hostile.json --report bench/results/hostile.md

test-fast: venv  ## no Spark
	$(PY) -m pytest -m "not spark and not engine"

lint: venv  ## ruff, the import contracts (layers: core < emit < settings < spark), mypy over lineage_udfs and jobs
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

bench-graph: venv  ## the graph benchmark (GraphFrames vs networkx): make bench-graph ARGS="--sizes 10k 100k"
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/graph_bench.py $(ARGS)

sample: venv  ## regenerate data/sample/ (deterministic)
	$(PY) scripts/make_sample_log.py

clean-warehouse:
	rm -rf warehouse

# The job as users ship it to a cluster (docs/deploy.md): the wheel and the packed Python
# environment for spark-submit --archives dist/lineage-warehouse-env.tar.gz#environment.
.PHONY: dist
dist: venv  ## the wheel and the packed environment (venv-pack, no pyspark) into dist/
	scripts/pack_env.sh --venv $(VENV) --out dist

# The job on a Spark standalone cluster: a master and two workers (one core, 2 GiB each) on
# 127.0.0.1, started from the installed pyspark by the tests and stopped by PID (tests/cluster).
# Not part of `make test`.
.PHONY: test-cluster
test-cluster: venv  ## the job submitted to a real standalone cluster of two workers (tests/cluster)
	$(PY) -m pytest -m cluster --durations=15 tests/cluster

# Integration tests against a real Marquez (../shared/services/marquez, or MARQUEZ_URL) and a real
# Kafka broker (scripts/kafka/kafka.sh); the fixtures start and stop them. Not part of `make test`.
$(VENV)/.installed-kafka: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[spark,emit,dev,kafka]'
	touch $@

.PHONY: test-integration integration-deps
integration-deps:  ## the PostgreSQL server of the live JDBC test (Debian/Ubuntu packages, as root)
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || \
	  { apt-get update && apt-get install -y --no-install-recommends postgresql; }

test-integration: $(VENV)/.installed-kafka integration-deps  ## real Marquez + Kafka round trips, live PostgreSQL over JDBC (tests/integration)
	$(PY) -m pytest -m integration -s tests/integration

sample-freshness: venv  ## regenerate data/freshness/ (the revenue sample of docs/freshness.md; deterministic)
	$(PY) scripts/make_freshness_log.py
