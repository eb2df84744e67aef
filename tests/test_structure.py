"""nbdev idioms of the exported package (issue 14): methods are added with fastcore's `@patch`, never assigned to a class
by hand, so each keeps its qualified name (`Retriever.retrieve`, not `_retrieve`) and has its entry in nbdev's index."""
import ast, importlib, inspect, json
from pathlib import Path
import pytest
import qasper_rag
from qasper_rag._modidx import d as MODIDX

PKG = Path(qasper_rag.__file__).parent
MODULES = sorted(".".join(p.relative_to(PKG).with_suffix("").parts) for p in PKG.rglob("*.py") if not p.stem.startswith("_"))  # "core.env", "app", ...
def source_of(module: str) -> str: return (PKG/(module.replace(".", "/") + ".py")).read_text()
WRAPPERS = {"property", "classmethod", "staticmethod"}


def hand_attached(src: str) -> list[str]:
    "`Class.name = function` statements at module level, the function defined in the module (maybe wrapped in property(...))."
    tree = ast.parse(src)
    funcs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    def is_func(v):
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in WRAPPERS and len(v.args) == 1: v = v.args[0]
        return isinstance(v, ast.Name) and v.id in funcs
    out = []
    for n in tree.body:
        if not isinstance(n, ast.Assign): continue
        for t in n.targets:
            pairs = zip(t.elts, n.value.elts) if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) else [(t, n.value)]
            out += [f"{a.value.id}.{a.attr}" for a, v in pairs
                    if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and is_func(v)]
    return out


def test_hand_attached_finds_every_form():
    src = ("class A: pass\ndef _f(self): pass\ndef _g(cls): pass\nA.f = _f\nA.g, A.h = property(_f), classmethod(_g)\n"
           "A.x = 1\nA.y = len\nimport os\nos.sep2 = os.sep\n")
    assert hand_attached(src) == ["A.f", "A.g", "A.h"]


@pytest.mark.parametrize("module", MODULES)
def test_no_method_attached_by_hand(module):
    assert hand_attached(source_of(module)) == []


def _own_methods(cls):
    "(name, function) of the functions in `cls`'s own namespace (property getters and class methods included)."
    for name, v in vars(cls).items():
        if name.startswith("_orig_") or name.startswith("__"): continue  # fastcore's `patch` keeps an inherited method
        # in `_orig_<name>`; dunders may come from `typing` (a Protocol's `__init__`)
        f = v.fget if isinstance(v, property) else getattr(v, "__func__", getattr(v, "f", v))  # `f`: fastcore's class methods
        if inspect.isfunction(f): yield name, f


def _classes(module):
    m = importlib.import_module(f"qasper_rag.{module}")
    return [c for c in vars(m).values() if inspect.isclass(c) and c.__module__ == m.__name__]


@pytest.mark.parametrize("module", MODULES)
def test_methods_carry_their_class_name(module):
    bad = [f"{c.__qualname__}.{n}: {f.__qualname__}" for c in _classes(module) for n, f in _own_methods(c)
           if not f.__qualname__.startswith(c.__qualname__ + ".")]
    assert bad == []


MAIN = {"retrieve.retrieval": {"Retriever": ["retrieve", "index", "pool", "repack", "embedder", "late", "crag_scorer", "llm_relevance"]},
        "core.llama": {"LlamaCppGenerator": ["generate", "grammar", "yes_probability", "tokenizer", "last_timings"]},
        "core.server": {"OpenAIGenerator": ["generate", "generate_many", "yes_probability", "tokenizer", "models"]},
        "answer.answer": {"Answerer": ["_steps", "_record"]},
        "retrieve.bm25": {"BM25Index": ["index", "scores", "search", "save", "load"]},
        "retrieve.dense": {"DenseIndex": ["add", "index", "scores", "search", "save", "load"], "Embedder": ["windows", "encode_documents"],
                  "VectorCache": ["encode"]},
        "papers.chunking": {"ChunkedPaper": ["locate", "reached"], "QasperChunker": ["_section", "_float"]},
        "retrieve.late_interaction": {"LateInteractionScorer": ["encode_passages", "score", "rerank"],
                             "ColBERTScorer": ["query_ids", "doc_ids", "vectors", "encode_query"],
                             "TokenMaxSimScorer": ["windows", "forward", "encode_query"]}}


@pytest.mark.parametrize("module", sorted(MAIN))
def test_main_methods_named_and_indexed(module):
    m = importlib.import_module(f"qasper_rag.{module}")
    for cls, names in MAIN[module].items():
        own = dict(_own_methods(getattr(m, cls)))
        for n in names:
            assert own[n].__qualname__ == f"{cls}.{n}"
            assert f"qasper_rag.{module}.{cls}.{n}" in MODIDX["syms"][f"qasper_rag.{module}"]


