"""The arXiv path end to end: a real local HTTP server serves a gzipped TeX source; its table
becomes the body of the matching QASPER caption and reaches the caption chunk."""
import functools
import gzip
import http.server
import threading

import pytest
from qasper_rag.papers.chunking import QasperChunker
from qasper_rag.papers.latex import ArxivSource, RateLimiter, arxiv_table_bodies
from qasper_rag.papers.tables import attach_bodies

TEX = r"""\documentclass{article}\begin{document}
\begin{table}[t]\centering
\begin{tabular}{lrr}\toprule
Type & Train & Dev \\ \midrule
AL & 1,000,000 & 500 \\
CA & 5,000 & 100 \\ \bottomrule
\end{tabular}
\caption{Statistics of the AL, CA, and CO datasets.}
\end{table}
\end{document}"""


@pytest.fixture()
def server(tmp_path):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "1909.00694").write_bytes(gzip.compress(TEX.encode()))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "srv"))
    handler.log_message = lambda *a: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}/"
    srv.shutdown()
    srv.server_close()


def test_arxiv_bodies_reach_the_caption_chunk(train10, server, tmp_path):
    paper = train10.paper("1909.00694")
    src = ArxivSource(cache_dir=tmp_path / "cache", base_url=server, limiter=RateLimiter(0.0))
    bodies = arxiv_table_bodies([paper], src, progress=False)
    assert [(b.number, b.source) for b in bodies] == [(1, "arxiv")]
    assert "| AL | 1,000,000 | 500 |" in bodies[0].markdown
    (attached,), report = attach_bodies([paper], bodies)
    t1 = next(f for f in attached.tables if f.number == 1)
    assert t1.body_source == "arxiv" and report.with_body == 1
    chunk = next(c for c in QasperChunker()(attached) if c.id == "1909.00694:table1")
    assert chunk.body.startswith("Table 1: Statistics of the AL, CA, and CO datasets.\n\n| Type | Train | Dev |")
