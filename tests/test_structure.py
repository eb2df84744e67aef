"""nbdev idioms of the exported package (issue 14): methods are added with fastcore's `@patch`, never assigned to a class
by hand, so each keeps its qualified name (`Retriever.retrieve`, not `_retrieve`) and has its entry in nbdev's index."""
import ast, importlib, inspect
from pathlib import Path
import pytest
import qasper_rag
from qasper_rag._modidx import d as MODIDX

PKG = Path(qasper_rag.__file__).parent
MODULES = sorted(p.stem for p in PKG.glob("*.py") if not p.stem.startswith("_"))
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
    assert hand_attached((PKG/f"{module}.py").read_text()) == []


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


MAIN = {"retrieval": {"Retriever": ["retrieve", "index", "pool", "repack", "embedder", "late", "crag_scorer", "llm_relevance"]},
        "generate": {"LlamaCppGenerator": ["generate", "grammar", "yes_probability", "tokenizer", "last_timings"],
                     "OpenAIGenerator": ["generate", "generate_many", "yes_probability", "tokenizer", "models"]},
        "answer": {"Answerer": ["_verified", "_record"]},
        "bm25": {"BM25Index": ["index", "scores", "search", "save", "load"]},
        "dense": {"DenseIndex": ["add", "index", "scores", "search", "save", "load"], "Embedder": ["windows", "encode_documents"],
                  "VectorCache": ["encode"]},
        "chunking": {"ChunkedPaper": ["locate", "reached"], "QasperChunker": ["_section", "_float"]},
        "late_interaction": {"LateInteractionScorer": ["encode_passages", "score", "rerank"],
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


@pytest.mark.parametrize("module", [m for m in MODULES if m != "env"])
def test_package_environment_is_read_only_through_env(module):
    "Every QASPER_* variable is read through `env.env`, so `env.ENV` is the whole list a user can set."
    assert environ_reads((PKG/f"{module}.py").read_text()) == []


def test_every_env_name_used_is_declared():
    from qasper_rag.env import ENV
    import re
    used = {m for p in PKG.glob("*.py") for m in re.findall(r'env\(\s*"(QASPER_[A-Z_]+)"', p.read_text())}
    used |= {"QASPER_LLM_BASE_URL", "QASPER_LLM_MODEL", "QASPER_LLM_API_KEY"}  # read through generate.ENV_* names
    assert used <= set(ENV) and used == set(ENV), (used ^ set(ENV))
