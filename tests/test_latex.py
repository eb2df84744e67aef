"Golden tests of `qasper_rag.papers.latex`: LaTeX fixtures to exact Markdown, and the fetcher against a real local HTTP server."
import gzip, io, socket, tarfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from qasper_rag.papers.latex import (ArxivError, ArxivSource, Coverage, LatexTable, RateLimiter, caption_similarity, coverage,
                              latex_tables, latex_to_text, match_tables, split_caption, strip_comments,
                              tabular_to_markdown, unpack)


# ---------------------------------------------------------------- helpers
class FakeClock:
    "A clock that moves only when slept on; records every sleep."
    def __init__(self): self.t, self.slept = 0.0, []
    def __call__(self): return self.t
    def sleep(self, s): self.slept.append(s); self.t += s


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.hits.append(self.path)
        answers = self.server.routes.get(self.path, [(404, b'not found')])
        status, body = answers.pop(0) if len(answers) > 1 else answers[0]
        self.send_response(status)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args): pass


@pytest.fixture
def server():
    "A real HTTP server on 127.0.0.1; set `.routes` {path: [(status, body), ...]}, read `.hits`."
    srv = ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
    srv.routes, srv.hits = {}, []
    threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def make_source(srv, cache, clock, **kw):
    return ArxivSource(cache, f'http://127.0.0.1:{srv.server_port}/e-print', RateLimiter(0.25, clock, clock.sleep),
                       backoff=1.0, sleep=clock.sleep, **kw)