def environ_reads(src: str) -> list[str]:
    "`os.environ.get(\"QASPER_...\")`, `os.environ[\"QASPER_...\"]` and `os.getenv(\"QASPER_...\")` reads in a module's source."
    out = []
    for n in ast.walk(ast.parse(src)):
        arg = None
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args:
            f = n.func
            if (f.attr == "get" and isinstance(f.value, ast.Attribute) and f.value.attr == "environ") or f.attr == "getenv": arg = n.args[0]
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "environ": arg = n.slice
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("QASPER_"): out.append(arg.value)
    return out


def test_environ_reads_finds_every_form():
    src = 'import os\na = os.environ.get("QASPER_A")\nb = os.environ["QASPER_B"]\nc = os.getenv("QASPER_C", "x")\nd = os.environ.get("HOME")\n'
    assert environ_reads(src) == ["QASPER_A", "QASPER_B", "QASPER_C"]


@pytest.mark.parametrize("module", [m for m in MODULES if m != "core.env"])
def test_package_environment_is_read_only_through_env(module):
    "Every QASPER_* variable is read through `env.env`, so `env.ENV` is the whole list a user can set."
    assert environ_reads(source_of(module)) == []


def test_every_env_name_used_is_declared():
    from qasper_rag.core.env import ENV
    import re
    used = {m for p in PKG.rglob("*.py") for m in re.findall(r'env\(\s*"(QASPER_[A-Z_]+)"', p.read_text())}
    used |= {"QASPER_LLM_BASE_URL", "QASPER_LLM_MODEL", "QASPER_LLM_API_KEY"}  # read through server.ENV_* names
    assert used <= set(ENV) and used == set(ENV), (used ^ set(ENV))


# --- imports point one way (issue 40) ------------------------------------------------------------------

def package_imports(src: str, pkg: str = "qasper_rag",
                    module: str = "", # the importing module ("answer.answer"): where its relative imports start
                    known: frozenset = frozenset(), # the package's modules: `from pkg.stage import mod` names the module `stage.mod`
                   ) -> dict[str, int]:
    """The package modules a module's source imports (`from .x import`, `from ..stage.x import`, `from pkg.x.y import`, `import pkg.x`,
    `from . import x`), at module level or inside functions, as dotted names under the package, each with its first line."""
    out, here = {}, module.split(".")[:-1]  # the importing module's package, as parts under `pkg`
    for n in ast.walk(ast.parse(src)):
        mods = []
        if isinstance(n, ast.ImportFrom):
            if n.level: base = ".".join((here[:len(here) - n.level + 1] if n.level > 1 else here) + ([n.module] if n.module else []))
            elif n.module == pkg or (n.module or "").startswith(pkg + "."): base = n.module.removeprefix(pkg).lstrip(".")
            else: continue
            subs = [f"{base}.{a.name}".lstrip(".") for a in n.names]
            mods = [x for x in subs if x in known] or ([base] if base else subs)
            if not base: mods = subs  # `from . import x` at the top: x itself
        elif isinstance(n, ast.Import): mods = [a.name.removeprefix(pkg + ".") for a in n.names if a.name.startswith(pkg + ".")]
        for m in mods: out.setdefault(m, n.lineno)
    return out


def test_package_imports_finds_every_form():
    src = ("from .data import Paper\nfrom . import __version__, dense\nimport os\nfrom os import path\n"
           "def f():\n    from qasper_rag.cli import main\n    import qasper_rag.bench\n    from qasper_rag.retrieve import adapt\n")
    assert package_imports(src, known=frozenset({"retrieve.adapt"})) == {"data": 1, "__version__": 2, "dense": 2, "cli": 6, "bench": 7, "retrieve.adapt": 8}
    inner = "from .judges import grounding\nfrom ..core.env import env\nfrom qasper_rag.papers.data import Paper\n"
    assert package_imports(inner, module="answer.answer") == {"answer.judges": 1, "core.env": 2, "papers.data": 3}


def import_graph() -> dict[str, dict[str, int]]:
    "module -> {imported package module: line}, over the exported modules (a module naming itself is no edge)."
    known = frozenset(MODULES)
    return {m: {t: l for t, l in package_imports(source_of(m), module=m, known=known).items() if t in known and t != m} for m in MODULES}


def _shortest_cycle(g: dict[str, dict], s: str, grp: set[str]) -> list[str]:
    "The shortest cycle from `s` back to `s` inside `grp` (breadth-first: the first edge back is on a shortest one)."
    prev, frontier = {s: None}, [s]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v]):
                if w == s:
                    path = [v]
                    while path[0] != s: path.insert(0, prev[path[0]])
                    return path
                if w in grp and w not in prev: prev[w] = v; nxt.append(w)
        frontier = nxt
    return []


