"""Cited question answering over QASPER research papers, with a careful evaluation suite

Modules:

- `qasper_rag.answer.answer`: Retrieve, prompt, generate, parse and check: one record per question with the answer, its citations and the passages they point to.
- `qasper_rag.answer.answering`: A sentence can hold at its passage and still not answer the question: a judge of whether a shown sentence states what was asked, fitted on the train papers' labels.
- `qasper_rag.answer.entailment`: The protocol every judge of a claim follows (does the premise entail the hypothesis?), the offline lexical judge, and what a bare Yes or No claims.
- `qasper_rag.answer.judges`: Who decides whether a cited passage supports a claim: the TRUE NLI model (reference), the embedded LLM answering Yes/No, and the grounded judge (offline default).
- `qasper_rag.answer.labels`: The gold evidence and a human label file, each read against a judge's verdicts: Cohen's kappa with its interval.
- `qasper_rag.answer.library`: `qasper-rag add PATH... --library DIR` reads PDFs, LaTeX sources and QASPER files into a folder that describes itself; `qasper-rag ask --library DIR "question"` routes the question to a paper first, answers from it, names the paper of every citation, and says when the question could be about several papers.
- `qasper_rag.answer.library_answer`: A question routed to the papers of a library, answered from the closest, every sentence naming its paper.
- `qasper_rag.answer.prompts`: The prompt that asks for a cited answer, a parser that never crashes a run, and the checks every citation goes through.
- `qasper_rag.answer.record`: One answer from the model's draft to the evaluation line: its sentences with their citations, verification and repair, the passages cited and sent, typed.
- `qasper_rag.answer.short`: The short answer is what QASPER's Answer-F1 scores and what a reader sees first: its decided type (Yes/No, a span of a passage, free form, Unanswerable), a plain retrieve-and-prompt baseline replayed on a run's own contexts, and Answer-F1 by answer type with intervals, train and test papers apart.
- `qasper_rag.answer.show`: An answer record shown to a reader: in a terminal, each cited passage's supporting sentences highlighted with their page; as one self-contained HTML file (or a notebook's rich display), each `[Doc N]` a link to its passage, the supporting sentences marked, and for a PDF the page drawn with the sentences' lines boxed.
- `qasper_rag.answer.verify`: Every answer sentence is checked against the passages it cites before it is shown; one that does not hold is re-cited, rewritten from its passage, or removed, and the reader is told.
- `qasper_rag.app`: The wiring the command line, the notebooks, the benchmarks and the tests share: load a corpus with its table bodies, read one paper from its PDF or LaTeX source, build an answerer from `AnswerSettings`, run an evaluation from `RunSettings`.
- `qasper_rag.bench`: What each stage costs on this machine, measured side by side in one run: chunking, index building against the encoder alone, retrieval latency cold and warm, memory as questions accumulate, the generator's prefill and decode rates by weight format against whole answers, and open-domain search as the corpus grows to a million vectors, exact against approximate.
- `qasper_rag.cli`: Index, inspect, ask and evaluate from the shell.
- `qasper_rag.core.env`: Every environment variable the package reads, in one table, and where the project and the shared data live: a leaf module that imports nothing from the package.
- `qasper_rag.core.files`: Writes that leave the old file or the new one (never half of one), appends that never leave a torn line behind, JSON lines read past a damaged line with a word about it, and a lock that lets one process at a time change a folder.
- `qasper_rag.core.generate`: A short name to a generator: the embedded models, a GGUF file, or a server.
- `qasper_rag.core.llama`: A GGUF model run inside this process: no server, no GPU, no network.
- `qasper_rag.core.llm`: One small interface over the LLMs that answer questions with cited passages and judge yes/no claims.
- `qasper_rag.core.models`: Where the offline models come from: PyPI packages holding slices of a file, put back together once, verified, and found again without rehashing.
- `qasper_rag.core.server`: vLLM, llama.cpp's server or a hosted API, through the same interface as the embedded model.
- `qasper_rag.core.stats`: Cohen's kappa, the percentile bootstrap interval of a mean, and percentiles of timings: the few statistics every report shares, each written once.
- `qasper_rag.core.text`: The SQuAD v1.1 normalisation QASPER's official evaluator applies to answers, shared by the metrics and the short-answer rules.
- `qasper_rag.core.tokens`: Chunk sizes and context budgets are counted in subword tokens, not words or characters.
- `qasper_rag.evaluate.evaluate`: Answer every question, judge every citation, and write the official predictions and every metric with its n: streamed to disk one question at a time, resumable after a kill, memory bounded.
- `qasper_rag.evaluate.failures`: For every question: its answer and outcome, and for each gold evidence item the rank of its chunks after each stage (BM25, dense, fusion, rerank, LLM rerank, final ranking, packing) and the stage that lost it.
- `qasper_rag.evaluate.metrics`: QASPER's official Answer-F1 and Evidence-F1, ALCE citation recall and precision with a pluggable judge, and coverage beside every mean: each exact, golden-tested, and guarded against the reference's measurement bugs.
- `qasper_rag.evaluate.recall`: Did the gold evidence reach the generator? Measured on the exact context sent, text and table/figure evidence apart, with counts.
- `qasper_rag.evaluate.routing`: How often routing puts a question's paper first, what open-domain retrieval over the whole library sends instead, retrieval inside the routed papers, and the wrong-paper citation rate of answers across a library.
- `qasper_rag.evaluate.runs`: One folder per evaluation run: its settings, one record per question appended as it is done, read back typed.
- `qasper_rag.evaluate.short_eval`: Answer-F1 by type for short-answer variants, and replays of a run's records: a plain baseline on the same passages, the short-answer stage asked again, each made to agree with the record as the pipeline does.
- `qasper_rag.papers.chunking`: One abstract chunk, 500-token paragraph chunks with 10% overlap, one chunk per table or figure caption.
- `qasper_rag.papers.data`: Typed records for QASPER, loaders for its two public formats, and the download path.
- `qasper_rag.papers.latex`: Fetch a paper's LaTeX source from arXiv, turn its `table` environments into Markdown, and attach each one to the matching QASPER table caption.
- `qasper_rag.papers.pdf`: A paper from its PDF: title, abstract, sections of paragraphs, figure/table captions and table bodies, read from the text layer by layout rules, as the same `Paper` record the chunker takes.
- `qasper_rag.papers.pdf_lines`: A born-digital PDF's text layer as lines: columns found, read in order, running headers and page numbers dropped, words hyphenated at line ends joined again.
- `qasper_rag.papers.tables`: Readers for four public sources of table bodies, one Markdown form, and matching bodies to captions.
- `qasper_rag.papers.tex`: A paper from its LaTeX source (an arXiv source folder, tarball or single .tex file): title, abstract, sections of paragraphs, figure/table captions with table bodies in Markdown, as the same `Paper` record the chunker takes.
- `qasper_rag.papers.typeset`: A `Paper` laid out as a two-column PDF, by reportlab or by LaTeX: the test and benchmark input of the PDF reader.
- `qasper_rag.report`: Run the parameterised evaluation notebooks with papermill, render them to HTML with nbconvert, and keep an index of the runs and pages (`reports/README.md`, `reports/index.html`).
- `qasper_rag.retrieve.adapt`: `qasper-rag adapt`: questions generated from the papers' own chunks by the embedded LLM, kept when the source chunk comes back near the top (Promptagator's round trip), hard negatives mined from the same paper, and the MiniLM bi-encoder fine-tuned on them with sentence-transformers' trainer, and a cross-encoder reranker trained from the same weights; everything written with a manifest so a result can be traced.
- `qasper_rag.retrieve.bm25`: A number-preserving NLTK-style tokenizer and one Okapi BM25 index over `bm25s` or `rank_bm25`, with identical scores.
- `qasper_rag.retrieve.config`: Every setting of retrieval and packing in one frozen record, and the named presets selectable everywhere.
- `qasper_rag.retrieve.crag`: Each retrieved passage is labelled Correct, Ambiguous or Incorrect; by default nothing is removed.
- `qasper_rag.retrieve.cross_encoder`: Score a question's candidate passages with a cross-encoder (the one `qasper-rag adapt` trains, or any folder or Hub id), a long passage by its best window.
- `qasper_rag.retrieve.dense`: Unit-length chunk vectors from MiniLM, mpnet or SPECTER2, searched by inner product, computed once per chunk.
- `qasper_rag.retrieve.late_interaction`: Rerank candidate chunks by late interaction (MaxSim over token vectors): ColBERT v2 loaded by hand, and a MiniLM token-level stand-in for offline machines.
- `qasper_rag.retrieve.packing`: Reciprocal Rank Fusion of several rankings, and the choice of what reaches the generator under a token budget.
- `qasper_rag.retrieve.retrieval`: Hybrid retrieval (BM25 + dense, fused by RRF), late-interaction reranking, CRAG labels, HyDE, and context packing, under named presets.
- `qasper_rag.settings`: The settings of an answer and of an evaluation run as typed objects with named presets, loaded strictly and recorded in every run.
- `qasper_rag.terminal`: An answer with its cited passages, the answer as the model writes it, a run's metrics, recall and chunk statistics, a label check: the readable forms `qasper-rag` prints (`--json` prints the objects themselves)."""

__version__ = "0.1.0"
