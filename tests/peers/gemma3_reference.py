#!/usr/bin/env python3
"""Google's sentencepiece package (PyPI) counting texts with a model file (Gemma 3's, Mistral's): the
reference toolcost's own SentencePiece encoder is held to (tests/gemma3.rs).

usage: gemma3_reference.py MODEL_FILE < texts.json   (a JSON list of strings)
Prints a JSON list: each text's ids.
"""
import json
import sys

import sentencepiece as spm

sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
texts = json.load(sys.stdin)
print(json.dumps([sp.encode(t) for t in texts]))
