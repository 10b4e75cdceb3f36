#!/usr/bin/env python3
"""Recall on LoCoMo: is the evidence turn in the context `ask` would build?

Usage: run.py LOCOMO_DIR [--bin target/release/claude-session] [--only 26,30]
       run.py --fixture benches/recall-locomo/fixtures/zh.json
       run.py --followups benches/recall-locomo/fixtures/followup.json

LOCOMO_DIR holds LoCoMo's unzipped `data/multimodal_dialog/locomo10_v2/*.json`
(CC BY-NC 4.0: never committed here). Fetches nothing. For each conversation:
a fresh state dir; every turn imported with `append --jsonl` (speaker_a as the
user, speaker_b as the assistant, msgId "<conv>:<dia_id>", a photo's caption
appended to its text, each session's date as its turns' time, a minute
apart); compacted with the fake claude (tests/fake-claude); then for each
question of categories 1-4, `context --json --user U -- "<question>"`, and a
hit when an evidence turn's msgId is in that context (the recent window or the
recalled messages). A plain BM25 baseline (no stemming, no stopwords,
turn-level top-k within the same character budget, plus the same recent
window) is computed in the same run over the same turns.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEV = {"26", "30", "41", "42", "43"}
HELD_OUT = {"44", "47", "48", "49", "50"}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
RECALLED_HEADER = "[Earlier messages that may be relevant]"
USER = "U1"


def session_time(text):
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def locomo_turns(conv_id, data):
    c = data["conversation"] if "conversation" in data else data
    a = c["speaker_a"]
    turns = []
    n = 1
    while f"session_{n}_date_time" in c:
        start = session_time(c[f"session_{n}_date_time"])
        for i, turn in enumerate(c.get(f"session_{n}", [])):
            text = turn["text"]
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]"
            turns.append({
                "ts": (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "role": "user" if turn["speaker"] == a else "assistant",
                "text": text,
                "msgId": f"{conv_id}:{turn['dia_id']}",
            })
        n += 1
    questions = [
        {"q": q["question"], "cat": q["category"],
         # A few evidence entries hold two ids ("D8:6; D9:17"): both count.
         "evidence": [f"{conv_id}:{e}" for ev in q.get("evidence", []) for e in re.split(r"[;,\s]+", ev) if e]}
        for q in data["qa"]
        if q.get("category") in CATEGORIES and q.get("evidence")
    ]
    return turns, questions


def fixture_turns(data):
    conv_id = data["id"]
    turns = []
    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    for i, turn in enumerate(data["turns"]):
        day, rest = divmod(i, 40)
        turns.append({
            "ts": (start + timedelta(days=day, minutes=rest * 3)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "role": turn["role"],
            "text": turn["text"],
            "msgId": f"{conv_id}:{i}",
        })
    questions = [
        {"q": q["q"], "cat": 4, "evidence": [f"{conv_id}:{e}" for e in q["evidence"]]}
        for q in data["questions"]
    ]
    return turns, questions


def run(binary, state, args, env=None, stdin=None):
    full_env = dict(os.environ, **(env or {}))
    result = subprocess.run(
        [binary, "--state-dir", state, "-q", *args],
        input=stdin, capture_output=True, text=True, env=full_env,
    )
    if result.returncode != 0:
        sys.exit(f"{' '.join(args[:3])} failed ({result.returncode}): {result.stderr}")
    return result.stdout


INDEX = False  # --index: the archives indexed (`session reindex`) after the compaction


def write_config(state, config):
    os.makedirs(os.path.join(state, "sessions"), exist_ok=True)
    with open(os.path.join(state, "sessions", "config.json"), "w") as f:
        json.dump(config, f)


def build_state(binary, turns, config):
    state = tempfile.mkdtemp(prefix="recall-bench-")
    run(binary, state, ["init"])
    if config:
        write_config(state, config)
    path = os.path.join(state, "import.jsonl")
    with open(path, "w") as f:
        for t in turns:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    run(binary, state, ["append", "--user", USER, "--jsonl", path])
    reply = json.dumps({"summary": "They talked about their lives.", "facts": {}})
    run(binary, state, ["compact", "--user", USER, "--force", "--claude-bin",
                        os.path.join(ROOT, "tests", "fake-claude")],
        # claude sees only the variables it is allowed (ask.env): let the
        # fake's through.
        env={"FAKE_CLAUDE_REPLY": reply, "CLAUDE_SESSION_CLAUDE_ENV": "FAKE_CLAUDE_*"})
    summary = json.loads(run(binary, state, ["--json", "context", "--user", USER]))["summary"]
    if summary.strip() != "They talked about their lives.":
        sys.exit(f"the compaction did not write the fake's summary: {summary[:200]!r}")
    if INDEX:
        run(binary, state, ["session", "reindex"])
    return state


# --- the baseline: plain BM25 (no stemming, no stopwords), turns only -----------

def plain_tokens(text):
    return re.findall(r"\w+", text.lower())


class PlainBM25:
    def __init__(self, turns, k1=1.5, b=0.75):
        self.docs = [Counter(plain_tokens(t["text"])) for t in turns]
        self.lens = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lens) / max(len(self.lens), 1)
        df = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {w: math.log((n - f + 0.5) / (f + 0.5) + 1) for w, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query):
        q = plain_tokens(query)
        scores = []
        for i, d in enumerate(self.docs):
            s = 0.0
            for w in q:
                tf = d.get(w, 0)
                if tf:
                    s += self.idf[w] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg))
            if s > 0:
                scores.append((s, i))
        scores.sort(reverse=True)
        return [i for _, i in scores]


def line_chars(t):
    # As the context writes a turn: "[YYYY-MM-DD HH:MM] User: text" and a newline.
    return len(t["text"]) + 27


def evaluate(binary, name, turns, questions, budget, window, verbose, config, state=None):
    state = state or build_state(binary, turns, config)
    baseline = PlainBM25(turns)
    recent = {t["msgId"] for t in turns[-window:]}
    rows = []
    for q in questions:
        out = json.loads(run(binary, state, ["context", "--json", "--user", USER, "--", q["q"]]))
        present = {m.get("msgId") for m in out["messages"]}
        present |= {m.get("msgId") for m in out.get("recalled") or []}
        text = out["text"]
        recalled_bytes = 0
        if RECALLED_HEADER in text:
            section = text.split(RECALLED_HEADER, 1)[1].split("\n\n[", 1)[0]
            recalled_bytes = len((RECALLED_HEADER + section).encode())
        base = set(recent)
        used = 0
        for i in baseline.top(q["q"]):
            cost = line_chars(turns[i])
            if used + cost > budget:
                break
            used += cost
            base.add(turns[i]["msgId"])
        ev = q["evidence"]
        row = {
            "conv": name, "cat": q["cat"],
            "any": any(e in present for e in ev), "all": all(e in present for e in ev),
            "base": any(e in base for e in ev), "bytes": recalled_bytes,
        }
        rows.append(row)
        if verbose and not row["any"]:
            print(f"  miss {name} c{q['cat']}: {q['q']}  evidence {ev}", file=sys.stderr)
    return rows


def evaluate_followups(binary, data, verbose, config):
    """Each follow-up asked twice: alone (the recent turns are old small
    talk), then right after its first question and the bot's answer
    (appended a minute before now, as they would be)."""
    turns, _ = fixture_turns(dict(data, questions=[]))
    state = build_state(binary, turns, config)
    conv = data["id"]

    def recalled(query):
        out = json.loads(run(binary, state, ["context", "--json", "--user", USER, "--", query]))
        return ({m.get("msgId") for m in out["messages"]} | {m.get("msgId") for m in out.get("recalled") or []},
                len(out.get("recalled") or []))

    rows = []
    for f in data["followups"]:
        present, _ = recalled(f["q"])
        rows.append({"lang": f["lang"], "without": any(f"{conv}:{e}" in present for e in f["evidence"])})
    now = datetime.now(timezone.utc)
    path = os.path.join(state, "exchange.jsonl")
    small_talk_recalls = 0
    for n, (f, row) in enumerate(zip(data["followups"], rows)):
        with open(path, "w") as fh:
            for k, (role, text) in enumerate([("user", f["first"]), ("assistant", f["reply"])]):
                ts = now - timedelta(seconds=120 - 60 * k) + timedelta(milliseconds=n)
                fh.write(json.dumps({"ts": ts.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z", "role": role,
                                     "text": text, "msgId": f"{conv}:x{n}:{k}"}, ensure_ascii=False) + "\n")
        run(binary, state, ["append", "--user", USER, "--jsonl", path])
        present, _ = recalled(f["q"])
        row["with"] = any(f"{conv}:{e}" in present for e in f["evidence"])
        # Small talk after the same turns still recalls nothing.
        small_talk_recalls += recalled("thanks!")[1] > 0
        if verbose and not row["with"]:
            print(f"  miss follow-up ({f['lang']}): {f['first']} / {f['q']}", file=sys.stderr)
    print("| follow-ups | questions | evidence in context, the follow-up alone | after its first question and answer |")
    print("|---|---|---|---|")
    for lang in ["all", "en", "zh", "ja"]:
        part = [r for r in rows if lang in ("all", r["lang"])]
        if part:
            print(f"| {lang} | {len(part)} | {pct(part, 'without'):.1f}% | {pct(part, 'with'):.1f}% |")
    print(f"\nsmall talk (\"thanks!\") after the first question and answer recalled something: {small_talk_recalls} of {len(rows)} times\n")


def pct(rows, key):
    return 100.0 * sum(r[key] for r in rows) / len(rows) if rows else float("nan")


def report(label, rows):
    if not rows:
        return
    mean = sum(r["bytes"] for r in rows) / len(rows)
    print(f"| {label} | {len(rows)} | {pct(rows, 'any'):.1f}% | {pct(rows, 'all'):.1f}% | "
          f"{pct(rows, 'base'):.1f}% | {mean:.0f} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("locomo", nargs="?", help="folder of LoCoMo's locomo10_v2/*.json")
    p.add_argument("--fixture", action="append", default=[], help="one of our own conversations (JSON)")
    p.add_argument("--followups", help="our follow-up questions (fixtures/followup.json)")
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "claude-session"))
    p.add_argument("--only", help="comma-separated conversation ids")
    p.add_argument("--budget", type=int, default=4000, help="the baseline's budget (recall.maxChars)")
    p.add_argument("--window", type=int, default=10, help="stm.contextWindow")
    p.add_argument("-v", "--verbose", action="store_true", help="list the misses on stderr")
    p.add_argument("--config", help="JSON merged into the state dir's config.json (e.g. recall keys)")
    p.add_argument("--budgets", help="comma-separated recall.maxChars values: one row each (the baseline "
                   "given the same), every conversation imported once")
    p.add_argument("--index", action="store_true",
                   help="index the archives (session reindex) after the compaction: recall through the index")
    a = p.parse_args()
    global INDEX
    INDEX = a.index
    config = json.loads(a.config) if a.config else None
    if a.followups:
        with open(a.followups) as fh:
            evaluate_followups(a.bin, json.load(fh), a.verbose, config)
        if not a.locomo and not a.fixture:
            return
    if a.budgets:
        if a.fixture or a.followups:
            sys.exit("--budgets sweeps LoCoMo only: run --fixture and --followups without it")
        sweep(a, config, [int(b) for b in a.budgets.split(",") if b.strip()])
        return
    rows = []
    for conv, turns, questions in conversations(a):
        rows += evaluate(a.bin, conv, turns, questions, a.budget, a.window, a.verbose, config)
    for path in a.fixture:
        with open(path) as fh:
            data = json.load(fh)
        turns, questions = fixture_turns(data)
        rows += evaluate(a.bin, data["id"], turns, questions, a.budget, a.window, a.verbose, config)
    print("| split | questions | evidence in context (any) | (all) | plain BM25 baseline | mean recalled bytes |")
    print("|---|---|---|---|---|---|")
    report("all", rows)
    report("dev (26, 30, 41, 42, 43)", [r for r in rows if r["conv"] in DEV])
    report("held out (44, 47, 48, 49, 50)", [r for r in rows if r["conv"] in HELD_OUT])
    for cat, name in CATEGORIES.items():
        report(f"category {cat} ({name})", [r for r in rows if r["cat"] == cat and r["conv"] in DEV | HELD_OUT])
    for conv in sorted({r["conv"] for r in rows}):
        report(f"conversation {conv}", [r for r in rows if r["conv"] == conv])


def conversations(a):
    """Each LoCoMo conversation of the folder (those of --only): its id,
    turns and questions."""
    if not a.locomo:
        return
    only = set(a.only.split(",")) if a.only else None
    for f in sorted(os.listdir(a.locomo)):
        conv = f.removesuffix(".json")
        if not f.endswith(".json") or (only and conv not in only):
            continue
        with open(os.path.join(a.locomo, f)) as fh:
            yield (conv, *locomo_turns(conv, json.load(fh)))


def sweep(a, config, budgets):
    """One row per recall.maxChars: each conversation imported and
    compacted once, its config rewritten for each budget."""
    if not a.locomo:
        sys.exit("--budgets needs LoCoMo's folder")
    rows = {b: [] for b in budgets}
    for conv, turns, questions in conversations(a):
        state = build_state(a.bin, turns, config)
        for b in budgets:
            merged = dict(config or {})
            merged["recall"] = dict(merged.get("recall") or {}, maxChars=b)
            write_config(state, merged)
            rows[b] += evaluate(a.bin, conv, turns, questions, b, a.window, a.verbose, config, state)
    print("| recall.maxChars | all | dev (26, 30, 41, 42, 43) | held out (44, 47, 48, 49, 50) "
          "| plain BM25 baseline (all) | mean recalled bytes |")
    print("|---|---|---|---|---|---|")
    first = rows[budgets[0]] if budgets else []
    print(f"| questions | {len(first)} | {sum(x['conv'] in DEV for x in first)} "
          f"| {sum(x['conv'] in HELD_OUT for x in first)} | | |")
    for b in budgets:
        r = rows[b]
        dev = [x for x in r if x["conv"] in DEV]
        held = [x for x in r if x["conv"] in HELD_OUT]
        share = lambda part, key: f"{pct(part, key):.1f}%" if part else "–"  # noqa: E731
        mean = sum(x["bytes"] for x in r) / len(r) if r else 0
        print(f"| {b} | {share(r, 'any')} | {share(dev, 'any')} | {share(held, 'any')} "
              f"| {share(r, 'base')} | {mean:.0f} |")


if __name__ == "__main__":
    main()
