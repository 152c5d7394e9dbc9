# The commands of the README. Each creates .venv and installs the package with its test and ray extras the
# first time (reused afterwards; re-installed, which compiles the fast engine's Cython modules again, when setup.py,
# pyproject.toml, constraints.txt or those modules' source changes), then runs its job.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: train test docs

train: $(STAMP)
	$(PY) entry/train_gobigger.py $(ARGS)

test: $(STAMP)
	$(PY) -m pytest tests $(ARGS)

docs: $(STAMP)  # the config reference of docs/configuration.md, regenerated from the code
	$(PY) -m ppo_gobigger.config_reference --write docs/configuration.md

ENGINE_SOURCES := ppo_gobigger/envs/engine/balls.py ppo_gobigger/envs/engine/collision.py  # compiled (setup.py)

$(STAMP): setup.py pyproject.toml constraints.txt $(ENGINE_SOURCES)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --progress-bar off -c constraints.txt -e '.[test,ray]'
	touch $(STAMP)
