# The two commands of the README. Each creates .venv and installs the package with its test extra the first
# time (reused afterwards; re-installed when setup.py changes), then runs its job.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: train test

train: $(STAMP)
	$(PY) entry/train_gobigger.py $(ARGS)

test: $(STAMP)
	$(PY) -m pytest tests $(ARGS)

$(STAMP): setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --progress-bar off -e '.[test]'
	touch $(STAMP)