def tar_gz(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w:gz') as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


MAIN_TEX = rb"""\documentclass{article}
\newcommand{\ours}{MeLT}
\begin{document}
\input{sections/results}
% \input{sections/old}
\end{document}
"""
RESULTS_TEX = rb"""\begin{table}[t]
\begin{tabular}{lc}
\toprule
Model & F1 \\
\midrule
\ours & 80.1 \\
\bottomrule
\end{tabular}
\caption{Main results.}\label{tab:main}
\end{table}
"""
EPRINT = tar_gz({'main.tex': MAIN_TEX, 'sections/results.tex': RESULTS_TEX, 'sections/old.tex': b'OLD',
                 'figs/plot.pdf': b'%PDF-1.4 binary', 'figs/logo.png': b'\x89PNG\r\n\x1a\n\x00\x00\x00',
                 'notes.txt': b'\x00\x01 binary blob'})


# ---------------------------------------------------------------- rate limiter
def test_rate_limiter_spacing():
    clock = FakeClock()
    rl = RateLimiter(3.0, clock, clock.sleep)
    assert rl.wait() == 0.0
    clock.t += 1.0
    assert rl.wait() == 2.0
    assert rl.wait() == 3.0
    clock.t += 100.0
    assert rl.wait() == 0.0
    assert clock.slept == [2.0, 3.0]


def test_rate_limiter_default_is_three_seconds():
    assert RateLimiter().interval == 3.0
    assert ArxivSource('unused').limiter.interval == 3.0


# ---------------------------------------------------------------- fetcher against a real server
def test_fetch_unpack_and_cache(server, tmp_path):
    server.routes = {'/e-print/2001.00001': [(200, EPRINT)],
                     '/e-print/2001.00002': [(200, gzip.compress(b'\\section{Single} 5\\% % comment\nend'))]}
    clock = FakeClock()
    src = make_source(server, tmp_path, clock)
    tex = src.tex('2001.00001')
    assert '\\ours & 80.1' in tex and 'OLD' not in tex and '\\input' not in tex
    assert src.tables('2001.00001') == [LatexTable(1, 'Main results.', 'tab:main', '| Model | F1 |\n|---|---|\n| MeLT | 80.1 |')]
    assert src.tex('2001.00002') == '\\section{Single} 5\\% end'
    assert server.hits == ['/e-print/2001.00001', '/e-print/2001.00002']
    assert (tmp_path/'2001.00001.src').read_bytes() == EPRINT
    # a new source on the same cache makes no request at all
    again = make_source(server, tmp_path, clock)
    assert again.fetch('2001.00001') == EPRINT and again.tex('2001.00002') is not None
    assert len(server.hits) == 2
    assert clock.slept == [0.25]


def test_404_is_cached_as_no_source(server, tmp_path):
    clock = FakeClock()
    src = make_source(server, tmp_path, clock)
    assert src.fetch('2001.99999') is None
    assert (tmp_path/'2001.99999.none').exists() and not (tmp_path/'2001.99999.src').exists()
    assert src.fetch('2001.99999') is None
    assert make_source(server, tmp_path, clock).tables('2001.99999') == []
    assert server.hits == ['/e-print/2001.99999']


def test_transient_errors_are_retried_with_backoff(server, tmp_path):
    server.routes = {'/e-print/2001.00003': [(503, b''), (429, b''), (200, b'plain \\TeX')]}
    clock = FakeClock()
    assert make_source(server, tmp_path, clock).fetch('2001.00003') == b'plain \\TeX'
    assert len(server.hits) == 3
    assert clock.slept == [1.0, 2.0]  # backoff doubles; the limiter needs no extra wait after a backoff


def test_permanent_error_is_not_retried_nor_cached(server, tmp_path):
    server.routes = {'/e-print/2001.00004': [(403, b'forbidden')]}
    src = make_source(server, tmp_path, FakeClock())
    with pytest.raises(ArxivError, match='HTTP 403'):
        src.fetch('2001.00004')
    assert len(server.hits) == 1
    assert list(tmp_path.iterdir()) == []


def test_requests_are_spaced_by_the_limiter(server, tmp_path):
    server.routes = {f'/e-print/2001.0000{i}': [(200, b'x')] for i in range(1, 5)}
    clock = FakeClock()
    out = make_source(server, tmp_path, clock).fetch_many([f'2001.0000{i}' for i in range(1, 5)], progress=False)
    assert out == {f'2001.0000{i}': 'x' for i in range(1, 5)}
    assert clock.slept == [0.25, 0.25, 0.25]


def test_unreachable_server_raises_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    clock = FakeClock()
    src = ArxivSource(tmp_path, f'http://127.0.0.1:{port}/e-print/', RateLimiter(0.25, clock, clock.sleep),
                      retries=2, backoff=1.0, sleep=clock.sleep)
    with pytest.raises(ArxivError) as e:
        src.fetch('2001.00005')
    msg = str(e.value)
    assert f'http://127.0.0.1:{port}/e-print/2001.00005' in msg and '3 attempt(s)' in msg
    assert 'offline=True' in msg and str(tmp_path) in msg
    assert clock.slept == [1.0, 2.0]
    assert list(tmp_path.iterdir()) == []
    assert ArxivSource(tmp_path, f'http://127.0.0.1:{port}/', offline=True).fetch('2001.00005') is None


def test_old_style_ids_are_cached_safely(server, tmp_path):
    server.routes = {'/e-print/cs/0101001': [(200, b'old')]}
    assert make_source(server, tmp_path, FakeClock()).fetch('cs/0101001') == b'old'
    assert (tmp_path/'cs_0101001.src').exists()


# ---------------------------------------------------------------- unpacking
def test_unpack_forms():
    tex = unpack(EPRINT)
    assert tex.startswith('\\documentclass{article}') and '\\caption{Main results.}' in tex
    assert unpack(gzip.compress(b'\\documentclass{x} a % c\n b')) == '\\documentclass{x} a b'
    assert unpack(b'plain') == 'plain'
    assert unpack(b'%PDF-1.5 whatever') is None
    assert unpack(gzip.compress(b'%PDF-1.5')) is None


def test_unpack_finds_main_and_resolves_inputs():
    files = {'paper/appendix.tex': b'APPENDIX', 'paper/sec/intro.tex': b'INTRO \\input sec/deep', 'paper/sec/deep.tex': b'DEEP',
             'paper/ms.tex': b'\\documentclass[11pt]{article}\\begin{document}\\include{sec/intro} \\input{appendix.tex}\\end{document}',
             'paper/fig.tex': b'\\documentclass{standalone}\\begin{document}' + b'x' * 500 + b'\\end{document}',
             'paper/loop.tex': b'\\input{loop}'}
    assert unpack(tar_gz(files)) == '\\documentclass[11pt]{article}\\begin{document}INTRO DEEP APPENDIX\\end{document}'


def test_strip_comments():
    assert strip_comments('a 10\\% b % c\n  d') == 'a 10\\% b d'
    assert strip_comments('row \\\\% comment\nnext') == 'row \\\\next'
    assert strip_comments('x\\begin{comment}hidden\\end{comment}y') == 'xy'


# ---------------------------------------------------------------- LaTeX to text
@pytest.mark.parametrize('tex,text', [
    ('10\\% \\& \\_ \\# \\$5 \\{x\\} a~b', '10% & _ # $5 {x} a b'),
    ('\\textbf{a} \\textit{b} \\emph{c} \\underline{d} \\texttt{e} \\textsc{f} $\\mathbf{g}$', 'a b c d e f g'),
    ('{\\bf x} \\it y \\small\\centering\\scriptsize z', 'x y z'),
    ('\\resizebox{\\linewidth}{!}{in}', 'in'),
    ('\\makecell{a\\\\b}', 'a b'),
    ('BERT~\\citep[e.g.,][]{devlin2019, liu2019}', 'BERT [devlin2019, liu2019]'),
    ('$87.3$', '87.3'), ('85.0 $\\pm$ 0.2', '85.0 ± 0.2'), ('80.1$^\\dagger$ 79.0$^{*}$ 3$^{\\ddagger}$', '80.1† 79.0* 3‡'),
    ('F$_1$ R$^2$ 10$^{-3}$', 'F1 R^2 10^-3'), ('$\\times 2$ $\\leq$ $\\geq$', '× 2 ≤ ≥'),
    ('\\textbf{\\textcolor{red}{\\emph{deep}}}', 'deep'), ('a\\footnote{note {with} braces} b', 'a b'),
    ('Gr\\"{o}bner, Caf\\\'e, \\c{c}a', 'Gröbner, Café, ça'), ("``quoted'' --- 1--2", '"quoted" — 1–2'),
])
def test_latex_to_text(tex, text):
    assert latex_to_text(tex) == text


# ---------------------------------------------------------------- tabular to Markdown
def test_booktabs_with_grouped_header():
    body = r"""
\toprule
\multirow{2}{*}{Model} & \multicolumn{2}{c}{Dev} & \multicolumn{2}{c}{Test} \\
\cmidrule(lr){2-3} \cmidrule(lr){4-5}
 & P & R & P & R \\
\midrule
A & 1.0 & 2.0 & 3.0 & 4.0 \\
\addlinespace
B & \multicolumn{2}{c}{--} & 5.0 & 6.0 \\
\bottomrule"""
    assert tabular_to_markdown(body) == '\n'.join([
        '| Model | Dev P | Dev R | Test P | Test R |', '|---|---|---|---|---|',
        '| A | 1.0 | 2.0 | 3.0 | 4.0 |', '| B | – |  | 5.0 | 6.0 |'])


def test_hline_cline_multirow_and_padding():
    body = r"""\hline
Dataset & Size & Labels \\ \hline\hline
\multirow{2}{*}{Waseem} & 16{,}914 & racist \\ \cline{2-3}
 & 5k \\
\hline"""
    assert tabular_to_markdown(body) == '\n'.join([
        '| Dataset | Size | Labels |', '|---|---|---|', '| Waseem | 16,914 | racist |', '|  | 5k |  |'])


def test_no_rules_first_row_is_header():
    assert tabular_to_markdown('a & b \\\\ c & d') == '| a | b |\n|---|---|\n| c | d |'


def test_rule_late_in_table_is_not_a_header_end():
    body = '\\hline A & B \\\\ 1 & 2 \\\\ 3 & 4 \\\\ \\hline Avg & 3 \\\\ \\hline'
    assert tabular_to_markdown(body) == '| A | B |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n| Avg | 3 |'


def test_escapes_pipes_macros_and_nested_braces_in_cells():
    body = r"""\toprule
\textbf{Sys.} & \textbf{Acc (\%)} & $|V|$ \\
\midrule
{\bf Ours\_v2}$^\dagger$ & \underline{\textit{87.3}} $\pm$ 0.1 & \makecell[l]{10\\k} \\
Base~\cite{a} & {\small {87.0}} & \# \& \$ \\
\bottomrule"""
    assert tabular_to_markdown(body) == '\n'.join([
        '| Sys. | Acc (%) | \\|V\\| |', '|---|---|---|',
        '| Ours_v2† | 87.3 ± 0.1 | 10 k |', '| Base [a] | 87.0 | # & $ |'])


def test_row_separators_and_row_options():
    body = 'A & B \\\\[2pt] 1 & 2 \\tabularnewline 3 & 4 \\\\* \\hline'
    assert tabular_to_markdown(body) == '| A | B |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |'


def test_empty_tabular():
    assert tabular_to_markdown('\\toprule\\bottomrule') == ''


# ---------------------------------------------------------------- tables of a document
DOC = r"""\documentclass{article}
\def\best{\textbf}
\newcommand{\sys}{\textsc{Sys}}
\begin{document}
% \begin{table}\caption{Commented out.}\begin{tabular}{c} x \end{tabular}\end{table}
\begin{figure}\caption{A figure between tables.}\end{figure}
\begin{table}[t]
\centering
\begin{tabular}{@{}l p{2cm} r@{}}
\toprule
Model & Notes & Acc \\
\midrule
\sys & uses {nested {braces}} & $87.3$ \\
\bottomrule
\end{tabular}
\caption[Short caption]{Results of \sys{} on {\em two} tasks (\%).}
\label{tab:first}
\end{table}
\begin{table}
\begin{tabular}{c} Uncaptioned tables are not numbered \end{tabular}
\end{table}
\begin{table*}[h]
\caption*{Unnumbered.}
\end{table*}
\begin{table*}[h]
\centering
\resizebox{\textwidth}{!}{
\begin{tabular*}{\textwidth}{@{\extracolsep{\fill}}lcc}
\hline
& \multicolumn{2}{c}{Score} \\ \cline{2-3}
Model & A & B \\
\hline
X & 1 & 2 \\
\hline
\end{tabular*}}
\caption{Second table.}
\label{tab:second}
\end{table*}
\begin{table}
\begin{tabularx}{\linewidth}{lX}
K & V \\ \hline k & v
\end{tabularx}
\caption{Third, a tabularx.}
\end{table}
\end{document}"""


def test_latex_tables_numbers_captions_labels_bodies():
    assert latex_tables(DOC) == [
        LatexTable(1, 'Results of Sys on two tasks (%).', 'tab:first',
                   '| Model | Notes | Acc |\n|---|---|---|\n| Sys | uses nested braces | 87.3 |'),
        LatexTable(2, 'Second table.', 'tab:second', '| Model | Score A | Score B |\n|---|---|---|\n| X | 1 | 2 |'),
        LatexTable(3, 'Third, a tabularx.', None, '| K | V |\n|---|---|\n| k | v |')]


def test_tables_before_document_and_images():
    tex = ('\\newenvironment{mytab}{\\begin{table}\\caption{Macro.}}{\\end{table}}\n\\begin{document}\n'
           '\\begin{table}\\includegraphics{t.png}\\caption{Image.}\\end{table}\n'
           '\\begin{sidewaystable}\\caption{Wide.}\\begin{tabular}{c} w \\\\ 1 \\end{tabular}\\end{sidewaystable}\\end{document}')
    assert latex_tables(tex) == [LatexTable(1, 'Image.', None, ''), LatexTable(2, 'Wide.', None, '| w |\n|---|\n| 1 |')]


def test_minipages_and_subtables():
    tex = r"""\begin{table}
\begin{minipage}{.5\linewidth}\caption{Left.}\begin{tabular}{l} L \\ 1 \end{tabular}\end{minipage}
\begin{minipage}{.5\linewidth}\caption{Right.}\label{tab:r}\begin{tabular}{l} R \\ 2 \end{tabular}\end{minipage}
\end{table}
\begin{table}
\begin{subtable}{.5\linewidth}\caption{Sub.}\begin{tabular}{l} a \\ 1 \end{tabular}\end{subtable}
\caption{Parts.}
\end{table}"""
    assert latex_tables(tex) == [LatexTable(1, 'Left.', None, '| L |\n|---|\n| 1 |'),
                                 LatexTable(2, 'Right.', 'tab:r', '| R |\n|---|\n| 2 |'),
                                 LatexTable(3, 'Parts.', None, '| a |\n|---|\n| 1 |')]


# ---------------------------------------------------------------- matching
def T(n, cap, md='| a |\n|---|'): return LatexTable(n, cap, None, md)


def test_split_caption_and_similarity():
    assert split_caption('Table 3: Results on the test set.') == (3, 'Results on the test set.')
    assert split_caption('TABLE II. Data.') == (2, 'Data.')
    assert split_caption('No prefix') == (None, 'No prefix')
    assert caption_similarity('Table 1: Percentage of n-grams , a measure.', 'Percentage of $n$-grams, a measure.') == 1.0
    assert caption_similarity('', 'x') == 0.0


def test_match_prefers_caption_over_shifted_numbers():
    latex = [T(1, 'Hyper-parameters.'), T(2, 'Results on the dev set.'), T(3, 'Results on the test set.'), T(4, 'Error types.', '')]
    qasper = [(1, 'Table 1: Results on the dev set.'), (2, 'Table 2: Results on the test set.'),
              (3, 'Table 3: Error types.'), (None, 'Table 9: Something else entirely.')]
    m = match_tables(qasper, latex)
    assert {i: t.number for i, t in m.items()} == {0: 2, 1: 3}
    assert coverage(m, 4) == Coverage(2, 4) and coverage(m, 4).fraction == 0.5
    assert str(coverage(m, 4)) == '2/4 table captions with a body (50.0%)'
    assert coverage({}, 0).fraction == 0.0


def test_match_numbers_settle_ties_and_each_table_used_once():
    same = [T(1, 'Results.'), T(2, 'Results.')]
    assert match_tables([(2, 'Results.'), (1, 'Results.'), (None, 'Table 3: Results.')], same) == {0: same[1], 1: same[0]}


def test_match_thresholds():
    latex = [T(1, 'Hyper-parameters of the model.')]
    assert match_tables([(1, 'Corpus statistics.')], latex) == {0: latex[0]}  # numbers agree
    assert match_tables([(2, 'Corpus statistics.')], latex) == {}  # dissimilar and numbers disagree
    assert match_tables([(2, 'Hyper parameters of our model')], latex) == {0: latex[0]}  # similar caption
    assert match_tables([(2, 'Hyper parameters of our model')], latex, min_similarity=0.99) == {}
