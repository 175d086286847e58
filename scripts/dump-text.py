#!/usr/bin/env python3
"""Write the user and assistant text of a corpus's sessions (the text blocks,
as pi-index indexes them by default) to one file, messages separated by a
NUL line: the input of `cargo run --release --example tokenize`.

    python3 scripts/dump-text.py CORPUS_DIR OUT.txt
"""
import json, os, sys
root, out = sys.argv[1], sys.argv[2]
n=0
with open(out, 'w') as o:
    for d, _, fs in os.walk(root):
        for f in sorted(fs):
            if not f.endswith('.jsonl'): continue
            for line in open(os.path.join(d, f), encoding='utf-8', errors='replace'):
                try: e = json.loads(line)
                except Exception: continue
                m = e.get('message') if isinstance(e, dict) else None
                if not isinstance(m, dict): continue
                if m.get('role') not in ('user', 'assistant'): continue
                c = m.get('content')
                if isinstance(c, str): o.write(c + '\n\x00\n'); n+=1
                elif isinstance(c, list):
                    t = '\n'.join(b.get('text','') for b in c if isinstance(b, dict) and b.get('type')=='text')
                    if t: o.write(t + '\n\x00\n'); n+=1
print(n)
