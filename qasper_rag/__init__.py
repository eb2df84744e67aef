"""Cited question answering over QASPER research papers, with a careful evaluation suite

Modules:

- `qasper_rag.latex`: Fetch a paper's LaTeX source from arXiv, turn its `table` environments into Markdown, and attach each one to the matching QASPER table caption."""

__version__ = "0.1.0"
