# Two commands do all the set-up on a fresh machine (Python 3.11+, nothing else):
#   make demo   ingest the sample knowledge base and answer two questions, embedded, no key
#   make test   lint, type-check and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint install clean bench-retrieval bench-scale bench-agent bench-slack bench-team bench-discord bench-http bench-sync bench-keyword-live bench-answers

$(BIN)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "teamrag needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@

install: $(BIN)/.installed

# The sample company lives in its own data folder: a team's own folder (.teamrag, or
# TEAMRAG_DATA_DIR) starts empty, so its answers never quote the samples.
DEMO_DATA ?= .teamrag-demo
demo: $(BIN)/.installed
	TEAMRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/teamrag ingest samples/kb
	TEAMRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/teamrag ask "Postgres 백업은 며칠 동안 보관되나요?"
	TEAMRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/teamrag ask "When and where is the on-call handover?"
	TEAMRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/teamrag ask "Where do personal parcels go?"

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy

# Two pytest workers, one test file each at a time (a file's module fixtures start once):
# most tests wait on processes and sockets, so two halve the wall time even on 2 cores.
test: lint
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

bench-retrieval: $(BIN)/.installed
	$(BIN)/python benchmarks/retrieval.py

bench-scale: $(BIN)/.installed
	$(BIN)/python benchmarks/scale.py

bench-agent: $(BIN)/.installed
	$(BIN)/python benchmarks/agent_latency.py

bench-slack: $(BIN)/.installed
	$(BIN)/python benchmarks/slack_load.py

bench-team: $(BIN)/.installed
	$(BIN)/python benchmarks/team_load.py

bench-discord: $(BIN)/.installed
	$(BIN)/python benchmarks/discord_load.py

bench-http: $(BIN)/.installed
	$(BIN)/python benchmarks/http_load.py

bench-sync: $(BIN)/.installed
	$(BIN)/python benchmarks/sync.py

bench-keyword-live: $(BIN)/.installed
	$(BIN)/python benchmarks/keyword_live.py

# The team handbook, KorQuAD, XQuAD and the sample sets through teamrag eval (no LLM);
# needs ../shared/data/handbook beside the repository and says so when it is missing.
bench-answers: $(BIN)/.installed
	$(BIN)/python benchmarks/answers.py

clean:
	rm -rf $(VENV) .teamrag .teamrag-demo .pytest_cache .mypy_cache .ruff_cache
