# A fresh machine in two commands:  `make run` (the main job) and `make test` (the test suite).
# Each sets up only what is missing, so a second call goes straight to the work:
#   - the virtual environment, by install.sh, when it is missing or pyproject.toml/install.sh changed;
#   - the data: `biorab run` fetches what its job reads when no data folder is found (see
#     docs/datasets.md); `make test` fetches everything when neither ../shared/data nor
#     $BIORAB_DATA_DIR exists (from $BIORAB_DATA_MIRROR when it is set);
#   - the CPU model: `biorab run` converts the packaged GGUF once, on first use, and caches it.
VENV ?= .venv
PY := $(VENV)/bin/python
BIORAB := $(VENV)/bin/biorab
STAMP := $(VENV)/.biorab-installed
# Where `biorab data fetch` writes by default (biorab.common.paths.fetched_data_dir).
FETCHED := $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/biorab/data

.PHONY: run test

run: $(STAMP)
	$(BIORAB) run jobs/smoke.yaml

test: $(STAMP)
	@if [ -d ../shared/data ] || [ -n "$$BIORAB_DATA_DIR" ]; then \
		echo "$(PY) -m pytest -q"; $(PY) -m pytest -q; \
	else \
		echo "no ../shared/data and no \$$BIORAB_DATA_DIR: fetching the data into $(FETCHED)"; \
		$(BIORAB) data fetch && \
		BIORAB_DATA_DIR=$(FETCHED)/biorab BIORAB_DRUGMECHDB_DIR=$(FETCHED)/drugmechdb \
		BIORAB_DRUGMECHCF_DIR=$(FETCHED)/drugmechcf $(PY) -m pytest -q; \
	fi

# The stamp is newer than both inputs once install.sh has succeeded with them.
$(STAMP): pyproject.toml install.sh
	VENV=$(VENV) bash install.sh
	touch $@
