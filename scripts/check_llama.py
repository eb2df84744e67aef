"""Setup check: llama-cpp-python loads the tests' tiny model and generates a token on this CPU.

Exits 0 if it works. A build with instructions this CPU cannot run dies here with SIGILL (exit
code 132) instead of at the first real question, and `make setup` rebuilds it.
"""
from qasper_rag.core.llama import LlamaCppGenerator
from qasper_rag.core.models import smollm2_gguf_path

g = LlamaCppGenerator(smollm2_gguf_path(), n_ctx=256)
out = g.generate([{"role": "user", "content": "Say yes."}], max_tokens=2)
print(f"llama-cpp-python works on this CPU ({out.completion_tokens} token in {out.seconds:.2f} s)")
