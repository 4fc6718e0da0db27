# Everything runs from a project-local virtual environment made from pyproject.toml.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test java-test demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

test: $(STAMP) java-test
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -q -p no:cacheprovider

# The phone side (android_stub/): compile the Java core, the Android glue against its signature
# stubs and the JUnit tests with javac --release 11, and run them. Offline: JUnit 5 comes from
# Debian's junit5 package or the Maven cache; only if both are missing is junit5 installed.
# The Java-vs-Python parity tests are part of pytest (tests/test_android_parity.py).
java-test:
	sh android_stub/tools/java_test.sh build/android_stub

demo: $(STAMP)
	$(VENV)/bin/stairsense demo

# Rerun every results page older than the code it measures, with the command on its first line.
bench: $(STAMP)
	$(PY) -m pip install -q -e '.[test,bench]'
	$(PY) benchmarks/stale.py --run

clean:
	rm -rf $(VENV) build *.egg-info
