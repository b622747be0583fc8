# anycdc developer entry points.
#
#   make setup       venv + pinned Python packages, Spark jars, Kafka broker jars, schema registry (idempotent)
#   make test        setup, then the pytest suite (Spark, Kafka, Delta included) but `slow`
#   make test-slow   the slow tests: a standalone cluster, the wheel installed, a rename killed
#   make test-fast   pure-Python tests only (no JVM)
#   make demo        setup, then a small end-to-end run (Kafka -> Spark -> Delta)
#   make bench       the pipeline vs. the copy floor (1M events, 50 tables); bench-decode: formats;
#                    bench-reads: fresh reads of a 1M-row table, a consistent read of 50 tables
#   make soak        50 kill -9 on a 30k-event stream, then 10M events over 200 tables; verify each
#   make lint        ruff + mypy
#   make kafka-start / kafka-stop / kafka-status   the project's own local Kafka broker
#   make clean       build outputs and local data (keeps .venv); make distclean also drops .venv
#
# Every step of `setup` is guarded by a stamp file, so the second run only checks mtimes:
#   .venv/.anycdc-installed   newer than pyproject.toml  -> Python packages are current
#   .build/jars.stamp         newer than jvm/pom.xml      -> Spark jars are current
#   .build/kafka-libs.stamp   newer than jvm/kafka-broker/pom.xml -> Kafka jars are current
#   .build/schema-registry.stamp newer than jvm/schema-registry/pom.xml -> the registry is current

SHELL := /bin/bash
.DEFAULT_GOAL := setup
.DELETE_ON_ERROR:

PYTHON ?= $(or $(shell command -v python3.11 2>/dev/null),python3)
VENV ?= .venv
PY := $(VENV)/bin/python
MVN ?= mvn
MVN_SETTINGS ?= jvm/maven-settings.xml
MVN_FLAGS ?= -q -B
BUILD := .build
STEP := bash scripts/step.sh
RUN_PYTEST := bash scripts/run-pytest.sh
PYTEST_ARGS ?=
# make test / test-fast run the test files on this many worker processes, each with
# its own Spark session and Kafka broker (pytest-xdist, --dist loadfile: a file's tests stay
# together and share their fixtures). On 2 cores, 2 workers fill the CPU a Spark test leaves
# idle between its small jobs: the suite ran ~1.3x faster. TEST_WORKERS=0 runs in one process.
# Files go out in collection order (--no-loadscope-reorder; xdist's default sends the files
# with most tests first): the long kill -9 test in tests/faults starts at once, the many
# short pure tests of tests/unit fill the end.
TEST_WORKERS ?= 2
WORKERS := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
FAST_MARKERS := not spark and not kafka and not faults

PY_STAMP := $(VENV)/.anycdc-installed
JARS_STAMP := $(BUILD)/jars.stamp
KAFKA_STAMP := $(BUILD)/kafka-libs.stamp
REGISTRY_STAMP := $(BUILD)/schema-registry.stamp

.PHONY: setup venv jars kafka-libs schema-registry test test-fast test-infra demo bench bench-decode bench-reads soak lint \
        kafka-start kafka-stop kafka-status clean distclean help

help:
	@sed -n '2,14p' Makefile | sed 's/^# \{0,1\}//'

setup: $(PY_STAMP) $(JARS_STAMP) $(KAFKA_STAMP) $(REGISTRY_STAMP)
	@echo "setup: ready (python: $(PY), spark jars: $(BUILD)/jars, kafka: $(BUILD)/kafka-libs, schema registry: $(BUILD)/schema-registry)"

venv: $(PY_STAMP)
jars: $(JARS_STAMP)
kafka-libs: $(KAFKA_STAMP)
schema-registry: $(REGISTRY_STAMP)

$(VENV)/bin/python:
	@$(STEP) "create the virtualenv $(VENV) with $(PYTHON)" \
	  "install Python 3.11 so that '$(PYTHON)' is on PATH, or run 'make setup PYTHON=/path/to/python3.11'" \
	  $(PYTHON) -m venv $(VENV)

$(PY_STAMP): pyproject.toml | $(VENV)/bin/python
	@$(STEP) "install anycdc (editable) with its pinned [spark,dev] extras into $(VENV) (first time: pyspark is a 430 MB download)" \
	  "check that PyPI is reachable ('$(PY) -m pip config list'), read pip's error above, then rerun 'make setup'" \
	  $(PY) -m pip install --disable-pip-version-check -q -e ".[spark,dev]"
	@touch $@

$(JARS_STAMP): jvm/pom.xml $(MVN_SETTINGS) $(PY_STAMP)
	@rm -rf $(BUILD)/jars
	@$(STEP) "fetch the Spark jars (Kafka source, Avro, Delta) from Maven Central into $(BUILD)/jars" \
	  "check 'mvn -v' (Maven 3.8+, Java 17) and that Maven Central is reachable; rerun with 'make setup MVN_FLAGS=-B' to see Maven's log" \
	  env MVN="$(MVN)" MVN_FLAGS="$(MVN_FLAGS)" MVN_SETTINGS="$(MVN_SETTINGS)" bash scripts/mvn-copy.sh jvm/pom.xml
	@$(STEP) "drop the jars pyspark already ships (pyspark/jars wins, no duplicate classes)" \
	  "pyspark must be installed in $(VENV): run 'make venv' (or delete $(PY_STAMP)) and retry" \
	  $(PY) -m anycdc.spark.jars prune
	@touch $@

