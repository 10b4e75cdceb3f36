#!/usr/bin/env python3
"""Does small talk recall nothing? For each message of fixtures/small_talk.json,
`context --json --user U -- "<message>"` on a memory full of chat: English on
LoCoMo's conversation 26 (imported as run.py imports it), Chinese, Japanese
and Korean on our own conversations (fixtures/{zh,ja,ko}.json). Prints, per
language and set (fixtures/small_talk.json says which), how many messages
recall anything (the target: none) and the mean bytes they recall; then, for
short messages with something to look for ("content"), how many were taken
for small talk (the target: none); -v lists both kinds of miss.

Usage: small_talk.py LOCOMO_DIR [--bin target/release/claude-session] [-v]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("locomo_dir")
    p.add_argument("--bin", default=os.path.join(run.ROOT, "target", "release", "claude-session"))
    p.add_argument("-v", action="store_true")
    a = p.parse_args()
    talk = json.load(open(os.path.join(HERE, "fixtures", "small_talk.json")))
    memories = {"en": run.locomo_turns("26", json.load(open(os.path.join(a.locomo_dir, "26.json"))))[0]}
    for lang in ("zh", "ja", "ko"):
        memories[lang] = run.fixture_turns(json.load(open(os.path.join(HERE, "fixtures", f"{lang}.json"))))[0]
    print("| language | set | messages | recall nothing | mean recalled bytes |")
    print("|---|---|---|---|---|")
    states = {lang: run.build_state(a.bin, turns, None) for lang, turns in memories.items()}
    for lang, state in states.items():
        for which in ("built", "unseen", "unseen2"):
            report(a, state, lang, which, talk[which][lang])
    print()
    print("| language | content messages | taken for small talk (looked for nothing) |")
    print("|---|---|---|")
    for lang, state in states.items():
        wrong = []
        for message in talk["content"][lang]:
            out = json.loads(run.run(a.bin, state, ["context", "--json", "--explain", "--user", run.USER, "--", message]))
            if not (out["explain"].get("recall") or {}).get("terms"):
                wrong.append(message)
        print(f"| {lang} | {len(talk['content'][lang])} | {len(wrong)} |")
        if a.v:
            for message in wrong:
                print(f"  looked for nothing: {message}", file=sys.stderr)


def report(a, state, lang, which, messages):
    """One set of one language: how many recall nothing, and their bytes."""
    nothing, total_bytes = 0, 0
    for message in messages:
        out = json.loads(run.run(a.bin, state, ["context", "--json", "--user", run.USER, "--", message]))
        recalled = out.get("recalled") or []
        size = sum(len(r["text"].encode()) for r in recalled)
        total_bytes += size
        if recalled:
            if a.v:
                print(f"  recalls {len(recalled)}: {message}", file=sys.stderr)
        else:
            nothing += 1
    n = len(messages)
    print(f"| {lang} | {which} | {n} | {nothing} ({100 * nothing / n:.0f}%) | {total_bytes / n:.0f} |")


main()
