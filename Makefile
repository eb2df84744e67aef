# qasper_rag: one entry point for setup, tests and the demo.
#   make demo   set up .venv from scratch (CPU torch first) and run the main job on the shared papers
#   make test   notebook tests (nbdev-test) and pytest, exactly what CI runs after its sync checks
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Shared QASPER sample beside the checkout; override with QASPER_SHARED=/path/to/qasper
QASPER_SHARED ?= $(abspath ../shared/data/qasper)
DATA ?= $(QASPER_SHARED)/original_format
PAPER ?= 1909.00694
# Extra pip arguments for torch, e.g. TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_PIP_ARGS ?=
export QASPER_SHARED

.PHONY: setup test test-nbs test-py demo sync-check clean-venv

setup:
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip
	@# torch 2.13.0 (CPU) first, so nothing later pulls a multi-GB CUDA build
	@$(BIN)/python -c "import torch" 2>/dev/null || { echo "installing torch 2.13.0 ..."; $(BIN)/python -m pip install -q "torch==2.13.0" $(TORCH_PIP_ARGS); }
	@echo "installing qasper-rag and its dependencies into $(VENV) ..."
	@$(BIN)/python -m pip install -q -e ".[dev]"
	@$(BIN)/python -c "import qasper_rag, torch; print('qasper-rag', qasper_rag.__version__, '| torch', torch.__version__)"

test: test-nbs test-py

test-nbs:
	$(BIN)/nbdev-test --n-workers 2

test-py:
	$(BIN)/pytest -q tests

demo: setup
	$(BIN)/qasper-rag chunks --data $(DATA)
	$(BIN)/qasper-rag chunks --data $(DATA) --paper $(PAPER) | head -n 40

# notebooks clean and the package in sync with them (what CI checks)
sync-check:
	$(BIN)/nbdev-clean && git diff --exit-code -- nbs
	$(BIN)/nbdev-export && git diff --exit-code -- qasper_rag && test -z "$$(git status --porcelain -- qasper_rag nbs)"

clean-venv:
	rm -rf $(VENV)