$(KAFKA_STAMP): jvm/kafka-broker/pom.xml $(MVN_SETTINGS)
	@rm -rf $(BUILD)/kafka-libs
	@$(STEP) "fetch the Kafka broker jars (kafka_2.13 + log4j2) from Maven Central into $(BUILD)/kafka-libs" \
	  "check 'mvn -v' (Maven 3.8+, Java 17) and that Maven Central is reachable; rerun with 'make setup MVN_FLAGS=-B' to see Maven's log" \
	  env MVN="$(MVN)" MVN_FLAGS="$(MVN_FLAGS)" MVN_SETTINGS="$(MVN_SETTINGS)" bash scripts/mvn-copy.sh jvm/kafka-broker/pom.xml
	@touch $@

$(REGISTRY_STAMP): jvm/schema-registry/pom.xml $(MVN_SETTINGS)
	@rm -rf $(BUILD)/schema-registry
	@$(STEP) "fetch Apicurio Registry (a Confluent-compatible schema registry, for the debezium-avro tests) from Maven Central into $(BUILD)/schema-registry" \
	  "check 'mvn -v' (Maven 3.8+, Java 17) and that Maven Central is reachable; rerun with 'make setup MVN_FLAGS=-B' to see Maven's log" \
	  env MVN="$(MVN)" MVN_FLAGS="$(MVN_FLAGS)" MVN_SETTINGS="$(MVN_SETTINGS)" bash scripts/mvn-copy.sh jvm/schema-registry/pom.xml copy
	@$(STEP) "unpack the registry (runner jar + lib/)" \
	  "the download may be damaged: delete $(BUILD)/schema-registry and rerun 'make setup'" \
	  tar -xzf $(BUILD)/schema-registry/apicurio-registry-app-*-all.tar.gz -C $(BUILD)/schema-registry
	@rm -f $(BUILD)/schema-registry/apicurio-registry-app-*-all.tar.gz
	@touch $@

# The whole suite but the `slow` tests (test-slow). ANYCDC_REQUIRE_INFRA=1 turns "pyspark /
# java / kafka jars missing" from a skip into a failure, so a broken setup can't pass as green.
# --timing-by-marker prints the time spent per marker group (tests/fixtures_infra.py).
test: setup
	@echo "==> pytest: the whole suite but the slow tests (make test-slow)"
	@ANYCDC_REQUIRE_INFRA=1 $(RUN_PYTEST) $(PY) -m "not slow" $(WORKERS) --timing-by-marker $(PYTEST_ARGS)

# The long end-to-end tests, each in JVMs of its own: a standalone Spark cluster, the built
# wheel installed outside the checkout, a kill -9 between a column rename and its rows, the
# kill -9 run that applies beside ingest.
test-slow: setup
	@echo "==> pytest: the slow tests (-m slow)"
	@ANYCDC_REQUIRE_INFRA=1 $(RUN_PYTEST) $(PY) -m slow --timing-by-marker $(PYTEST_ARGS)

test-fast: $(PY_STAMP)
	@echo "==> pytest: pure tests only (-m \"$(FAST_MARKERS)\")"
	@$(RUN_PYTEST) $(PY) -m "$(FAST_MARKERS)" $(WORKERS) --timing-by-marker $(PYTEST_ARGS)

test-infra: setup
	@echo "==> pytest: infrastructure tests (tests/infra)"
	@ANYCDC_REQUIRE_INFRA=1 $(RUN_PYTEST) $(PY) tests/infra --timing-by-marker $(PYTEST_ARGS)

demo: setup
	$(PY) -m anycdc.demo

bench-decode: $(PY_STAMP)
	$(PY) -m anycdc.bench.decode

bench-reads: setup
	$(PY) -m anycdc.bench.reads --rows 1000000 --rounds 5
	$(PY) -m anycdc.bench.reads --tables 50 --rows 20000 --files 2 --pending 0.01 --rounds 3

bench: setup
	$(VENV)/bin/anycdc bench $(BENCH_ARGS)

# ~2 h on a 2-core laptop; SOAK_ARGS="--phase kills" or "--events 1000000 --tables 50" for less
soak: setup
	$(PY) -m anycdc.bench.soak $(SOAK_ARGS)

lint: $(PY_STAMP)
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy

kafka-start: setup
	$(PY) -m anycdc.devtools.kafka start

kafka-stop:
	@if [ -x $(PY) ]; then $(PY) -m anycdc.devtools.kafka stop; else echo "no $(VENV): nothing to stop"; fi

kafka-status: $(PY_STAMP)
	$(PY) -m anycdc.devtools.kafka status

clean: kafka-stop
	rm -rf $(BUILD) var .pytest_cache .mypy_cache .ruff_cache .hypothesis spark-warehouse metastore_db derby.log

distclean: clean
	rm -rf $(VENV)