def import_cycles(g: dict[str, dict]) -> list[tuple[list[str], list[list[str]]]]:
    "Each strongly connected group of more than one module (Tarjan), with the shortest cycle through each of its modules (each cycle once)."
    index, low, stack, on, groups = {}, {}, [], set(), []
    def visit(v):
        index[v] = low[v] = len(index); stack.append(v); on.add(v)
        for w in sorted(g[v]):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            grp = []
            while True:
                w = stack.pop(); on.discard(w); grp.append(w)
                if w == v: break
            if len(grp) > 1: groups.append(sorted(grp))
    for v in sorted(g):
        if v not in index: visit(v)
    out = []
    for grp in sorted(groups):
        cycles = []
        for s in grp:
            c = _shortest_cycle(g, s, set(grp))
            i = c.index(min(c)); c = c[i:] + c[:i]  # from its first module by name: one cycle, one form
            if c not in cycles: cycles.append(c)
        out.append((grp, sorted(cycles, key=lambda c: (len(c), c))))
    return out


def test_import_cycles_found():
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}, "e": {"d": 1}}
    assert import_cycles(g) == [(["a", "b", "c"], [["a", "b", "c"]])]
    g["b"]["a"] = 2
    assert import_cycles(g) == [(["a", "b", "c"], [["a", "b"], ["a", "b", "c"]])]
    assert import_cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycle():
    "Imports point one way, from the command line down to the leaves: no module imports, through others, one that imports it."
    g = import_graph()
    found = import_cycles(g)
    msg = "\n".join(f"{len(grp)} modules in a circle ({', '.join(grp)}):\n" + "\n".join(
        "  " + " -> ".join(f"{a} (line {g[a][b]})" for a, b in zip(c, c[1:] + c[:1])) + f" -> {c[0]}" for c in cycles)
                    for grp, cycles in found)
    print(msg)
    assert not found, "import cycles:\n" + msg


def test_env_is_a_leaf():
    "`env` imports nothing from the package, so every module may import it."
    assert import_graph()["core.env"] == {}


ROOT = PKG.parent
CLI_ENTRY = {"main", "build_parser"}  # what a test of the command line may import from it


def cli_imports(src: str) -> list[tuple[int, str]]:
    "(line, name) of each name taken from `qasper_rag.cli`; the module itself (`import qasper_rag.cli`, `from qasper_rag import cli`) counts as `cli`."
    out = []
    for n in ast.walk(ast.parse(src)):
        if isinstance(n, ast.ImportFrom):
            if n.module == "qasper_rag.cli" or (n.level and n.module == "cli"): out += [(n.lineno, a.name) for a in n.names]
            elif n.module == "qasper_rag" or (n.level and n.module is None): out += [(n.lineno, "cli") for a in n.names if a.name == "cli"]
        elif isinstance(n, ast.Import): out += [(n.lineno, "cli") for a in n.names if a.name == "qasper_rag.cli"]
    return out


def test_cli_imports_finds_every_form():
    src = ("from qasper_rag.cli import main, load_corpus\nfrom .cli import build_parser\nimport qasper_rag.cli\n"
           "def f():\n    from qasper_rag import cli, data\n    s = 'from qasper_rag.cli import run_eval'\n")
    assert cli_imports(src) == [(1, "main"), (1, "load_corpus"), (2, "build_parser"), (3, "cli"), (5, "cli")]


def _sources():
    "(path, source) of every module, notebook code cell (magics dropped), benchmark, script and test but the command line's own."
    own = {"qasper_rag/cli.py", "nbs/90_cli.ipynb", "tests/test_cli.py"}
    for pat in ("qasper_rag/**/*.py", "nbs/**/*.ipynb", "benchmarks/*.py", "scripts/*.py", "tests/*.py"):
        for p in sorted(ROOT.glob(pat)):
            rel = p.relative_to(ROOT).as_posix()
            if rel in own: continue
            if p.suffix != ".ipynb": yield rel, p.read_text(); continue
            for i, c in enumerate(json.loads(p.read_text())["cells"]):
                if c["cell_type"] == "code":
                    src = "".join(c["source"])
                    yield f"{rel} cell {i}", "\n".join("" if l.lstrip().startswith(("%", "!")) else l for l in src.splitlines())


@pytest.mark.skipif(not (ROOT/"nbs").is_dir(), reason="needs the checkout (notebooks, benchmarks), not an installed package")
def test_only_the_command_line_is_imported_from_cli():
    "The package's API lives in `app` and the stage modules: nothing imports `cli` but for `main`/`build_parser`, to test the command line."
    bad = [f"{where}:{line} imports {name}" for where, src in _sources() for line, name in cli_imports(src) if name not in CLI_ENTRY]
    assert bad == [], "\n".join(bad)


# Notebook test cells that neither check nor show (issue 44): every code cell of a module notebook that is not exported nor a
# definition, a literal or a hidden fixture asserts something or shows an output a reader learns from. Report pages (20-28)
# render findings and are left out.
import re as _re
REPORT_PAGE = _re.compile(r"^2[0-8]_")

def hollow_cells(sources: list[str]) -> list[int]:
    "Indices of the code cells (their sources) that run code but neither check (assert, raise, test_*) nor show (print, display, a last expression)."
    out = []
    for i, src in enumerate(sources):
        if _re.search(r"^#\|\s*(export|exporti|default_exp|eval:\s*false)\b", src, _re.M): continue
        code = "\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!")))
        try: tree = ast.parse(code)
        except SyntaxError: continue
        hide = bool(_re.search(r"^#\|\s*hide\b", src, _re.M))  # a fixture the reader does not see
        literal = (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Tuple, ast.Set)
        if all(isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)) or isinstance(s, ast.Assign) and (hide or isinstance(s.value, literal))
               for s in tree.body): continue  # setup: definitions, data, a hidden fixture
        calls = {n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "") for n in ast.walk(tree) if isinstance(n, ast.Call)}
        checks = any(isinstance(n, (ast.Assert, ast.Raise)) for n in ast.walk(tree)) or any(c.startswith("test") for c in calls)
        shows = bool(calls & {"print", "display", "show", "plot", "imshow"}) or isinstance(tree.body[-1], ast.Expr) and not src.rstrip().endswith(";")
        if not (checks or shows): out.append(i)
    return out

def test_hollow_cells_finds_every_form():
    cells = ["x = compute()", "x = compute()\nassert x", "x = compute()\nx", "x = compute()\nx;", "print(compute())", "#| hide\ntmp = make()",
             "def f(): pass", "DATA = '''a'''", "#| export\ny = run()", "test_eq(f(), 1)", "for a in b: run(a)"]
    assert hollow_cells(cells) == [0, 3, 10]

@pytest.mark.parametrize("nb", sorted(p.relative_to(ROOT/"nbs").as_posix() for p in (ROOT/"nbs").rglob("*.ipynb")
                                       if p.parent.name != "pages" and not REPORT_PAGE.match(p.name)))
def test_no_hollow_notebook_cells(nb):
    cells = [c for c in json.loads((ROOT/"nbs"/nb).read_text())["cells"] if c["cell_type"] == "code"]
    srcs = ["".join(c["source"]) for c in cells]
    assert not (bad := hollow_cells(srcs)), [srcs[i][:200] for i in bad]


# --- layers: cli -> app -> evaluate -> answer -> retrieve -> papers -> core (issue 40), the stages as folders ---------

STAGES = ["core", "papers", "retrieve", "answer", "evaluate"]  # the stage folders of the package and of nbs/, bottom first
TOP = {"settings": "app", "app": "app", "bench": "app", "report": "app", "terminal": "app", "cli": "cli"}  # the modules above the stages, at the package's top
LAYERS = [*STAGES, "app", "cli"]  # a module may import its own layer and those below it, never one above


def layer_of(module: str) -> int | None:
    "1 (core) ... 7 (cli): a stage module's folder, or the top-level module's place in `TOP` (None: neither)."
    where = module.split(".")[0] if "." in module else TOP.get(module)
    return LAYERS.index(where) + 1 if where in LAYERS and (("." in module) == (where in STAGES)) else None


LAYER_OF = {m: layer_of(m) for m in MODULES}


def upward_imports(g: dict[str, dict[str, int]], layer_of: dict[str, int]) -> list[str]:
    "`a (line n) imports b`, for each import of a module in a higher layer."
    return [f"{a} (line {l}) imports {b}" for a, ts in sorted(g.items()) for b, l in sorted(ts.items()) if layer_of[b] > layer_of[a]]


def test_upward_imports_found():
    assert upward_imports({"a": {"b": 3}, "b": {}}, {"a": 1, "b": 2}) == ["a (line 3) imports b"]
    assert upward_imports({"a": {"b": 3}, "b": {}}, {"a": 2, "b": 2}) == []


def test_every_module_has_a_layer():
    assert [layer_of(m) for m in ("core.env", "answer.answer", "app", "cli", "report", "misc", "core", "misc.x")] == [1, 4, 6, 7, 6, None, None, None]
    assert sorted(m for m, l in LAYER_OF.items() if l is None) == [], "put each module in a stage folder, or name a top-level one in TOP"


def test_imports_point_down():
    "A stage uses the stages below it and never one above: the package reads from the command line down to the core."
    bad = upward_imports(import_graph(), LAYER_OF)
    assert bad == [], "imports that point up:\n" + "\n".join(bad)
