#!/usr/bin/env python3
"""Deterministic generator of realistic Pi coding-agent session corpora.

Writes Pi session files (JSON Lines, format described in
/work/shared/pi-session-format.md) in Pi's folder layout:

    DIR/--home-user-<project>--/<timestamp>_<session id>.jsonl

Usage:
    python3 scripts/gen-corpus.py --out DIR --size 200MB --seed 42 [--projects N]
                                  [--damage RATE] [--text-share realistic|heavy|FRACTION]
                                  [--json] [--force]

Same seed and size give byte-identical output. Sizes are decimal
(KB = 1000 B, MB = 10^6 B, GB = 10^9 B); KiB/MiB/GiB are binary.
Standard library only (Python 3.11).
"""
from __future__ import annotations

import argparse
import base64
import bisect
import datetime
import glob
import hashlib
import json
import math
import os
import re
import statistics
import sys
import time
from random import Random

ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
ES = json.encoder.encode_basestring   # a str as a JSON string literal, same as ENC(str) (C implementation)

# Planted tokens all start with this prefix; nothing else in the corpus may contain it.
RARE = "zq"

# --text-share: None is the realistic mix (the generator as it always was; user and assistant text
# ~6% of the bytes), else the fraction of each session's bytes to make user and assistant text by
# lengthening the assistant's replies (agents that explain at length, heavy chat users).
TEXT_SHARES = {"realistic": None, "heavy": 0.10}
TEXT_SHARE = None

# ---------------------------------------------------------------------------
# Vocabularies (hand written; never contain the rare prefix)
# ---------------------------------------------------------------------------

EN_WORDS = """the a an and or but if then when while because so that this these those it its we you they
my our your their is are was were be been being have has had do does did not no yes can could should would will
may might must need want try use make fix add remove update change move rename check look see find read write run
test build compile deploy debug parse index search query store load save open close start stop handle return call
pass fail error warning issue bug problem reason result value type field function method struct class module file
folder path line column byte offset size length count number list array map set key string text message session
entry branch tree node leaf root parent child header format version schema document token term phrase score rank
hit match filter sort limit page cache memory disk speed fast slow large small big tiny new old first last next
previous same different other each every all some any more less most least only also just still already again now
later before after during since until about above below between into over under with without within across through
per via maybe probably actually really quite very rather almost enough instead otherwise however therefore
""".split()

TECH_WORDS = """tantivy rust cargo crate serde json jsonl unicode tokenizer analyzer segment merge commit writer reader
searcher schema facet bm25 mmap async tokio thread mutex channel lifetime borrow trait impl generic closure iterator
vector slice buffer stream socket http api endpoint request response handler middleware router database sqlite
postgres migration transaction docker container kubernetes yaml toml config env variable flag option cli argument
subcommand stdout stderr exit signal process pipe regex glob pattern benchmark profile flamegraph allocation latency
throughput regression fixture snapshot assertion panic backtrace unwrap enum variant macro derive feature workspace
dependency lockfile semver release changelog pipeline lint clippy rustfmt typescript javascript node npm pnpm react
component hook state props webpack vite eslint prettier python pytest pip venv numpy pandas dataframe notebook git
rebase stash diff patch hunk blame bisect compaction summary thinking toolcall usage provider model leaf parentid
timestamp cwd manifest corpus shard posting skiplist fastfield docstore collector weight scorer explain highlight
snippet fuzzy prefix stemmer stopword ngram utf8 bom newline escape quote backslash surrogate codepoint grapheme
""".split()

UNI_WORDS = """café naïve résumé déjà Übersicht Größe straße façade señor niño coração ação Ελληνικά Привет данные
索引 会话 文件 搜索 测试 检查 分支 日本語 検索 ファイル テスト セッション 한국어 검색 파일 µs °C ±5% ×2 → … — «guillemets»
“quoted” ‘single’ Zürich Kraków Dvořák Ångström São Paulo İstanbul""".split()

EMOJI = ["🚀", "✅", "🔥", "👍", "🎉", "🐛", "⚠️", "💡", "📦", "🙏", "😅", "🤔", "❌", "✨", "🧪"]

FOREIGN_TPL = [
    "Peux-tu corriger la fonction ¤f ? Elle échoue quand le fichier contient des caractères accentués (é, à, ç).",
    "Le résumé de la session doit être indexé aussi, s'il te plaît.",
    "Est-ce que l'index gère les fichiers déjà compactés ? Je vois « ¤e » dans les logs.",
    "Bitte prüfe, warum die Größe der Datei ¤p falsch berechnet wird.",
    "Können wir die Übersicht nach Datum sortieren? Die Reihenfolge ist gerade zufällig.",
    "¿Puedes añadir una opción para buscar sólo en las sesiones de este año?",
    "Não entendi a mudança em ¤p, pode explicar a ação de ¤f?",
    "请检查一下索引为什么这么慢，文件大约有 ¤n MB。",
    "这个函数在处理中文分词时会出错，比如“会话文件搜索”。",
    "请把 ¤f 改成流式读取，不要一次性加载整个文件。",
    "セッションファイルの検索結果が空になります。原因を調べてください。",
    "テストを追加して、もう一度 `¤c` を実行してください。",
    "이 함수가 빈 파일을 처리할 때 패닉이 발생합니다. ¤p 를 확인해 주세요.",
    "Почему поиск не находит слово «данные» в ¤p?",
    "Ελέγξτε το αρχείο ¤p παρακαλώ.",
    "Fix the emoji handling 🐛: strings like \"🚀 launch\" get split wrong by ¤f.",
    "Zürich → São Paulo → 東京: the sort order of these names is wrong in ¤T.",
]

USER_TPL = [
    "Can you look at ¤p and figure out why ¤f returns an empty result?",
    "The test ¤t fails with `¤e`. Please fix it.",
    "Please add a `--¤F` option to the CLI that controls the ¤k ¤w.",
    "Refactor ¤f in ¤p so it doesn't allocate on every call.",
    "Why is indexing so slow? It takes ¤n seconds for a ¤n MB file.",
    "ok, now run the tests again",
    "looks good, commit it",
    "No, that's wrong: the ¤w field is a number, not a string.",
    "Write a short section in the README explaining how the ¤k works here.",
    "I still see `¤e` when I run `¤c`.",
    "What does ¤T actually do? I don't remember writing it.",
    "Rename ¤f to ¤f everywhere, including the tests.",
    "Let's handle the case where the ¤k is missing instead of panicking.",
    "can you check git log and summarize what changed since yesterday?",
    "Use ¤k instead of ¤k for this, it should be faster.",
    "Split ¤p into smaller modules, it's getting too big (¤n lines).",
    "Add a test that covers ¤w input with unicode like «¤x».",
    "The output should be sorted by ¤w, then by ¤w.",
    r"Make sure it works on Windows paths like C:\Users\dev\¤v\¤v.jsonl too.",
    "Please don't touch ¤p, someone else is working on it.",
    "hmm, that broke ¤t",
    "Explain the difference between ¤T and ¤T.",
    "Is there a way to make ¤f stream instead of loading everything in memory?",
    "Check that `¤c` passes before you finish.",
    "The JSON has `\"¤w\": null` sometimes; treat null like missing.",
    "Add logging around ¤f so we can see the ¤k in production.",
    "Why does ¤f take a `&mut ¤T` here? It never mutates it.",
    "We need to support the old format too, where the ¤w key is absent.",
    "Can you make the error message for ¤e more helpful?",
    "Move the ¤k code out of ¤p into its own module.",
    "the ¤k ¤w is ¤s",
    "I think the bug is in ¤f, around line ¤n.",
    "Benchmark it against the previous version with `¤c`.",
    "Update the docs in ¤p to match the new behaviour.",
]

SHORT_USER = ["continue", "yes", "go ahead", "ok", "do it", "thanks! that works 👍", "perfect", "try again",
              "no", "wait", "stop, that's not what I meant", "yes please", "LGTM", "ship it 🚀", "hmm",
              "ok continue", "sounds good", "what about the tests?", "and the docs?", "merci !", "danke"]

ASSIST_TPL = [
    "I'll start by reading ¤p to see how ¤f is used.",
    "The problem is that `¤f` assumes the ¤w is always present, but older files don't have it.",
    "I've updated `¤p`: `¤f` now returns early when the ¤k is empty.",
    "All ¤n tests pass now.",
    "The build is clean, with no new warnings.",
    "I changed `¤T` to hold a `Vec<¤T>` instead of a `HashMap`, which keeps the insertion order.",
    "This avoids the extra allocation per ¤w and should make `¤f` about ¤n% faster.",
    "Note that `¤c` still prints a warning about `¤v`, but it's unrelated to this change.",
    "There are two places that parse the ¤w: `¤f` in `¤p` and `¤f` in `¤p`.",
    "I didn't touch `¤p`, as you asked.",
    "One caveat: the ¤k handling is best effort when a line is cut short.",
    "The failing test was relying on the old ¤w order.",
    "I reproduced the issue with a ¤n-line fixture.",
    "If you want, I can also add a benchmark for `¤f`.",
    "`¤e` happens because `¤f` is called before `¤f` finishes.",
    "The ¤k now streams line by line, so memory stays flat even for ¤n MB files.",
    "I kept the public API of `¤T` unchanged; only the internals moved.",
    "The ¤w values are now trimmed before they are compared.",
    "Unicode input such as «¤x» is handled by the same code path now.",
    "I added ¤n new tests in `¤p` covering the edge cases.",
    "This is consistent with how `¤T` handles the ¤w elsewhere.",
    "The regression came from commit ¤h, which changed the ¤k defaults.",
    "With this change `¤c` goes from ¤n ms to ¤n ms on my machine.",
    "The `--¤F` flag is documented in `¤p` now.",
    "You may want to review the ¤w naming before merging.",
]

ACTION_TPL = [
    "Let me check ¤p.", "Now let me run the tests.", "Let me look at how `¤f` is called.",
    "I'll fix the ¤w handling in `¤p`.", "Let me search for usages of `¤f`.",
    "Running the build to check for errors.", "Now I'll update the tests.",
    "That failed; let me look at the error more closely.", "Let me read the rest of the file.",
    "I'll apply the same change to `¤p`.", "Let me verify with `¤c`.", "Checking the git history first.",
]

THINK_TPL = [
    "The user wants ¤s. I should first check ¤p.",
    "`¤f` is called from `¤f`, so changing its signature means updating ¤p as well.",
    "Wait, the ¤w could be null here. I need to handle that.",
    "Maybe the simplest fix is to ¤s.",
    "Let me think about the edge cases: an empty ¤w, a missing ¤w, and a ¤w longer than ¤n bytes.",
    "The error `¤e` suggests ¤s.",
    "Actually, I think the issue is in ¤T::¤f rather than in the parser.",
    "I should not touch ¤p since the user said someone else is editing it.",
    "OK so the plan: 1) read ¤p, 2) fix `¤f`, 3) run `¤c`.",
    "Hmm, the test output shows ¤n failures, all in ¤t. Probably the same root cause.",
    "The ¤k is ¤s, which would explain the slowdown.",
    "I could use a `BufReader` with a larger capacity, but the real cost is the ¤k.",
    "Let me reconsider. If the ¤w is absent we should fall back to the ¤w.",
    "This looks like a lifetime issue: `¤v` is borrowed while `¤v` is being mutated.",
    "The JSON escapes like \\n and \\\" make the line longer than the ¤w limit.",
]

LABELS = ["checkpoint", "before-refactor", "works", "wip", "good", "bug-repro", "✅ tests pass", "baseline",
          "try-2", "revert here", "perf ok", "ne pas toucher"]

SESSION_NAMES_TPL = ["Fix ¤k in ¤f", "Refactor ¤T", "Add --¤F option", "Debug ¤e", "Speed up ¤f",
                     "Docs for ¤k", "débogage du parseur ¤w", "调试索引 ¤w", "Review ¤p", "Tests for ¤T",
                     "¤k migration", "Investigate ¤w ¤w"]

ERRORS_TPL = [
    "thread 'main' panicked at src/¤v.rs:¤n:¤n: called `Option::unwrap()` on a `None` value",
    "error[E0382]: borrow of moved value: `¤v`",
    "error[E0308]: mismatched types: expected `¤T`, found `&¤T`",
    "TypeError: Cannot read properties of undefined (reading '¤c')",
    "KeyError: '¤v'",
    "expected value at line 1 column ¤n",
    "invalid UTF-8 sequence of 1 bytes from index ¤n",
    "No such file or directory (os error 2)",
    "LockBusy: failed to acquire index lock",
    "EOF while parsing a string at line 1 column ¤n",
    "AssertionError: assert ¤n == ¤n",
    "Permission denied (os error 13)",
    "index out of bounds: the len is ¤n but the index is ¤n",
]

COMMANDS = [  # (template, output kind)
    ("cargo build --release 2>&1 | tail -40", "cbuild"),
    ("cargo build", "cbuild"),
    ("cargo clippy --all-targets -- -D warnings", "cbuild"),
    ("cargo test ¤f -- --nocapture", "ctest"),
    ("cargo test 2>&1 | tail -60", "ctest"),
    ("rg -n \"¤f\" src/", "grep"),
    ("rg -n --type rust '¤T::' .", "grep"),
    ("grep -rn \"¤w\" --include='*.ts' src | head -50", "grep"),
    ("git status --short", "gstatus"),
    ("git log --oneline -20", "glog"),
    ("git log -5 --stat", "glog"),
    ("git diff ¤p", "gdiff"),
    ("git diff --stat HEAD~3", "gdiff"),
    ("ls -la ¤d", "ls"),
    ("find . -name '*.rs' | xargs wc -l | sort -n | tail -20", "ls"),
    ("python3 -m pytest -x -q tests/test_¤f.py", "pytest"),
    ("npm run build 2>&1 | tail -30", "npm"),
    ("npx tsc --noEmit", "npm"),
    ("jq '.items[] | select(.type == \"¤w\")' data/¤v.json", "json"),
    ("cat package.json", "json"),
    ("curl -s localhost:8080/api/¤w | jq .", "json"),
    ("tail -n 200 logs/app.log", "log"),
    ("head -c 2000 ~/.pi/agent/sessions/--home-user-¤v--/*.jsonl", "jsonl"),
    ("wc -l ~/.pi/agent/sessions/*/*.jsonl | tail -5", "ls"),
    ("hyperfine 'target/release/pi-index build' --warmup 1", "bench"),
    ("time ./target/release/¤v --¤F", "bench"),
]

BASH_EXEC_CMDS = ["git status", "ls", "cargo check", "git diff --stat", "pwd", "git log --oneline -5",
                  "cat Cargo.toml", "npm test", "make", "df -h ."]

CRATES = ["serde", "serde_json", "tantivy", "tokio", "anyhow", "thiserror", "clap", "regex", "memchr", "rayon",
          "walkdir", "ignore", "crossbeam", "parking_lot", "tracing", "log", "once_cell", "smallvec", "bytes",
          "itertools", "chrono", "uuid", "tempfile", "criterion", "proptest", "libc", "memmap2", "zstd", "lz4_flex"]

SYL = ("ab ac ad al an ar as at ba be bi bo bu ca ce ci co cu da de di do du el en er es et fa fe fi fo ga ge gi go "
       "ha he hi ho id il im in ir is it ka ke ki ko la le li lo lu ma me mi mo mu na ne ni no nu ob od ol om on op "
       "or os ot pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu ul um un ur us va ve vi vo wa we wi ya "
       "yo").split()

VAR_SHORT = ["x", "i", "n", "buf", "line", "path", "entry", "doc", "msg", "idx", "len", "off", "ctx", "cfg", "res",
             "err", "val", "key", "node", "item", "parts", "out", "reader", "writer", "tok", "hits", "rows"]

PROJECT_NAMES = ["pi-index", "pi-mono", "webshop", "dotfiles", "blog", "api-server", "ml-experiments",
                 "tantivy-fork", "infra", "notes", "cli-tools", "game-engine", "data-pipeline", "mobile-app",
                 "auth-service", "docs-site", "scraper", "compiler", "chat-bot", "billing", "search-ui", "kv-store",
                 "image-resize", "home-automation", "résumé-builder", "数据分析", "work/backend", "work/frontend",
                 "work/shared-libs", "oss/ripgrep-patch", "oss/serde-fork", "playground", "advent-of-code", "thesis",
                 "photo-sync", "budget-app", "rss-reader", "wasm-demo", "terraform", "monorepo"]

MODELS = [  # (provider, api, model, rates per Mtok: input, output, cacheRead, cacheWrite, weight)
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5", (3.0, 15.0, 0.3, 3.75), 70),
    ("anthropic", "anthropic-messages", "claude-opus-4-5", (5.0, 25.0, 0.5, 6.25), 15),
    ("openai", "openai-responses", "gpt-5", (1.25, 10.0, 0.125, 0.0), 8),
    ("google", "google-generative-ai", "gemini-2.5-pro", (1.25, 10.0, 0.31, 0.0), 7),
]
THINK_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"]

# ---------------------------------------------------------------------------
# Code and output templates (¤X placeholders, one-letter keys; raw strings so
# backslashes stay literal and end up as JSON escapes)
# ---------------------------------------------------------------------------

RS_STMTS = [
    r'let ¤v = ¤v.¤f()?;',
    r'let mut ¤v = Vec::with_capacity(¤n);',
    r'if ¤v.is_empty() { return Ok(None); }',
    r'println!("{}: {:?}\n", ¤v, ¤v);',
    r'let re = Regex::new(r"^\s*(\d+)\s+(\w+)$").unwrap();',
    r'return Err(anyhow!("cannot ¤w \"{}\": {}", ¤v.display(), e));',
    r'let path = PathBuf::from("C:\\Users\\dev\\¤v");',
    r'writeln!(out, "{}\t{}", ¤v, ¤v)?;',
    r'// ¤s',
    r'// TODO(¤v): ¤s',
    r'for (i, ¤v) in ¤v.iter().enumerate() {',
    r'    ¤v.push_str("\\n");',
    r'}',
    r'let ¤v = match ¤v { Some(x) => x, None => return Err(anyhow!("missing ¤w")) };',
    r'let ¤v: ¤T = serde_json::from_str(&line).context("bad json")?;',
    r'assert_eq!(¤v.len(), ¤n, "expected ¤n ¤w");',
    r'self.¤v.insert(¤v.clone(), ¤n);',
    r'let raw = "{\"type\":\"session\",\"id\":\"¤h\",\"cwd\":\"/home/u/¤v\"}";',
    r'debug!(target: "¤w", "¤s: {}", ¤v);',
    r'let ¤v = ¤v.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty());',
    r'if let Some(¤v) = ¤v.get("¤w").and_then(|v| v.as_str()) {',
    r'    return Ok(¤T::from(¤v));',
    r'let bytes = std::fs::read(&¤v).with_context(|| format!("reading {}", ¤v.display()))?;',
    r'let text = String::from_utf8_lossy(&bytes[¤n..]);',
    r'let msg = "¤x";',
    r'const ¤V: usize = ¤n;',
]
RS_OPEN = [r'pub fn ¤f(&self, ¤v: &¤T) -> Result<¤T> {', r'fn ¤f(¤v: &str) -> Option<¤T> {',
           r'pub(crate) fn ¤f<R: BufRead>(¤v: R, ¤v: usize) -> anyhow::Result<Vec<¤T>> {',
           r'impl ¤T {', r'#[test]' + '\n' + r'fn ¤f() {', r'async fn ¤f(&mut self) -> Result<(), Error> {']
RS_HEAD = [r'use std::collections::HashMap;', r'use std::io::{BufRead, BufReader, Write};',
           r'use anyhow::{anyhow, Context, Result};', r'use serde::{Deserialize, Serialize};',
           r'use crate::¤v::{¤T, ¤T};', r'use tantivy::schema::{Schema, STORED, TEXT};']

TS_STMTS = [
    r'const ¤c = await ¤c(¤c);',
    r'let ¤c: ¤T[] = [];',
    r'if (!¤c) { throw new Error(`missing ¤w: ${¤c}`); }',
    r'console.log("¤w:", JSON.stringify(¤c, null, 2));',
    r'const re = /^\s*(\d+)\s+"([^"]*)"$/;',
    r'for (const ¤c of ¤c.split("\n")) {',
    r'  ¤c.push(¤c.replace(/\\/g, "/"));',
    r'}',
    r'// ¤s',
    r'return { type: "¤w", id: "¤h", ¤c };',
    r'const path = join(homedir(), ".pi", "agent", "sessions", ¤c);',
    r'export type ¤T = { ¤c: string; ¤c?: number };',
    r'const line = JSON.stringify({ type: "message", id, parentId: ¤c ?? null });',
    r'appendFileSync(file, line + "\n");',
    r'const msg = "¤x";',
    r'if (¤c.length > ¤n) ¤c = ¤c.slice(-¤n);',
    r"""logger.warn(`could not parse line ${i}: "${line.slice(0, 80)}"`);""",
]
TS_OPEN = [r'export function ¤c(¤c: ¤T): ¤T {', r'async function ¤c(¤c: string): Promise<¤T[]> {',
           r'export class ¤T {', r'const ¤c = (¤c: ¤T) => {', r'it("¤s", async () => {']
TS_HEAD = [r'import { readFileSync, appendFileSync } from "node:fs";', r'import { join } from "node:path";',
           r'import type { ¤T, ¤T } from "./¤c.js";', r'import { homedir } from "node:os";']

PY_STMTS = [
    r'¤v = ¤v.¤f(¤v)',
    r'if not ¤v:',
    r'    return None',
    r'print(f"{¤v!r}: {¤v}\n")',
    r'pattern = re.compile(r"^\s*(\d+)\s+\"(.*)\"$")',
    r'raise ValueError(f"cannot ¤w {¤v!r}: {exc}")',
    r'path = Path(r"C:\Users\dev\¤v")',
    r'for i, ¤v in enumerate(¤v):',
    r'    ¤v.append(¤v.strip("\\n"))',
    r'# ¤s',
    r'data = json.loads(line)  # may raise json.JSONDecodeError',
    r'with open(¤v, "rb") as fh:',
    r'    ¤v = fh.read().decode("utf-8", errors="replace")',
    r'assert len(¤v) == ¤n, "expected ¤n ¤w"',
    r'self.¤v[¤v] = ¤n',
    r'msg = "¤x"',
    r'return {"type": "¤w", "id": "¤h", "¤v": ¤v}',
]
PY_OPEN = [r'def ¤f(self, ¤v: str) -> ¤T:', r'def ¤f(¤v, ¤v=None):', r'class ¤T:', r'async def ¤f(¤v):',
           r'def test_¤f(tmp_path):']
PY_HEAD = [r'import json', r'import re', r'from pathlib import Path', r'from typing import Any, Iterator',
           r'from .¤v import ¤T']

OUT_TPL = {
    "cbuild": [r"   Compiling ¤K v0.¤n.¤n", r"   Compiling ¤v v0.1.0 (/home/user/¤v)",
               r"warning: unused variable: `¤v`", r"  --> src/¤v.rs:¤n:¤n", r"   |",
               r"¤n |     let ¤v = ¤v.¤f();", r"   |         ^^^^ help: if this is intentional, prefix it with an underscore: `_¤v`",
               r"error[E0308]: mismatched types", r"   = note: expected reference `&str`" + "\n" + r"              found struct `String`",
               r"warning: `¤v` (lib) generated ¤n warnings", r"    Finished `release` profile [optimized] target(s) in ¤n.¤ns",
               r"error: could not compile `¤v` (bin ""¤v"") due to ¤n previous errors"],
    "ctest": [r"test ¤v::tests::¤f ... ok", r"test ¤v::tests::¤f ... ok", r"test ¤v::tests::¤f ... FAILED",
              r"running ¤n tests", r"---- ¤v::tests::¤f stdout ----",
              r"thread '¤v::tests::¤f' panicked at src/¤v.rs:¤n:¤n:",
              r"assertion `left == right` failed" + "\n" + r'  left: "¤w\n¤w"' + "\n" + r' right: "¤w"',
              r"test result: FAILED. ¤n passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in ¤n.¤ns",
              r"     Running tests/¤v.rs (target/debug/deps/¤v-¤h)"],
    "grep": None,  # built from code lines
    "gstatus": [r" M src/¤v.rs", r"?? src/¤v/", r" M Cargo.toml", r" D tests/fixtures/¤v.jsonl", r"A  scripts/¤v.py"],
    "glog": [r"¤h ¤s", r"¤h fix(¤v): ¤s", r"¤h feat: ¤s", r"commit ¤H" + "\n" + r"Author: Dev <dev@example.com>" + "\n" + r"Date:   Mon Jan 12 10:22:01 2026 +0100" + "\n\n" + r"    ¤s",
             r" src/¤v.rs | ¤n ++++++++------"],
    "gdiff": None,  # built from code lines
    "ls": [r"-rw-r--r--  1 user user  ¤n Jan 12 10:22 ¤v.rs", r"drwxr-xr-x  4 user user  4096 Jan  9 18:01 ¤v",
           r"-rw-r--r--  1 user user ¤n Dec 30 09:13 2025-12-30T09-13-44-120Z_¤h.jsonl", r"  ¤n ./src/¤v.rs",
           r"  ¤n total"],
    "pytest": [r"tests/test_¤f.py::test_¤f PASSED", r"tests/test_¤f.py::test_¤f FAILED",
               r'  File "/home/user/¤v/¤v.py", line ¤n, in ¤f' + "\n" + r'    ¤v = json.loads(line)',
               r"E       AssertionError: assert '¤w' == '¤w\n'", r"E       KeyError: '¤v'",
               r"==== ¤n passed, 1 failed in ¤n.¤ns ===="],
    "npm": [r"> ¤v@1.¤n.0 build", r"> tsc -p tsconfig.json", r"src/¤c.ts(¤n,¤n): error TS2339: Property '¤c' does not exist on type '¤T'.",
            r"vite v5.¤n.0 building for production...", r"✓ ¤n modules transformed.",
            r"dist/assets/index-¤h.js   ¤n.¤n kB │ gzip: ¤n.¤n kB"],
    "json": None,   # built with json.dumps
    "log": [r'2026-01-12T10:22:¤n.¤nZ INFO  ¤v::http: request {"method":"GET","path":"/api/¤w","status":200,"ms":¤n}',
            r'2026-01-12T10:22:¤n.¤nZ WARN  ¤v: slow query "SELECT * FROM ¤w WHERE id = \"¤h\"" took ¤nms',
            r'2026-01-12T10:22:¤n.¤nZ ERROR ¤v: ¤e',
            r'2026-01-12T10:22:¤n.¤nZ DEBUG ¤v: payload="{\"¤w\":\"¤x\",\"n\":¤n}"'],
    "jsonl": None,  # embedded Pi lines
    "bench": [r"Benchmark 1: target/release/¤v build", r"  Time (mean ± σ):      ¤n.¤n s ±  0.¤n s    [User: ¤n.¤n s, System: 0.¤n s]",
              r"  Range (min … max):    ¤n.¤n s … ¤n.¤n s    10 runs", r"real	0m¤n.¤ns", r"user	0m¤n.¤ns", r"sys	0m0.¤ns"],
}

PH = re.compile(r"¤(.)")
TEXT_TPLS = frozenset(USER_TPL + ASSIST_TPL + ACTION_TPL + THINK_TPL + FOREIGN_TPL)


def iso(ms: int) -> str:
    t = time.gmtime(ms // 1000)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (t[0], t[1], t[2], t[3], t[4], t[5], ms % 1000)


def ms_of(y, m, d):
    return int((datetime.datetime(y, m, d) - datetime.datetime(1970, 1, 1)).total_seconds()) * 1000


def parse_size(s: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?)B?\s*", s, re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {s!r} (use e.g. 5MB, 200MB, 1GB)")
    num, unit, bi = float(m.group(1)), m.group(2).upper(), m.group(3)
    base = 1024 if bi else 1000
    return int(num * base ** " KMGT".index(unit or " "))


# ---------------------------------------------------------------------------
# Pools: everything random that is expensive is built once from the seed
# ---------------------------------------------------------------------------

class Pools:
    real = False          # RealPools (--vocab real) sets this
    tech = TECH_WORDS     # what ¤k draws from
    crates = CRATES       # what ¤K draws from

    def __init__(self, seed: int):
        r = self.r = Random(seed * 1_000_003 + 17)
        words = [w for w in TECH_WORDS if w.isalpha()]
        self.words = EN_WORDS + TECH_WORDS
        self.snake = []
        for _ in range(4000):
            k = r.choice((1, 2, 2, 2, 3))
            parts = [r.choice(words) if r.random() < 0.75 else r.choice(SYL) + r.choice(SYL) for _ in range(k)]
            self.snake.append("_".join(parts))
        self.camel = [s.split("_")[0] + "".join(p.capitalize() for p in s.split("_")[1:]) for s in self.snake[:3000]]
        self.types = ["".join(p.capitalize() for p in s.split("_")) for s in self.snake[1000:4000]]
        self.vars = VAR_SHORT + self.snake[:600]
        self.const = [s.upper() for s in self.snake[2000:2400]]
        self.phrases = [" ".join(r.choices(self.words, k=r.randint(3, 9))) for _ in range(3000)]
        self.errors = [self.realize(t) for t in ERRORS_TPL for _ in range(40)]
        dirs = ["src", "src/index", "src/session", "src/cli", "tests", "tests/fixtures", "crates/core/src",
                "lib", "app", "app/components", "scripts", "docs", "benches", "pkg/api", "internal/store"]
        self.dirs = dirs
        exts = {"rust": "rs", "ts": "ts", "python": "py"}
        self.paths = [f"{r.choice(dirs)}/{r.choice(self.snake)}.{r.choice(list(exts.values()))}" for _ in range(1500)]
        self.tests = [f"{r.choice(self.snake)}::tests::{r.choice(self.snake)}" for _ in range(800)]
        self.flags = [s.replace("_", "-") for s in self.snake[:500]]
        self.commands = []
        for _ in range(1500):
            tpl, kind = r.choice(COMMANDS)
            self.commands.append((self.realize(tpl), kind))
        # sentences
        self.user_s = [self.realize(r.choice(USER_TPL)) for _ in range(6000)]
        self.foreign_s = [self.realize(r.choice(FOREIGN_TPL)) for _ in range(800)]
        self.assist_s = [self.realize(r.choice(ASSIST_TPL)) for _ in range(6000)]
        self.action_s = [self.realize(r.choice(ACTION_TPL)) for _ in range(2000)]
        self.think_s = [self.realize(r.choice(THINK_TPL)) for _ in range(6000)]
        self.names = [self.realize(r.choice(SESSION_NAMES_TPL)) for _ in range(500)]
        # code: blocks per language, then files
        self.code_lines = {}
        self.blocks = {}
        for lang, stmts, opens, heads, ind in (("rust", RS_STMTS, RS_OPEN, RS_HEAD, "    "),
                                               ("ts", TS_STMTS, TS_OPEN, TS_HEAD, "  "),
                                               ("python", PY_STMTS, PY_OPEN, PY_HEAD, "    ")):
            lines = [self.realize(r.choice(stmts)) for _ in range(5000)]
            self.code_lines[lang] = lines
            blocks = []
            for _ in range(1500):
                body = [ind + x for x in r.choices(lines, k=r.randint(3, 28))]
                head = self.realize(r.choice(opens))
                doc = ("/// " if lang == "rust" else "// " if lang == "ts" else "# ") + r.choice(self.phrases)
                tail = [] if lang == "python" else ["}"]
                blocks.append("\n".join([doc, head] + body + tail))
            self.blocks[lang] = (blocks, [self.realize(h) for h in heads for _ in range(20)])
        self.files = {}
        for lang in ("rust", "ts", "python"):
            blocks, heads = self.blocks[lang]
            fl = []
            for _ in range(300):
                target = min(160_000, max(300, int(r.lognormvariate(math.log(3000), 1.0))))
                parts = r.sample(heads, r.randint(2, 6))
                n = sum(len(p) for p in parts)
                body = []
                while n < target:
                    b = r.choice(blocks)
                    body.append(b)
                    n += len(b) + 2
                fl.append("\n".join(parts) + "\n\n" + "\n\n".join(body) + "\n")
            self.files[lang] = fl
        self.files["md"] = [self.markdown(r.randint(800, 12000)) for _ in range(80)]
        self.files["json"] = [self.json_text(r.randint(300, 16000)) for _ in range(40)]
        self.files["toml"] = [self.toml_text() for _ in range(40)]
        # command outputs
        self.out_lines = {}
        for kind, tpls in OUT_TPL.items():
            if tpls is not None:
                self.out_lines[kind] = [self.realize(r.choice(tpls)) for _ in range(1500)]
        all_code = self.code_lines["rust"] + self.code_lines["ts"] + self.code_lines["python"]
        self.out_lines["grep"] = [f"{r.choice(self.paths)}:{r.randint(1, 2000)}:{r.choice(all_code)}"
                                  for _ in range(4000)]
        self.out_lines["gdiff"] = [r.choice(("+", "-", " ", " ")) + r.choice(all_code) for _ in range(4000)] + \
            [f"@@ -{a},{r.randint(3, 30)} +{a},{r.randint(3, 30)} @@ fn {r.choice(self.snake)}"
             for a in (r.randint(1, 900) for _ in range(300))] + \
            [f"diff --git a/{p} b/{p}\nindex {r.getrandbits(28):07x}..{r.getrandbits(28):07x} 100644\n--- a/{p}\n+++ b/{p}"
             for p in (r.choice(self.paths) for _ in range(200))]
        self.out_lines["json"] = self.json_text(120_000).split("\n")
        self.out_lines["jsonl"] = self.fake_pi_lines(3000)
        # base64 blobs (thinking signatures, images)
        def b64(n):  # valid base64 without 'q'/'Q', so it can never spell the rare prefix
            return base64.b64encode(r.randbytes(n)).decode().replace("q", "p").replace("Q", "P")
        self.sigs = [b64(r.randint(150, 700)) for _ in range(300)]
        self.images = ["iVBORw0KGgo" + b64(r.randint(8_000, 110_000)) for _ in range(30)]
        self.check()
        # JSON-encoded bodies (no quotes) of pool strings: joined texts are encoded by joining these,
        # which is exact because JSON string escaping works character by character.
        em = {}
        for coll in (list(self.out_lines.values()) + [self.think_s, self.sigs, self.images] +
                     [v for v in self.files.values()]):
            for x in coll:
                if x not in em:
                    em[x] = ES(x)[1:-1]
        self.emap = em
        self.flines_cache: dict = {}
        self._avg: dict = {}

    def flines(self, content: str):
        """(lines, encoded lines) of a pool file, cached."""
        x = self.flines_cache.get(content)
        if x is None:
            ls = content.split("\n")
            x = self.flines_cache[content] = (ls, [ES(y)[1:-1] for y in ls])
        return x

    # -- template realisation --------------------------------------------
    def fill(self, k: str) -> str:
        r = self.r
        if k == "v":
            return r.choice(self.vars)
        if k == "f":
            return r.choice(self.snake)
        if k == "c":
            return r.choice(self.camel)
        if k == "T":
            return r.choice(self.types)
        if k == "V":
            return r.choice(self.const)
        if k == "n":
            return str(int(r.expovariate(1 / 300)))
        if k == "h":
            return "%08x" % r.getrandbits(32)
        if k == "H":
            return "%040x" % r.getrandbits(160)
        if k == "w":
            return r.choice(self.words)
        if k == "k":
            return r.choice(self.tech)
        if k == "s":
            return r.choice(self.phrases) if hasattr(self, "phrases") else " ".join(r.choices(self.words, k=5))
        if k == "x":
            return " ".join(r.choices(UNI_WORDS, k=r.randint(1, 3))) + (r.choice(EMOJI) if r.random() < 0.3 else "")
        if k == "p":
            return r.choice(self.paths)
        if k == "e":
            return r.choice(self.errors)
        if k == "t":
            return r.choice(self.tests)
        if k == "F":
            return r.choice(self.flags)
        if k == "K":
            return r.choice(self.crates)
        if k == "d":
            return r.choice(self.dirs)
        if k == "S":   # a real sentence (--vocab real only)
            return r.choice(self.sents)
        raise KeyError(k)

    def realize(self, tpl: str) -> str:
        if "`¤c`" in tpl and tpl in TEXT_TPLS and hasattr(self, "commands"):
            tpl = tpl.replace("`¤c`", "`" + self.r.choice(self.commands)[0] + "`")
        return PH.sub(lambda m: self.fill(m.group(1)), tpl)

    def markdown(self, size: int) -> str:
        r = self.r
        out, n = [f"# {r.choice(self.types)}\n"], 0
        while n < size:
            u = r.random()
            if u < 0.15:
                s = f"## {r.choice(self.phrases).capitalize()}\n"
            elif u < 0.55:
                s = " ".join(r.choices(self.assist_s if hasattr(self, "assist_s") else self.phrases, k=r.randint(2, 6))) + "\n"
            elif u < 0.8:
                s = "\n".join("- " + x for x in r.choices(self.phrases, k=r.randint(2, 6))) + "\n"
            else:
                lang = r.choice(("rust", "ts", "python", "bash"))
                code = r.choice(self.blocks[lang][0]) if hasattr(self, "blocks") and lang in self.blocks else \
                    "\n".join(c for c, _ in r.sample(self.commands, 3))
                s = f"```{lang}\n{code}\n```\n"
            out.append(s)
            n += len(s)
        return "\n".join(out)

    def json_obj(self, depth: int):
        r = self.r
        if depth <= 0 or r.random() < 0.3:
            u = r.random()
            if u < 0.4:
                return r.choice((r.choice(self.phrases), r.choice(self.paths), r.choice(UNI_WORDS),
                                 r.choice(self.errors), "line one\nline two\t\"quoted\" \\ end"))
            if u < 0.7:
                return int(r.expovariate(1 / 1000))
            if u < 0.8:
                return r.random() < 0.5
            if u < 0.85:
                return None
            return round(r.random() * 100, 3)
        if r.random() < 0.35:
            return [self.json_obj(depth - 1) for _ in range(r.randint(1, 5))]
        return {r.choice(self.camel): self.json_obj(depth - 1) for _ in range(r.randint(1, 6))}

    def json_text(self, size: int) -> str:
        parts, n = [], 0
        while n < size:
            s = json.dumps(self.json_obj(4), ensure_ascii=False, indent=2)
            parts.append(s)
            n += len(s)
        return "[\n" + ",\n".join(parts) + "\n]\n"

    def toml_text(self) -> str:
        r = self.r
        lines = ["[package]", f'name = "{r.choice(self.flags)}"', 'version = "0.1.0"', 'edition = "2021"', "",
                 "[dependencies]"]
        for c in r.sample(CRATES, r.randint(3, 12)):
            lines.append(f'{c} = {{ version = "{r.randint(0, 4)}.{r.randint(0, 30)}", features = ["{r.choice(self.words)}"] }}')
        return "\n".join(lines) + "\n"

    def fake_pi_lines(self, n: int):
        r = self.r
        out = []
        for _ in range(n):
            obj = {"type": "message", "id": "%08x" % r.getrandbits(32), "parentId": "%08x" % r.getrandbits(32),
                   "timestamp": iso(ms_of(2026, 1, 1) + r.randrange(10**9)),
                   "message": {"role": r.choice(("user", "assistant")),
                               "content": [{"type": "text", "text": r.choice(self.assist_s)}],
                               "timestamp": ms_of(2026, 1, 1) + r.randrange(10**9)}}
            out.append(ENC(obj))
        return out

    def check(self):
        def walk(x):
            if isinstance(x, str):
                assert RARE not in x.lower(), x
            elif isinstance(x, (list, tuple)):
                for y in x:
                    walk(y)
            elif isinstance(x, dict):
                for y in x.values():
                    walk(y)
        for v in vars(self).values():
            if isinstance(v, dict) and all(isinstance(x, list) for x in v.values()):
                v = list(v.values())
            if isinstance(v, list) and all(isinstance(x, str) for x in v):
                if RARE not in "\n".join(v).lower():   # fast path; the same assertion as below
                    continue
            if isinstance(v, list) and all(isinstance(x, list) and all(isinstance(y, str) for y in x) for x in v):
                if RARE not in "\n".join("\n".join(x) for x in v).lower():
                    continue
            if not isinstance(v, Random):
                walk(v)

    # -- runtime text helpers (fast: a handful of rng calls per message) ---
    def output(self, r: Random, kind: str, size: int) -> str:
        return "\n".join(self.out_sel(r, kind, size))

    def output2(self, r: Random, kind: str, size: int):
        """(raw text, its JSON-encoded body)."""
        sel = self.out_sel(r, kind, size)
        return "\n".join(sel), "\\n".join(map(self.emap.__getitem__, sel))

    def out_sel(self, r: Random, kind: str, size: int):
        """k lines: a window of the (randomly generated, so already shuffled) pool, wrapping around."""
        lines = self.out_lines[kind]
        n = len(lines)
        k = max(1, int(size / self.avg_len(kind)))
        i = r.randrange(n)
        if i + k <= n:
            return lines[i:i + k]
        chunk = lines[i:]
        while len(chunk) < k:
            j = r.randrange(n)
            chunk += lines[j:j + k - len(chunk)]
        return chunk

    def avg_len(self, kind):
        a = self._avg.get(kind)
        if a is None:
            ls = self.out_lines[kind]
            a = self._avg[kind] = sum(len(x) + 1 for x in ls) / len(ls)
        return a


# ---------------------------------------------------------------------------
# Real vocabulary (--vocab real): prose and code read from local source trees
# (by default the cargo registry sources a build of the project downloads)
# ---------------------------------------------------------------------------

SRC_KIND = {".rs": "rust", ".py": "python", ".ts": "ts", ".tsx": "ts", ".js": "ts", ".mjs": "ts",
            ".md": "md", ".markdown": "md", ".toml": "toml", ".json": "json"}
SRC_MAX_FILE = 256_000          # bigger files (generated tables, bindings) are skipped
SRC_MAX_GROUP = 3_000_000       # per top-level folder (one crate), so libc and co. do not crowd out the rest
SRC_MAX_TOTAL = 64_000_000      # default cap of the bytes read in all (--source-bytes)
SRC_SKIP_DIRS = {"target", "node_modules", "__pycache__"}

NO_SOURCES = """gen-corpus: --vocab real found no source files to draw text from{where}.
It reads doc comments, markdown and code from the cargo registry sources
($CARGO_HOME/registry/src/*/*/, CARGO_HOME defaults to ~/.cargo). To get them, run
`cargo fetch` (or any cargo build) in the project once; or point --sources DIR at
any folder of .rs/.md/.toml files; or use --vocab words (the small built-in word lists)."""

# literal-first patterns: Python's re scans for a literal prefix fast, not for \\b or ^ alternations
DOC_RE = re.compile(r"\n[ \t]*//[/!](?![/!]) ?([^\n]*)")   # on "\n" + text: one doc comment line
FN_NAME_RE = re.compile(r"fn[ \t]+([A-Za-z_]\w*)")
FN_RE = re.compile(r"^([ \t]*)(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:(?:const|async|unsafe|extern[ \t]+\"[^\"\n]*\")[ \t]+)*"
                   r"fn[ \t]+([A-Za-z_]\w*)", re.M)
TYPE_RES = [re.compile(k + r" ([A-Z]\w*)") for k in ("struct", "enum", "trait", "type", "union")]
LET_RE = re.compile(r"let (?:mut )?([a-z_][a-z0-9_]*)")
CONST_RES = [re.compile(k + r" ([A-Z][A-Z0-9_]{2,})\b") for k in ("const", "static")]
PYDEF_RE = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.M)
TSFN_RE = re.compile(r"^([ \t]*)(?:export[ \t]+)?(?:async[ \t]+)?function\*?[ \t]+([A-Za-z_$][\w$]*)", re.M)
PYDOC_RE = re.compile(r'"""(.*?)"""', re.S)
JSDOC_RE = re.compile(r"/\*\*(.*?)\*/", re.S)
CLASS_RE = re.compile(r"class[ \t]+([A-Z]\w*)")
ERRLIT_RE = re.compile(r'(?:panic!|unreachable!|bail!|anyhow!|format_err!|\.expect|Error::(?:new|custom|msg))\(\s*'
                       r'(?:[\w:]+,\s*)?"([^"\\\n]{12,120})"')
SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\[(*\"'])")
NONLETTERS = re.compile(r"[\W\d_]+")
WORD_RE = re.compile(r"\w+")
LIST_ITEM = re.compile(r"^(?:[-*+]|\d{1,3}[.)])[ \t]+(.*)$")
LINK_DEF = re.compile(r"^\[[^\]]+\]:\s")
CRATE_VER = re.compile(r"-v?\d+(?:\.\d+)*(?:[-+.][\w.+-]*)?$")
RUSTDOC_TAGS = {"", "rust", "ignore", "no_run", "should_panic", "compile_fail", "edition2015", "edition2018",
                "edition2021", "edition2024", "test_harness"}
FENCE_LANG = {"rs": "rust", "rust": "rust", "sh": "bash", "bash": "bash", "shell": "bash", "console": "console",
              "toml": "toml", "json": "json", "text": "text", "txt": "text", "python": "python", "py": "python",
              "js": "ts", "ts": "ts", "javascript": "js", "typescript": "ts", "c": "c", "yaml": "yaml", "diff": "diff"}

USER_FRAMES = [
    "¤S", "¤S", "¤S", "¤S ¤S", "¤S ¤S",
    "¤S Can you check that `¤f` really does that?",
    "The docs say: \"¤S\" Is that also true for `¤f` in ¤p?",
    "In ¤p: ¤S Please make the code match this.",
    "I read this in the README: ¤S What does it mean for us?",
    "Why does `¤f` behave like this? ¤S",
    "¤S Add a test for it in ¤p.",
    "Is this right? ¤S",
    "Write a doc comment for `¤f` along these lines: ¤S",
    "¤S Let's do the same in `¤T`.",
    "Please explain this part: ¤S",
    "From the changelog: ¤S Do we need to change anything?",
    "¤S I think this is why `¤t` fails.",
    "Here's what I want: ¤S ¤S",
    "Look at ¤p. ¤S",
    "¤S Does `¤c` still pass after that?",
    "Can you rewrite `¤f` so that this holds: ¤S",
]
REAL_HEADS = ["Summary", "Changes", "What I changed", "Résumé", "Next steps", "Notes", "Why", "How it works",
              "Caveats", "Testing", "Details"]


def default_source_roots():
    home = os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")
    return sorted(glob.glob(os.path.join(glob.escape(home), "registry", "src", "*", "")))


class LazyEnc(dict):
    """JSON string bodies, encoded on first use (real mode: the pools are too big to encode up front)."""
    def __missing__(self, k):
        v = self[k] = ES(k)[1:-1]
        return v


class Sources:
    """The source files --vocab real draws from: every candidate file under the roots (sorted paths; hidden
    folders, target/ and node_modules/ left out; files over SRC_MAX_FILE skipped), then a seeded choice of at
    most SRC_MAX_GROUP bytes per top-level folder (markdown first) and `budget` bytes in all."""

    def __init__(self, roots, seed: int, budget: int):
        self.roots = [os.path.abspath(x) for x in roots]
        cands = {}
        for root in self.roots:
            for d, dirs, names in os.walk(root):
                dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x not in SRC_SKIP_DIRS)
                for nm in sorted(names):
                    kind = SRC_KIND.get(os.path.splitext(nm)[1].lower())
                    if kind is None or nm.startswith("."):
                        continue
                    full = os.path.join(d, nm)
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    if rel in cands or not os.path.isfile(full):
                        continue
                    size = os.path.getsize(full)
                    if 0 < size <= SRC_MAX_FILE:
                        cands[rel] = (full, size, kind)
        self.candidates = len(cands)
        rng = Random(seed * 7919 + 101)
        groups: dict = {}
        for rel in sorted(cands):
            groups.setdefault(rel.split("/", 1)[0] if "/" in rel else "", []).append(rel)
        gcap = max(SRC_MAX_GROUP, budget // max(1, len(groups)))
        picked = []
        for g in sorted(groups):
            rels = groups[g]
            rest = [x for x in rels if cands[x][2] != "md"]
            rng.shuffle(rest)
            acc = 0
            for x in [x for x in rels if cands[x][2] == "md"] + rest:
                if acc + cands[x][1] <= gcap:
                    picked.append(x)
                    acc += cands[x][1]
        rng.shuffle(picked)
        chosen, acc = [], 0
        for x in picked:
            if acc + cands[x][1] <= budget:
                chosen.append(x)
                acc += cands[x][1]
        chosen.sort()
        h = hashlib.sha256()
        self.files = []     # (relative path, kind, text)
        self.bytes = 0
        for rel in chosen:
            full, _, kind = cands[rel]
            try:
                with open(full, "rb") as fh:
                    b = fh.read(SRC_MAX_FILE + 1)
                t = b.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            h.update(rel.encode() + b"\0" + b + b"\0")
            self.bytes += len(b)
            t = t.lstrip("\ufeff").replace("\r\n", "\n")
            if RARE in t.lower():   # the rare prefix is reserved for planted tokens
                t = "\n".join(x for x in t.split("\n") if RARE not in x.lower())
            self.files.append((rel, kind, t))
        self.digest = h.hexdigest()


def good_prose(t: str, lo: int = 15, hi: int = 600) -> bool:
    """Mostly letters, a few words, no URL. (Sources already dropped every line holding the rare prefix.)"""
    n = len(t)
    return lo <= n <= hi and t.count(" ") >= 2 and "://" not in t and t.count("(") == t.count(")") and \
        t.count("`") % 2 == 0 and len(NONLETTERS.sub("", t)) >= 0.6 * n


class RealPools(Pools):
    """Pools with the same attributes as Pools, filled from real sources: prose (doc comments, markdown) for
    user, assistant and thinking text; real code, file contents, grep and diff lines for tools."""
    real = True

    def __init__(self, seed: int, src: Sources):
        r = self.r = Random(seed * 1_000_003 + 29)
        self.paras, self.sents, self.bullets, self.heads = [], [], [], []
        self.codes: dict = {}          # fence language -> [code]
        fns, types, lets, consts, errs = [], [], [], [], []
        code_files: dict = {}          # language -> [(crate, path in crate, text)]
        other_files: dict = {"md": [], "toml": [], "json": []}
        deep = set(r.sample(range(len(src.files)), min(len(src.files), 1500)))   # files mined for names, blocks
        for fi, (rel, kind, text) in enumerate(src.files):
            crate, _, inner = rel.partition("/")
            if not inner:
                crate, inner = "", rel
            if kind == "md":
                self.prose(text.split("\n"), False)
                other_files["md"].append((crate, inner, text))
                continue
            if kind in ("toml", "json"):
                other_files[kind].append((crate, inner, text))
                continue
            code_files.setdefault(kind, []).append((crate, inner, text))
            if kind == "rust":
                block, last = [], -1
                for m in DOC_RE.finditer("\n" + text):
                    if m.start() != last and block:   # not the next line: a new block
                        self.prose(block, True)
                        block = []
                    block.append(m.group(1))
                    last = m.end()
                if block:
                    self.prose(block, True)
                fns += FN_NAME_RE.findall(text)
                if fi not in deep:
                    continue
                for rx in TYPE_RES:
                    types += rx.findall(text)
                lets += LET_RE.findall(text)
                for rx in CONST_RES:
                    consts += rx.findall(text)
                errs += ERRLIT_RE.findall(text)
                starts = list(FN_RE.finditer(text))
            else:   # docstrings and JSDoc comments are the prose of Python and TypeScript
                for m in (PYDOC_RE if kind == "python" else JSDOC_RE).finditer(text):
                    self.prose([x.strip().lstrip("*").strip() if kind != "python" else x.strip()
                                for x in m.group(1).split("\n")], False)
                rx = PYDEF_RE if kind == "python" else TSFN_RE
                fns += [f for _, f in rx.findall(text)]
                types += CLASS_RE.findall(text)
                if fi not in deep:
                    continue
                starts = list(rx.finditer(text))
            for m in r.sample(starts, k=min(3, len(starts))):   # a few whole functions as code blocks
                blk = self.fn_block(text, m, kind)
                if blk:
                    self.codes.setdefault(kind, []).append(blk)
        if not self.sents or not code_files:
            print(NO_SOURCES.format(where=" with both prose and code (found: " +
                                    (", ".join(src.roots) or "no folder") + ")"), file=sys.stderr)
            sys.exit(2)
        self.langs = {k: v for k, v in code_files.items() if len(v) >= 30} or code_files
        self.main_lang = max(self.langs, key=lambda k: len(self.langs[k]))
        # identifiers, frequency weighted (a name seen often is drawn often)
        snake = [f for f in fns if f.islower() and 3 <= len(f) <= 40 and not f.startswith("_")] or ["run"]
        self.snake = snake
        self.camel = [s.split("_")[0] + "".join(p.capitalize() for p in s.split("_")[1:]) for s in snake[:20000]]
        self.types = [t for t in types if len(t) <= 40] or ["Value"]
        self.vars = VAR_SHORT + [v for v in lets if len(v) <= 30]
        self.const = consts or ["MAX_LEN"]
        self.flags = sorted({s.replace("_", "-") for s in snake if s.count("_") <= 2})
        self.crates = sorted({CRATE_VER.sub("", c) for c, _, _ in code_files.get("rust", []) if c}) or CRATES
        # prose words for ¤w/¤k; short sentences for ¤s
        toks = [w for s in r.sample(self.sents, min(20000, len(self.sents))) for w in WORD_RE.findall(s.lower())
                if w.isalpha() and len(w) >= 3]
        self.words = toks or EN_WORDS
        self.tech = [w for w in toks if len(w) >= 6] or TECH_WORDS
        self.phrases = []
        for s in self.sents:
            if len(s) <= 90:
                s = s.rstrip(".!?:;")
                self.phrases.append(s[0].lower() + s[1:] if len(s) > 1 and s[1].islower() else s)
        self.phrases = self.phrases or self.sents
        # paths, tests, errors, commands
        paths = sorted({inner for fl in code_files.values() for _, inner, _ in fl})
        self.paths = paths
        self.dirs = sorted({p.rsplit("/", 1)[0] for p in paths if "/" in p}) or ["src"]
        self.tests = [f"{r.choice(paths).rsplit('/', 1)[-1].split('.')[0]}::tests::{r.choice(snake)}"
                      for _ in range(2000)]
        self.errors = [self.realize(t) for t in ERRORS_TPL for _ in range(20)] + \
            [e for e in errs if RARE not in e.lower()][:3000]
        self.commands = [(self.realize(tpl), kind) for tpl, kind in (r.choice(COMMANDS) for _ in range(3000))]
        # text pools
        self.user_s = [self.realize(r.choice(USER_TPL)) for _ in range(8000)]
        self.user_frames = [self.realize(r.choice(USER_FRAMES)) for _ in range(6000)]
        self.foreign_s = [self.realize(r.choice(FOREIGN_TPL)) for _ in range(800)]
        self.assist_s = self.sents
        self.assist_tpl_s = [self.realize(r.choice(ASSIST_TPL)) for _ in range(6000)]
        self.action_s = [self.realize(r.choice(ACTION_TPL)) for _ in range(3000)]
        self.think_s = r.sample(self.sents, min(60000, len(self.sents))) + \
            [self.realize(r.choice(THINK_TPL)) for _ in range(6000)]
        self.names = [self.realize(r.choice(SESSION_NAMES_TPL)) for _ in range(300)] + \
            [h for h in self.heads if len(h) <= 60][:300]
        if not self.bullets:
            self.bullets = [s for s in self.sents if len(s) <= 160] or self.sents
        if not self.paras:
            self.paras = self.sents
        if not self.heads:
            self.heads = REAL_HEADS
        all_codes = [c for v in self.codes.values() for c in v]
        self.blocks = {}
        self.code_lines = {}
        for lang, fl in code_files.items():
            lines = []
            for _, _, text in r.sample(fl, min(len(fl), 400)):
                lines += [x.strip() for x in text.split("\n") if 4 <= len(x.strip()) <= 120]
            self.code_lines[lang] = r.sample(lines, min(len(lines), 20000)) or ["return;"]
            self.blocks[lang] = (self.codes.get(lang) or all_codes, [])
        for lang in ("rust", "ts", "python"):
            self.code_lines.setdefault(lang, self.code_lines[self.main_lang])
            self.blocks.setdefault(lang, self.blocks[self.main_lang])
        # files the tools read, edit and write: real files, sorted by size (picked to match the word-list
        # mode's size distribution, which keeps the byte mix)
        self.fentries = {}
        for kind, fl in list(code_files.items()) + list(other_files.items()):
            ent = sorted((len(t), c, p, t) for c, p, t in fl)
            self.fentries[kind] = ([e[0] for e in ent], ent)
        if not self.fentries["json"][0]:
            ent = sorted((len(t), "", f"data/{r.choice(snake)}.json", t)
                         for t in (self.json_text(r.randint(300, 16000)) for _ in range(40)))
            self.fentries["json"] = ([e[0] for e in ent], ent)
        self.cargo_toml = [e for e in self.fentries["toml"][1] if e[2] == "Cargo.toml"]
        # command outputs: templates filled with real names, grep and diff from real files
        self.out_lines = {}
        for kind, tpls in OUT_TPL.items():
            if tpls is not None:
                self.out_lines[kind] = [self.realize(r.choice(tpls)) for _ in range(1500)]
        self.out_lines["glog"] += [f"{r.getrandbits(32):08x} {b}" for b in r.sample(self.bullets, min(1500, len(self.bullets)))
                                   if len(b) <= 100]
        r.shuffle(self.out_lines["glog"])
        allf = [x for fl in code_files.values() for x in fl]
        self.out_lines["grep"] = self.grep_lines(r, allf, 10000) or self.code_lines[self.main_lang]
        self.out_lines["gdiff"] = self.diff_lines(r, allf, 10000) or ["+" + x for x in self.code_lines[self.main_lang]]
        self.out_lines["json"] = self.json_text(150_000).split("\n")
        self.out_lines["jsonl"] = self.fake_pi_lines(3000)

        def b64(n):  # valid base64 without 'q'/'Q', so it can never spell the rare prefix
            return base64.b64encode(r.randbytes(n)).decode().replace("q", "p").replace("Q", "P")
        self.sigs = [b64(r.randint(150, 700)) for _ in range(300)]
        self.images = ["iVBORw0KGgo" + b64(r.randint(8_000, 110_000)) for _ in range(30)]
        self.files = {}   # unused in real mode (fentries), but check() and emap look here
        self.check()
        self.emap = LazyEnc()
        self.flines_cache = {}
        self._avg = {}

    # -- extraction -------------------------------------------------------
    def prose(self, lines, rustdoc: bool):
        """Markdown-ish lines (a doc comment block or a .md file) into paragraphs, sentences, list items,
        headings and fenced code."""
        para, code, lang, item = [], None, "", None

        def flush():
            nonlocal para, item
            if item is not None:
                t = " ".join(item)
                if good_prose(t, 8, 300):
                    self.bullets.append(t)
                item = None
            if para:
                t = " ".join(" ".join(para).split())
                para = []
                if "://" in t:
                    return
                sents = [s for s in SENT_SPLIT.split(t) if good_prose(s, 20, 400)]
                self.sents += sents
                if 60 <= len(t) <= 1400 and sum(map(len, sents)) >= 0.7 * len(t):
                    self.paras.append(t)

        for line in lines:
            s = line.strip()
            if code is not None:
                if s.startswith("```") or s.startswith("~~~"):
                    if 0 < len(code) <= 60 and (not rustdoc or lang == "rust"):
                        self.codes.setdefault(lang, []).append("\n".join(code))
                    code = None
                elif rustdoc and lang == "rust" and (s == "#" or s.startswith("# ")):
                    code.append(s[2:])   # rustdoc's hidden lines
                else:
                    code.append(line)
                continue
            if s.startswith("```") or s.startswith("~~~"):
                flush()
                tag = s[3:].strip().split(",")[0].strip().lower()
                lang = "rust" if rustdoc and tag in RUSTDOC_TAGS else FENCE_LANG.get(tag, tag if tag.isalnum() else "")
                code = []
                continue
            if not s:
                flush()
                continue
            if s.startswith("#"):
                flush()
                h = s.lstrip("#").strip()
                if 3 <= len(h) <= 60 and h[0].isalpha():
                    self.heads.append(h)
                continue
            if s[0] in "|<!" or s.startswith("[!") or LINK_DEF.match(s) or s.startswith("=="):
                flush()
                continue
            m = LIST_ITEM.match(s)
            if m:
                flush()
                item = [m.group(1)]
                continue
            if item is not None and line[:1] in " \t":
                item.append(s)
                continue
            if item is not None:
                flush()
            para.append(s)
        flush()

    def fn_block(self, text: str, m, kind: str):
        """The function that starts at match m, up to its closing line (at most 40 lines)."""
        ind = m.group(1)
        start = text.rfind("\n", 0, m.start()) + 1
        if kind == "python":   # up to the next line indented no deeper than the def
            ls = text[start:start + 8000].split("\n")
            k = 1
            while k < len(ls) and (not ls[k].strip() or len(ls[k]) - len(ls[k].lstrip()) > len(ind)):
                k += 1
            while k > 1 and not ls[k - 1].strip():
                k -= 1
            end = start + len("\n".join(ls[:k]))
        else:
            end = text.find("\n" + ind + "}", m.end())
            end = len(text) if end < 0 else end + len(ind) + 2
        blk = text[start:end].split("\n")
        if len(blk) > 40:
            blk = blk[:40]
        if len(blk) < 2:
            return None
        if ind:
            blk = [x[len(ind):] if x.startswith(ind) else x for x in blk]
        return "\n".join(blk)

    def grep_lines(self, r: Random, files, n: int):
        """`rg -n NAME` output: every line of a real file holding a name seen in it, with real line numbers."""
        out, tries = [], 0
        while len(out) < n and tries < 50 * n:
            tries += 1
            crate, path, text = r.choice(files)
            ls = text.split("\n")
            cand = [w for w in WORD_RE.findall(r.choice(ls)) if len(w) >= 4]
            if not cand:
                continue
            w = r.choice(cand)
            hits = [(i, x) for i, x in enumerate(ls, 1) if w in x][:r.randint(1, 14)]
            out += [f"{path}:{i}:{x}" for i, x in hits if len(x) <= 300]
        return out

    def diff_lines(self, r: Random, files, n: int):
        """`git diff` output: hunks of real files, some lines removed and real lines from elsewhere added."""
        out, tries = [], 0
        while len(out) < n and tries < 50 * n:
            tries += 1
            crate, path, text = r.choice(files)
            ls = text.split("\n")
            if len(ls) < 8:
                continue
            if r.random() < 0.3:
                out.append(f"diff --git a/{path} b/{path}\nindex {r.getrandbits(28):07x}..{r.getrandbits(28):07x} 100644"
                           f"\n--- a/{path}\n+++ b/{path}")
            a = r.randrange(len(ls) - 6)
            k = min(len(ls) - a, r.randint(6, 24))
            fn = r.choice(self.snake)
            body = []
            for x in ls[a:a + k]:
                u = r.random()
                if u < 0.12:
                    body.append("-" + x)
                    if r.random() < 0.7:
                        body.append("+" + " " * (len(x) - len(x.lstrip())) + r.choice(self.code_lines_any()))
                else:
                    body.append(" " + x)
            plus = sum(1 for x in body if x[0] != "-")
            out.append(f"@@ -{a + 1},{k} +{a + 1},{plus} @@ fn {fn}")
            out += [x for x in body if len(x) <= 300]
        return out

    def code_lines_any(self):
        cl = getattr(self, "code_lines", None)
        if cl:
            return cl[self.main_lang]
        return ["let x = 1;", "return Ok(());"]

    # -- files for a project ------------------------------------------------
    def pick_entry(self, prng: Random, kind: str, median: float, sigma: float):
        sizes, ent = self.fentries.get(kind) or self.fentries[self.main_lang]
        if not ent:
            sizes, ent = self.fentries[self.main_lang]
        target = min(160_000, max(300, int(prng.lognormvariate(math.log(median), sigma))))
        i = bisect.bisect_left(sizes, target)
        i = min(len(ent) - 1, max(0, i + prng.randint(-6, 6)))
        return ent[i]

    def project_files(self, prng: Random, lang: str):
        fl, used = [], set()
        for _ in range(prng.randint(20, 150)):
            u = prng.random()
            if u < 0.8:
                _, crate, path, text = self.pick_entry(prng, lang, 3000, 1.0)
            elif u < 0.9:
                _, crate, path, text = self.pick_entry(prng, "md", 4000, 0.9)
                if "/" not in path and path != "README.md":
                    path = "docs/" + path
            elif u < 0.97:
                _, crate, path, text = self.pick_entry(prng, "json", 3000, 1.0)
            else:
                if lang == "rust" and self.cargo_toml:
                    _, crate, path, text = prng.choice(self.cargo_toml)
                else:
                    _, crate, path, text = self.pick_entry(prng, "toml" if lang != "ts" else "json", 1500, 0.6)
                    path = {"python": "pyproject.toml", "ts": "package.json"}.get(lang, "Cargo.toml")
            if path in used and crate:
                path = f"{'crates' if lang == 'rust' else 'packages'}/{CRATE_VER.sub('', crate)}/{path}"
            used.add(path)
            fl.append((path, text))
        return fl


# ---------------------------------------------------------------------------
# Corpus plan
# ---------------------------------------------------------------------------

class Plan:
    __slots__ = ("idx", "seed", "version", "project", "target", "branched", "start_ms", "thinking", "model",
                 "force_compact")


def make_plan(total: int, seed: int, nproj: int):
    m = Random(seed)
    sizes = []
    if total >= 1_000_000_000:
        ng = max(2, round(2 + math.log2(total / 1e9)))
        for _ in range(ng):
            sizes.append(int(m.uniform(100e6, 170e6)))
        while sum(sizes) > 0.35 * total and len(sizes) > 1:
            sizes.pop()
        nb = 1 + round(total / 1e9 * 1.5)
        for _ in range(nb):
            sizes.append(int(m.uniform(10e6, 60e6)))
    elif total >= 200_000_000:
        for _ in range(m.choice((1, 2))):
            sizes.append(int(m.uniform(15e6, max(16e6, min(45e6, total * 0.2)))))
    acc = sum(sizes)
    while acc < total:
        if total >= 20_000_000 and m.random() < 0.05:
            s = int(m.uniform(1e6, 6e6))
        else:
            s = int(min(1e6, max(6000, m.lognormvariate(math.log(90_000), 0.9))))
        s = min(s, max(3000, total // 4))
        sizes.append(s)
        acc += s
    m.shuffle(sizes)
    # ~10% version 1, ~10% version 2, the rest version 3 (at least 2 of each old version when n >= 8)
    n = len(sizes)
    vers = [1 if u < 0.10 else 2 if u < 0.20 else 3 for u in (m.random() for _ in range(n))]
    if n >= 8:
        for want in (1, 2):
            while vers.count(want) < max(2, round(0.08 * n)):
                vers[m.choice([i for i, v in enumerate(vers) if v == 3])] = want
    weights = [1 / (k + 1) ** 0.8 for k in range(nproj)]
    plans = []
    for i, s in enumerate(sizes):
        p = Plan()
        p.idx = i
        p.seed = m.getrandbits(64)
        p.version = vers[i]
        p.project = m.choices(range(nproj), weights=weights)[0]
        p.target = s
        p.force_compact = 0
        p.branched = p.version >= 2 and s >= 15_000 and m.random() < 0.19  # ~15% end up branched
        if p.version == 1:
            lo, hi = ms_of(2025, 8, 1), ms_of(2025, 12, 20)
        elif p.version == 2:
            lo, hi = ms_of(2026, 1, 1), ms_of(2026, 1, 20)
        else:
            lo, hi = ms_of(2026, 1, 20), ms_of(2026, 4, 30)
        p.start_ms = lo + m.randrange(hi - lo)
        p.thinking = m.choices(THINK_LEVELS, weights=(20, 5, 10, 30, 25, 10))[0]
        p.model = m.choices(range(len(MODELS)), weights=[x[4] for x in MODELS])[0]
        plans.append(p)
    cand = [p for p in plans if p.version >= 2 and p.target >= 15_000 and not p.branched]
    while sum(p.branched for p in plans) < 2 and cand:
        cand.pop(m.randrange(len(cand))).branched = True
    return plans


def project_list(n: int, seed: int):
    r = Random(seed * 31 + 5)
    names = []
    for i in range(n):
        base = PROJECT_NAMES[i % len(PROJECT_NAMES)]
        names.append(base if i < len(PROJECT_NAMES) else f"{base}-{i // len(PROJECT_NAMES) + 1}")
    langs = [r.choice(("rust", "rust", "ts", "python")) for _ in names]
    return names, langs


def uuid4(r: Random) -> str:
    x = r.getrandbits(128)
    x = (x & ~(0xF << 76)) | (4 << 76)
    x = (x & ~(0x3 << 62)) | (0x2 << 62)
    h = "%032x" % x
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uuid7(r: Random, ms: int) -> str:
    x = (ms << 80) | (7 << 76) | (r.getrandbits(12) << 64) | (0x2 << 62) | r.getrandbits(62)
    h = "%032x" % x
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


ID_TR = str.maketrans("+/qQ", "xYpP")  # tool call ids: base64 letters, no q/Q (cannot spell the rare prefix)


# ---------------------------------------------------------------------------
# One session
# ---------------------------------------------------------------------------

class Session:
    def __init__(self, pools: Pools, plan: Plan, project: str, lang: str, files, target: int):
        self.P = pools
        self.plan = plan
        self.r = Random(plan.seed)
        self.rnd = self.r.random
        self.v = plan.version
        self.target = max(2500, target)
        self.cwd = "/home/user/" + project
        self.lang = lang
        self.files = files
        self.lines: list[str] = []
        self.pend: list[tuple] = []     # planting candidates (category, key, raw value) of that entry
        self.meta: list[tuple] = []     # per line: (entry id, parent id, role-or-type, is_doc)
        self.elig: list[tuple] = []     # (line idx, category, key, value)
        self.size = 0
        self.ids: set[str] = set()
        self.leaf = None
        self.t = plan.start_ms
        self.turns: list[tuple] = []    # on current branch: (user entry id, its parent, line idx)
        self.since_compact = 0
        self.compact_at = self.ri(150_000, 500_000)
        self.branch_done = not plan.branched
        self.branch_frac = self.r.uniform(0.35, 0.8)
        self.thinking = plan.thinking
        prov, api, model, rates, _ = MODELS[plan.model]
        self.provider, self.api, self.model, self.rates = prov, api, model, rates
        self.named = False
        self.max_line = 6_000_000 if self.target >= 8_000_000 else max(4000, self.target // 5)
        self.n_user = self.n_assist = self.n_tool = self.n_bash = 0
        self.text_chars = 0             # user and assistant text written (before planting)
        self.huge_p = 0.0004 if self.target >= 4_000_000 else 0.0  # rare multi-MB tool output
        # sessions of 8 MB+ get at least one multi-MB tool output line
        self.force_huge_at = self.r.uniform(0.1, 0.8) * self.target if self.target >= 8_000_000 else float("inf")
        self.manual_compact = {self.ri(3, 10)} if self.r.random() < 0.2 else set()
        if plan.force_compact:
            self.manual_compact = set(range(1, 1 + plan.force_compact))

    # -- low level ---------------------------------------------------------
    # fast equivalents of randint/choice/randrange (Random's own are slow in the hot path)
    def ri(self, lo: int, hi: int) -> int:
        return lo + int(self.rnd() * (hi - lo + 1))

    def pick(self, seq):
        return seq[int(self.rnd() * len(seq))]

    def rr(self, n: int) -> int:
        return int(self.rnd() * n)

    def new_id(self) -> str:
        r = self.r
        while True:
            e = "%08x" % r.getrandbits(32)
            if e not in self.ids:
                self.ids.add(e)
                return e

    def add_line(self, s: str, eid, parent, kind, doc) -> int:
        self.lines.append(s)
        n = len(s) + 1
        self.size += n
        self.since_compact += n
        self.meta.append((eid, parent, kind, doc))
        idx = len(self.lines) - 1
        if self.pend:
            self.elig.extend((idx,) + x for x in self.pend)
            self.pend = []
        return idx

    def add(self, obj, eid, parent, kind, doc) -> int:
        return self.add_line(ENC(obj), eid, parent, kind, doc)

    def entry(self, etype: str, fields: dict, kind: str = "", doc: bool = False, parent=...):
        """A non-message entry, encoded from a dict (key order: type, id, parentId, timestamp, fields)."""
        ts = iso(self.t)
        if self.v == 1:
            obj = {"type": etype, "timestamp": ts}
            eid = par = None
        else:
            eid = self.new_id()
            par = self.leaf if parent is ... else parent
            obj = {"type": etype, "id": eid, "parentId": par, "timestamp": ts}
            self.leaf = eid
        obj.update(fields)
        return self.add(obj, eid, par, kind or etype, doc), eid

    def add_msg(self, msg_json: str, kind: str, doc: bool):
        """A message entry whose `message` JSON is already built (hot path: plain string formatting,
        byte-identical to json.dumps(..., ensure_ascii=False, separators=(",", ":")))."""
        ts = iso(self.t)
        if self.v == 1:
            eid = par = None
            s = '{"type":"message","timestamp":"' + ts + '","message":' + msg_json + "}"
        else:
            eid = self.new_id()
            par = self.leaf
            self.leaf = eid
            s = ('{"type":"message","id":"' + eid + '","parentId":' + ("null" if par is None else '"' + par + '"') +
                 ',"timestamp":"' + ts + '","message":' + msg_json + "}")
        return self.add_line(s, eid, par, kind, doc), eid

    def tick(self, lo, hi):
        self.t += self.ri(lo, hi)

    # -- text -------------------------------------------------------------
    def user_text(self, cap: int) -> str:
        r, P = self.r, self.P
        if P.real:
            return self.user_text_real(cap)
        u = r.random()
        if u < 0.10:
            return self.pick(SHORT_USER)
        if u < 0.20:
            t = " ".join(r.choices(P.foreign_s, k=self.ri(1, 4)))
        elif u < 0.38:
            kind = self.pick(("ctest", "cbuild", "log", "pytest", "npm", "json"))
            t = " ".join(r.choices(P.user_s, k=self.ri(1, 3))) + "\n\n```\n" + \
                P.output(r, kind, min(cap, int(r.expovariate(1 / 2500)) + 200)) + "\n```"
        elif u < 0.43:
            t = "\n\n".join(" ".join(r.choices(P.user_s, k=self.ri(2, 6))) for _ in range(self.ri(2, 8)))
        else:
            t = " ".join(r.choices(P.user_s, k=self.ri(1, 8)))
        if r.random() < 0.08:
            t += " " + self.pick(EMOJI)
        return t

    def final_text(self, cap: int) -> str:
        r, P = self.r, self.P
        if P.real:
            return self.final_text_real(cap)
        parts = [" ".join(r.choices(P.assist_s, k=self.ri(1, 6)))]
        if r.random() < 0.65:
            parts.append("## " + self.pick(("Summary", "Changes", "What I changed", "Résumé", "Next steps", "Notes")))
            parts.append("\n".join("- " + s for s in r.choices(P.assist_s, k=self.ri(2, 10))))
        if r.random() < 0.35:
            blk = self.pick(P.blocks[self.lang][0])
            parts.append(f"```{'rust' if self.lang == 'rust' else self.lang}\n{blk[:cap]}\n```")
        if r.random() < 0.6:
            parts.append(" ".join(r.choices(P.assist_s, k=self.ri(1, 5))))
        if r.random() < 0.05:
            parts.append(self.pick(EMOJI))
        return "\n\n".join(parts)

    # real vocabulary: prompts are short (a sentence or two of real prose in a request, names and paths,
    # sometimes pasted output or code); replies are paragraphs, markdown lists and fenced real code
    def frame(self) -> str:
        t = self.pick(self.P.user_frames)
        while "¤S" in t:
            t = t.replace("¤S", self.pick(self.P.sents), 1)
        return t

    def user_text_real(self, cap: int) -> str:
        r, P = self.r, self.P
        u = r.random()
        if u < 0.10:
            return self.pick(SHORT_USER)
        if u < 0.16:
            t = " ".join(r.choices(P.foreign_s, k=self.ri(1, 3)))
        elif u < 0.36:   # a question about pasted output or code
            head = self.frame() if r.random() < 0.5 else " ".join(r.choices(P.user_s, k=self.ri(1, 2)))
            if r.random() < 0.75:
                kind = self.pick(("ctest", "cbuild", "log", "pytest", "npm", "json", "grep", "gdiff"))
                body = P.output(r, kind, min(cap, int(r.expovariate(1 / 3000)) + 200))
            else:
                body = "\n\n".join(r.choices(P.blocks[self.lang][0], k=self.ri(1, 3)))[:cap]
            t = head + "\n\n```\n" + body + "\n```"
        elif u < 0.41:   # a longer brief
            t = "\n\n".join(self.pick(P.paras) for _ in range(self.ri(2, 5))) + "\n\n" + self.frame()
        elif u < 0.62:
            t = " ".join(r.choices(P.user_s, k=self.ri(1, 4)))
        else:
            t = self.frame()
        if r.random() < 0.08:
            t += " " + self.pick(EMOJI)
        return t

    def final_text_real(self, cap: int) -> str:
        r, P = self.r, self.P
        parts = []
        if r.random() < 0.4:
            parts.append(" ".join(r.choices(P.assist_tpl_s, k=self.ri(1, 2))))
        parts.append(self.pick(P.paras))
        if r.random() < 0.85:
            parts.append(self.pick(P.paras))
        if r.random() < 0.6:
            parts.append("## " + (self.pick(P.heads) if r.random() < 0.5 else self.pick(REAL_HEADS)))
            parts.append("\n".join("- " + self.pick(P.bullets) for _ in range(self.ri(3, 10))))
        if r.random() < 0.45:
            blocks = P.codes.get(self.lang) or P.blocks[self.lang][0]
            parts.append(f"```{self.lang}\n{self.pick(blocks)[:cap]}\n```")
        if r.random() < 0.8:
            parts.append(self.pick(P.paras))
        if r.random() < 0.05:
            parts.append(self.pick(EMOJI))
        return "\n\n".join(parts)

    def more_text(self, t: str, cap: int) -> str:
        """--text-share: lengthen a final reply with more paragraphs until the session's user and assistant
        text reaches the share of its bytes (the line's JSON and the usage around it counted roughly)."""
        P, n = self.P, 0
        while n < 40 and len(t) < cap and \
                self.text_chars + len(t) < TEXT_SHARE * (self.size + 1.15 * len(t) + 600):
            t += "\n\n" + (self.pick(P.paras) if P.real else " ".join(self.r.choices(P.assist_s, k=self.ri(2, 6))))
            n += 1
        return t

    def thinking_text(self):
        r = self.r
        sel = r.choices(self.P.think_s, k=min(80, 1 + int(r.expovariate(1 / 10))))
        return " ".join(sel), " ".join(map(self.P.emap.__getitem__, sel))

    # -- messages ----------------------------------------------------------
    def usage(self, out_chars: int) -> str:
        ctx = 6000 + self.since_compact // 4
        out = max(5, out_chars // 4 + self.ri(0, 60))
        inp = self.ri(1, 40) if self.provider == "anthropic" else self.ri(200, 3000)
        cw = self.ri(50, 4000)
        cr = max(0, ctx - cw)
        a, b, c, d = self.rates
        ci, co, cr_, cw_ = inp * a / 1e6, out * b / 1e6, cr * c / 1e6, cw * d / 1e6
        # floats are written with repr(), exactly as json does
        return ('{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d,"totalTokens":%d,'
                '"cost":{"input":%r,"output":%r,"cacheRead":%r,"cacheWrite":%r,"total":%r}}'
                % (inp, out, cr, cw, inp + out + cr + cw, ci, co, cr_, cw_, ci + co + cr_ + cw_))

    def user_msg(self, cap: int):
        r, P = self.r, self.P
        self.tick(8_000, 600_000)
        if r.random() < 0.15:
            self.bash_exec(cap)
            self.tick(3_000, 60_000)
        text = self.user_text(cap)
        msg_ts = self.t
        self.tick(1, 40)
        string = r.random() < 0.15
        if string:
            content = ES(text)
        else:
            content = '[{"type":"text","text":' + ES(text) + "}"
            if r.random() < 0.025:
                img = self.pick(P.images)
                if len(img) < cap:
                    content += ',{"type":"image","data":"' + P.emap[img] + '","mimeType":"image/png"}'
            content += "]"
        parent = self.leaf
        idx, eid = self.add_msg('{"role":"user","content":%s,"timestamp":%d}' % (content, msg_ts), "user",
                                bool(text.strip()))
        self.n_user += 1
        self.text_chars += len(text)
        self.elig.append((idx, "user_string" if string else "user", "content" if string else "text", text))
        self.turns.append((eid, parent, idx))

    def assistant_msg(self, blocks: list, texts: list, chars: int, stop: str, err: str | None = None):
        """blocks: content blocks as JSON strings; texts: the raw text of its text blocks."""
        msg_ts = self.t
        self.tick(1_500, 40_000)
        m = ('{"role":"assistant","content":[%s],"api":"%s","provider":"%s","model":"%s","usage":%s,'
             '"stopReason":"%s"%s,"timestamp":%d}'
             % (",".join(blocks), self.api, self.provider, self.model, self.usage(chars), stop,
                ',"errorMessage":' + ES(err) if err else "", msg_ts))
        idx, _ = self.add_msg(m, "assistant", bool("\n".join(texts).strip()))
        self.n_assist += 1
        self.text_chars += sum(map(len, texts))
        for t in texts:
            self.elig.append((idx, "assistant", "text", t))
        return idx

    def tool_result(self, tcid, name, text, enc, details, is_error):
        self.tick(30, 4_000)
        m = ('{"role":"toolResult","toolCallId":"%s","toolName":"%s","content":[{"type":"text","text":"%s"}]%s,'
             '"isError":%s,"timestamp":%d}'
             % (tcid, name, ES(text)[1:-1] if enc is None else enc,
                "" if details is None else ',"details":' + ENC(details), "true" if is_error else "false", self.t))
        self.tick(1, 30)
        if self.r.random() < 0.2:
            self.pend.append(("toolResult", "text", text))
        self.add_msg(m, "toolResult", False)
        self.n_tool += 1

    def bash_exec(self, cap: int):
        r, P = self.r, self.P
        cmd = self.pick(BASH_EXEC_CMDS)
        out, enc = P.output2(r, self.pick(("gstatus", "ls", "cbuild", "glog", "ctest")),
                             min(cap, int(r.expovariate(1 / 5000)) + 50))
        m = ('{"role":"bashExecution","command":%s,"output":"%s","exitCode":%d,"cancelled":false,'
             '"truncated":false,"timestamp":%d}' % (ES(cmd), enc, 0 if r.random() < 0.85 else 1, self.t))
        self.tick(50, 3000)
        self.pend.append(("bashExec", "output", out))
        self.add_msg(m, "bashExecution", False)
        self.n_bash += 1

    # -- tools -------------------------------------------------------------
    def huge_size(self) -> int:
        lo, hi = 300_000, max(300_001, self.max_line)
        return int(math.exp(self.r.uniform(math.log(lo), math.log(hi))))

    def pick_file(self):
        return self.files[self.rr(len(self.files))]

    def tool_call(self, name: str, cap: int):
        """Returns (arguments as JSON, result text, encoded result body or None, details, isError)."""
        r, P = self.r, self.P
        if name == "read":
            rel, content = self.pick_file()
            path = rel if r.random() < 0.6 else f"{self.cwd}/{rel}"
            args = '{"path":%s}' % ES(path)
            text, enc = content, P.emap[content]
            if r.random() < 0.15:
                ls, els = P.flines(content)
                off = self.ri(1, max(1, len(ls) - 10))
                lim = self.ri(20, 400)
                args = '{"path":%s,"offset":%d,"limit":%d}' % (ES(path), off, lim)
                text, enc = "\n".join(ls[off - 1:off - 1 + lim]), "\\n".join(els[off - 1:off - 1 + lim])
            elif r.random() < self.huge_p:
                text, enc = P.output2(r, "json", self.huge_size())
            if 50_000 < len(text) < 300_000:
                cut = text.rfind("\n", 0, 50_000)
                shown = text[:cut].count("\n") + 1
                total = text.count("\n") + 1
                text, enc = text[:cut] + f"\n\n[Showing lines 1-{shown} of {total}. Use offset={shown + 1} to continue]", None
            if len(text) > cap:
                text, enc = text[:cap], None
            return args, text, enc, None, False
        if name == "bash":
            cmd, kind = self.pick(P.commands)
            args = '{"command":%s}' % ES(cmd)
            if r.random() < 0.2:
                args = '{"command":%s,"timeout":%d}' % (ES(cmd), self.pick((60, 120, 300, 600)))
            self.pend.append(("toolArg", "command", cmd))
            if r.random() < self.huge_p or self.size >= self.force_huge_at:
                size = self.huge_size()
                if self.size >= self.force_huge_at:
                    self.force_huge_at = float("inf")
                    size = max(size, min(self.max_line, 2_000_000))
            else:
                size = min(120_000, int(r.lognormvariate(math.log(1100), 1.2)))
            size = max(20, min(size, cap))
            if kind == "jsonl":
                kind, size = "jsonl", max(400, size)
            text, enc = P.output2(r, kind, size)
            details = None
            if 50_000 < len(text) < 400_000:
                tail = text[-50_000:]
                tail = tail[tail.find("\n") + 1:]
                path = f"/tmp/pi-bash-{r.getrandbits(64):016x}.log"
                total = text.count("\n") + 1
                shown = tail.count("\n") + 1
                text, enc = tail + f"\n\n[Showing lines {total - shown + 1}-{total} of {total}. Full output: {path}]", None
                details = {"truncation": {"truncated": True, "truncatedBy": "bytes", "totalLines": total,
                                          "outputLines": shown}, "fullOutputPath": path}
            err = r.random() < 0.12
            if err:
                tail = f"\n\nCommand exited with code {self.pick((1, 1, 2, 101, 127))}"
                text += tail
                if enc is not None:
                    enc += ENC(tail)[1:-1]
            return args, text, enc, details, err
        if name == "edit":
            rel, content = self.pick_file()
            ls = P.flines(content)[0]
            a = self.rr(len(ls))
            n = min(len(ls) - a, self.ri(1, 14))
            old = ls[a:a + n]
            new = list(old)
            code = P.code_lines[self.lang]
            for _ in range(self.ri(1, 6)):
                new.insert(self.ri(0, len(new)), "    " + self.pick(code))
            if new and r.random() < 0.5:
                del new[self.rr(len(new))]
            old_t, new_t = "\n".join(old)[:cap], "\n".join(new)[:cap]
            args = '{"path":%s,"oldText":%s,"newText":%s}' % (
                ES(f"{self.cwd}/{rel}" if r.random() < 0.5 else rel), ES(old_t), ES(new_t))
            ctx_b = ls[max(0, a - 3):a]
            ctx_a = ls[a + n:a + n + 3]
            d = [f" {a - len(ctx_b) + i + 1:>4} {x}" for i, x in enumerate(ctx_b)]
            d += [f"-{a + i + 1:>4} {x}" for i, x in enumerate(old)]
            d += [f"+{a + i + 1:>4} {x}" for i, x in enumerate(new)]
            d += [f" {a + len(new) + i + 1:>4} {x}" for i, x in enumerate(ctx_a)]
            details = {"diff": "\n".join(d)[:cap], "firstChangedLine": a + 1}
            if r.random() < 0.06:
                return (args, f"Could not find the exact text in {rel}. The old text must match exactly including "
                        "all whitespace and newlines.", None, None, True)
            return args, f"Successfully replaced text in {rel}.", None, details, False
        # write: usually a whole file
        rel, content = self.pick_file()
        if r.random() < 0.5:
            rel = f"{rel.rsplit('/', 1)[0]}/{self.pick(P.snake)}.{rel.rsplit('.', 1)[-1]}"
        if len(content) <= cap and r.random() < 0.7:
            body = content
            enc = P.emap[body]
        else:
            body = content[:min(cap, self.ri(500, 40_000))]
            enc = ES(body)[1:-1]
        args = '{"path":%s,"content":"%s"}' % (ES(rel), enc)
        return args, f"Successfully wrote {len(body.encode('utf-8'))} bytes to {rel}", None, None, False

    def call_id(self) -> str:
        r = self.r
        if self.provider == "anthropic":
            return "toolu_01" + base64.b64encode(r.randbytes(18)).decode()[:22].translate(ID_TR)
        if self.provider == "openai":
            return "call_" + base64.b64encode(r.randbytes(18)).decode().translate(ID_TR) + \
                "|fc_" + "%048x" % r.getrandbits(192)
        return "call_" + base64.b64encode(r.randbytes(12)).decode().translate(ID_TR)

    def think_block(self):
        """(block JSON, length of the thinking text)"""
        raw, enc = self.thinking_text()
        self.pend.append(("thinking", "thinking", raw))
        if self.provider == "anthropic":
            sig = self.pick(self.P.sigs)
            return '{"type":"thinking","thinking":"%s","thinkingSignature":"%s"}' % (enc, self.P.emap[sig]), len(raw)
        return '{"type":"thinking","thinking":"%s"}' % enc, len(raw)

    def step(self, first: bool):
        r = self.r
        cap = max(1500, min(self.max_line, (self.target - self.size) // 2))
        blocks, texts, chars = [], [], 0
        if self.thinking != "off" and r.random() < 0.75:
            b, n = self.think_block()
            blocks.append(b)
            chars += n
        if r.random() < 0.55:
            t = " ".join(r.choices(self.P.action_s, k=self.ri(1, 2)))
            if r.random() < 0.3:
                t = " ".join(r.choices(self.P.assist_s, k=self.ri(1, 4))) + "\n\n" + t
            blocks.append('{"type":"text","text":' + ES(t) + "}")
            texts.append(t)
            chars += len(t)
        calls = []
        for _ in range(1 if r.random() < 0.85 else self.ri(2, 3)):
            u = r.random()
            name = ("read" if u < 0.5 else "bash") if first else \
                "read" if u < 0.31 else "bash" if u < 0.66 else "edit" if u < 0.93 else "write"
            args, text, enc, details, err = self.tool_call(name, cap)
            tcid = self.call_id()
            blocks.append('{"type":"toolCall","id":"%s","name":"%s","arguments":%s}' % (tcid, name, args))
            chars += len(args) + 60
            calls.append((tcid, name, text, enc, details, err))
        self.assistant_msg(blocks, texts, chars, "toolUse")
        for c in calls:
            self.tool_result(*c)

    def turn(self):
        r = self.r
        cap = max(1500, min(self.max_line, (self.target - self.size) // 2))
        self.user_msg(cap)
        n_steps = 1 + min(30, int(r.expovariate(1 / 4.0)))
        if r.random() < 0.08:
            n_steps = 0
        for i in range(n_steps):
            if self.size >= self.target and i > 0:
                break
            self.step(i == 0)
        u = r.random()
        if u < 0.015:
            self.assistant_msg([], [], 0, "aborted")
            return
        if u < 0.025:
            self.assistant_msg([], [], 0, "error", self.pick(("Overloaded", "Request timed out",
                                                              "529 overloaded_error", "terminated")))
            return
        blocks, chars = [], 0
        if self.thinking != "off" and r.random() < 0.5:
            b, chars = self.think_block()
            blocks.append(b)
        t = self.final_text(cap)
        if TEXT_SHARE is not None:
            t = self.more_text(t, cap)
        blocks.append('{"type":"text","text":' + ES(t) + "}")
        self.assistant_msg(blocks, [t], chars + len(t), "stop")

    # -- non-message entries ----------------------------------------------
    def meta_entries(self, first_turn: bool):
        r, P = self.r, self.P
        if self.v == 1:
            if r.random() < 0.02:
                self.switch_model()
            return
        if (first_turn and r.random() < 0.35) or (not first_turn and r.random() < 0.01):
            self.tick(100, 5000)
            name = self.pick(P.names)
            idx, _ = self.entry("session_info", {"name": name})
            self.elig.append((idx, "name", "name", name))
        if r.random() < 0.03 and self.turns:
            self.tick(100, 5000)
            f = {"targetId": self.turns[-1][0]}
            if r.random() < 0.85:
                f["label"] = self.pick(LABELS)
            self.entry("label", f)
        if r.random() < 0.02:
            self.switch_model()
        if r.random() < 0.02:
            self.tick(100, 5000)
            self.thinking = self.pick(THINK_LEVELS)
            self.entry("thinking_level_change", {"thinkingLevel": self.thinking})
        if self.v == 3 and r.random() < 0.03:
            self.tick(100, 5000)
            self.entry("custom", {"customType": "todo-state",
                                  "data": {"items": [{"id": i + 1, "text": s, "done": r.random() < 0.5,
                                                      "notes": self.pick(P.think_s)}
                                                     for i, s in enumerate(r.choices(P.action_s, k=self.ri(1, 40)))]}})
        if self.v == 3 and r.random() < 0.005:
            self.tick(100, 5000)
            self.entry("custom_message", {"customType": "reminder", "content": self.pick(P.assist_s),
                                          "display": r.random() < 0.7})

    def switch_model(self):
        r = self.r
        self.tick(100, 5000)
        i = r.choices(range(len(MODELS)), weights=[x[4] for x in MODELS])[0]
        self.provider, self.api, self.model, self.rates, _ = MODELS[i]
        self.entry("model_change", {"provider": self.provider, "modelId": self.model})

    def compaction(self):
        r, P = self.r, self.P
        self.tick(2_000, 60_000)
        summ = ["## Goal", " ".join(r.choices(P.user_s, k=self.ri(1, 3))), "", "## Progress"]
        summ += ["- " + s for s in r.choices(P.assist_s, k=self.ri(5, 30))]
        summ += ["", "## Key decisions"] + ["- " + s for s in r.choices(P.think_s, k=self.ri(2, 15))]
        summ += ["", "## Next steps"] + ["1. " + s for s in r.choices(P.action_s, k=self.ri(1, 4))]
        read = sorted(set(f for f, _ in r.choices(self.files, k=self.ri(1, 8))))
        mod = sorted(set(f for f, _ in r.choices(self.files, k=self.ri(0, 4))))
        summ += ["", "<read-files>"] + read + ["</read-files>", "", "<modified-files>"] + mod + ["</modified-files>"]
        text = "\n".join(summ)
        tokens = 6000 + self.since_compact // 4
        keep = self.turns[-self.ri(1, min(3, len(self.turns)))]
        if self.v == 1:
            f = {"summary": text, "firstKeptEntryIndex": keep[2] - 1, "tokensBefore": tokens}
        else:
            f = {"summary": text, "firstKeptEntryId": keep[0], "tokensBefore": tokens,
                 "details": {"readFiles": read, "modifiedFiles": mod}}
        idx, _ = self.entry("compaction", f)
        self.elig.append((idx, "summary", "summary", text))
        self.since_compact = 0
        self.compact_at = self.ri(150_000, 500_000)

    def branch(self):
        r = self.r
        j = self.ri(max(0, len(self.turns) - 4), len(self.turns) - 1)
        target_parent = self.turns[j][1]
        old_leaf = self.leaf
        del self.turns[j:]
        self.tick(10_000, 900_000)
        if r.random() < 0.6:
            text = "The user explored a different direction: " + " ".join(r.choices(self.P.assist_s, k=self.ri(2, 8)))
            idx, _ = self.entry("branch_summary", {"fromId": old_leaf, "summary": text}, parent=target_parent)
            self.elig.append((idx, "summary", "summary", text))
        else:
            self.leaf = target_parent
        self.branch_done = True

    # -- driver ------------------------------------------------------------
    def run(self):
        r = self.r
        p = self.plan
        ts = iso(self.t)
        sid = uuid7(r, self.t) if self.v == 3 and r.random() < 0.7 else uuid4(r)
        self.sid, self.ts = sid, ts
        if self.v == 1:
            hdr = {"type": "session", "id": sid, "timestamp": ts, "cwd": self.cwd, "provider": self.provider,
                   "modelId": self.model, "thinkingLevel": self.thinking}
        else:
            hdr = {"type": "session", "version": self.v, "id": sid, "timestamp": ts, "cwd": self.cwd}
            if r.random() < 0.03:
                hdr["parentSession"] = f"/home/user/.pi/agent/sessions/--home-user-x--/{uuid4(r)}.jsonl"
        self.add(hdr, None, None, "session", False)
        if self.v >= 2 and (self.v == 3 or r.random() < 0.8):
            self.tick(1, 50)
            self.entry("model_change", {"provider": self.provider, "modelId": self.model})
            self.entry("thinking_level_change", {"thinkingLevel": self.thinking})
        nturn = 0
        while True:
            self.turn()
            nturn += 1
            if nturn in self.manual_compact and self.turns:     # like a manual /compact
                self.compaction()
            if self.size >= self.target:
                break
            self.meta_entries(nturn == 1)
            if self.since_compact >= self.compact_at and len(self.turns) >= 2:
                self.compaction()
            if not self.branch_done and len(self.turns) >= 2 and self.size >= self.branch_frac * self.target:
                self.branch()
        return self


# ---------------------------------------------------------------------------
# Planting
# ---------------------------------------------------------------------------

def plant_requests():
    """(token, category requirement) in a fixed order."""
    reqs = []
    kinds = (["user_active"] * 32 + ["user_string"] * 8 + ["assistant_active"] * 35 + ["v1"] * 10 +
             ["abandoned"] * 15)
    for i, k in enumerate(kinds, 1):
        reqs.append((f"{RARE}plant{i:04d}", k))
    return reqs


HIDDEN = ([(f"{RARE}toolres{i:02d}", "toolResult") for i in range(1, 6)] +
          [(f"{RARE}think{i:02d}", "thinking") for i in range(1, 4)] +
          [(f"{RARE}toolarg{i:02d}", "toolArg") for i in range(1, 4)] +
          [(f"{RARE}summary{i:02d}", "summary") for i in range(1, 4)] +
          [(f"{RARE}bashexec{i:02d}", "bashExec") for i in range(1, 3)] +
          [(f"{RARE}sessname{i:02d}", "name") for i in range(1, 3)])
HIDDEN_KIND = {"toolResult": "toolResult text", "thinking": "thinking block", "toolArg": "toolCall arguments (bash command)",
               "summary": "compaction/branch summary", "bashExec": "bashExecution output", "name": "session_info name"}
N_PHRASES = 5


def matches(req: str, cat: str, role_ok_active: bool, v: int) -> bool:
    doc = cat in ("user", "user_string", "assistant")
    if req == "user_active":
        return cat in ("user", "user_string") and role_ok_active and v >= 2
    if req == "user_string":
        return cat == "user_string" and role_ok_active
    if req == "assistant_active":
        return cat == "assistant" and role_ok_active and v >= 2
    if req == "v1":
        return doc and v == 1
    if req == "abandoned":
        return doc and not role_ok_active
    if req in ("phrase", "split"):
        return doc and role_ok_active
    if req == "any_doc":
        return doc
    return cat == req


def insert_at(r: Random, text: str, ins: str) -> str:
    if not text:
        return ins
    pos = text.find(" ", r.randrange(len(text)))
    if pos < 0:
        pos = text.rfind(" ")
    if pos < 0:
        return text + " " + ins
    return text[:pos] + " " + ins + text[pos:]


VOCAB_WINDOW = 20_000_000
DOC_CATS = ("user", "user_string", "assistant")


class VocabMeter:
    """Distinct lower-cased \\w+ tokens in user and assistant text: in the whole corpus, and in each window of
    VOCAB_WINDOW corpus bytes (a text counts in the window where its line starts; positions in characters)."""

    def __init__(self):
        self.all: set = set()
        self.win: set = set()
        self.win_end = VOCAB_WINDOW
        self.windows: list = []
        self.letter_windows: list = []
        self.text_chars = 0

    def add_session(self, base: int, lines, elig):
        docs = sorted((li, v) for li, cat, _, v in elig if cat in DOC_CATS)
        if not docs:
            return
        pos, acc, j = [], 0, 0
        for li, L in enumerate(lines):
            while j < len(docs) and docs[j][0] == li:
                pos.append(base + acc)
                j += 1
            if j == len(docs):
                break
            acc += len(L) + 1
        batch = []
        for (li, v), at in zip(docs, pos):
            while at >= self.win_end:
                self.flush(batch)
                batch = []
                self.windows.append(len(self.win))
                self.letter_windows.append(sum(1 for x in self.win if x.isalpha()))
                self.win = set()
                self.win_end += VOCAB_WINDOW
            batch.append(v)
            self.text_chars += len(v)
        self.flush(batch)

    def flush(self, batch):
        if batch:
            ws = set(WORD_RE.findall("\n".join(batch).lower()))
            self.win |= ws
            self.all |= ws

    def report(self, total_bytes: int) -> dict:
        w = self.windows
        d = {"distinctWords": len(self.all), "distinctLetterWords": sum(1 for x in self.all if x.isalpha()),
             "userAssistantTextChars": self.text_chars,
             "distinctWordsPer20MB": ({"windows": len(w), "median": int(statistics.median(w)), "min": min(w),
                                       "max": max(w),
                                       "letterWordsMedian": int(statistics.median(self.letter_windows))} if w else
                                      {"windows": 0, "partialWindowBytes": total_bytes,
                                       "partialWindowDistinct": len(self.win),
                                       "partialWindowLetterWords": sum(1 for x in self.win if x.isalpha())}),
             "tokens": "lower-cased \\w+ runs (Python re) in user and assistant message text, any branch "
                       "(numbers, hex ids and snake_case names count); distinctLetterWords: those made of "
                       "letters only"}
        return d


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def parse_share(s: str):
    if s in TEXT_SHARES:
        return TEXT_SHARES[s]
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r}: give realistic, heavy or a fraction such as 0.12")
    if not 0.0 < v < 0.9:
        raise argparse.ArgumentTypeError(f"{s}: a fraction of the bytes above 0 and below 0.9")
    return v


# -- forks (--fork-share) -----------------------------------------------------
# Heavy Pi users fork: /fork writes a new file holding the path root -> the
# chosen entry with the original entry ids and text, and names its parent in
# `parentSession` (an absolute path). With --fork-share F, that share of the
# linear version 2/3 sessions gets one to three forks, each cut at a message
# of its parent and going on with a short exchange of its own. Forks are
# written on top of --size (the corpus without them stays byte for byte the
# same, so published numbers stay reproducible); the manifest counts them.
FORK_WORDS = ("fork", "branch", "retry", "instead", "alternative", "compare", "again", "variant", "other",
              "approach", "revisit", "option")


def write_forks(out, rel_dir, fname, lines, meta, ts_ms, seed, share):
    """Maybe write forks of one session; returns (files, bytes, copied documents, own documents)."""
    fr = Random(seed ^ 0xF0F0F0)
    if fr.random() >= share:
        return 0, 0, 0, 0
    msgs = [li for li in range(1, len(lines)) if meta[li][3] and meta[li][0] is not None]
    if not msgs:
        return 0, 0, 0, 0
    parent = os.path.abspath(os.path.join(out, rel_dir, fname))
    files = nbytes = copied = own = 0
    for k in range(fr.randint(1, 3)):
        cut = fr.choice(msgs)
        t = ts_ms + (k + 1) * 3_600_000
        sid = uuid4(fr)
        hdr = json.loads(lines[0])
        hdr.update({"id": sid, "timestamp": iso(t), "parentSession": parent})
        body = lines[1:cut + 1]
        last = meta[cut][0]
        extra = []
        for role in ("user", "assistant"):
            eid = "%08x" % fr.getrandbits(32)
            text = " ".join(fr.choice(FORK_WORDS) for _ in range(fr.randint(4, 12)))
            t += 1000
            msg = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}],
                   "timestamp": t}
            if role == "assistant":
                msg.update({"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                            "stopReason": "stop"})
            extra.append(json.dumps({"type": "message", "id": eid, "parentId": last, "timestamp": iso(t),
                                     "message": msg}, separators=(",", ":")))
            last = eid
        name = iso(t - 2000).replace(":", "-").replace(".", "-") + "_" + sid + ".jsonl"
        b = ("\n".join([json.dumps(hdr, separators=(",", ":"))] + body + extra) + "\n").encode("utf-8")
        with open(os.path.join(out, rel_dir, name), "wb") as fh:
            fh.write(b)
        files += 1
        nbytes += len(b)
        copied += sum(1 for li in range(1, cut + 1) if meta[li][3])
        own += 2
    return files, nbytes, copied, own


def main():
    global TEXT_SHARE
    ap = argparse.ArgumentParser(description="Generate a deterministic corpus of Pi session files.")
    ap.add_argument("--out", required=True, help="output directory (created; must be empty unless --force)")
    ap.add_argument("--size", type=parse_size, default=parse_size("200MB"),
                    help="total size, e.g. 5MB, 200MB, 1GB, 10GB (decimal; MiB/GiB binary)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--projects", type=int, default=None, help="number of projects (default: 8-40, scales with size)")
    ap.add_argument("--damage", type=float, default=0.0,
                    help="fraction of non-header lines replaced by a cut-short copy (default 0)")
    ap.add_argument("--vocab", choices=("real", "words"), default="real",
                    help="real (default): user, assistant and thinking text from real technical prose, tool "
                         "output and code from real source files (cargo registry sources, or --sources); "
                         "words: the small built-in word lists and templates (the corpus of earlier releases)")
    ap.add_argument("--sources", action="append", metavar="DIR",
                    help="with --vocab real: read sources below DIR instead of $CARGO_HOME/registry/src/*/ "
                         "(repeatable)")
    ap.add_argument("--source-bytes", type=parse_size, default=SRC_MAX_TOTAL,
                    help="with --vocab real: read at most this many bytes of sources (default 64MB)")
    ap.add_argument("--text-share", type=parse_share, default=None, metavar="SHARE",
                    help="how much of the corpus is user and assistant text: realistic (default: the mix this "
                         "generator always made, ~6%% of the bytes), heavy (10%%: agents that explain at length, "
                         "heavy chat users), or a fraction such as 0.12; replies are lengthened to reach it")
    ap.add_argument("--json", action="store_true", help="print a JSON manifest on stdout")
    ap.add_argument("--fork-share", type=float, default=0.0,
                    help="share of linear v2/v3 sessions given 1-3 forks (as /fork writes them: the path to a "
                         "message, original ids, parentSession), written on top of --size (default 0: none)")
    ap.add_argument("--force", action="store_true", help="write into a non-empty output directory")
    a = ap.parse_args()
    TEXT_SHARE = a.text_share
    if not 0.0 <= a.damage < 1.0:
        ap.error("--damage must be in [0, 1)")
    if not 0.0 <= a.fork_share <= 1.0:
        ap.error("--fork-share must be in [0, 1]")
    forks = {"sessions": 0, "forks": 0, "bytes": 0, "copiedDocuments": 0, "ownDocuments": 0}
    t0 = time.time()
    total = a.size
    out = a.out
    if os.path.isdir(out) and os.listdir(out) and not a.force:
        ap.error(f"{out} is not empty (use --force to write into it anyway)")
    os.makedirs(out, exist_ok=True)
    nproj = a.projects or max(8, min(40, round(8 + 2.5 * math.log2(max(1.0, total / 10e6)))))

    src = None
    if a.vocab == "real":
        roots = a.sources or default_source_roots()
        src = Sources(roots, a.seed, a.source_bytes)
        if not src.files:
            print(NO_SOURCES.format(where=" in " + (", ".join(src.roots) if src.roots else
                                                     "$CARGO_HOME/registry/src (there is none)")), file=sys.stderr)
            sys.exit(2)
        pools = RealPools(a.seed, src)
    else:
        pools = Pools(a.seed)
    t_pools = time.time() - t0
    plans = make_plan(total, a.seed, nproj)
    pnames, plangs = project_list(nproj, a.seed)
    # project file sets
    prng = Random(a.seed * 7 + 3)
    proj_files = []
    if pools.real:   # languages the sources have (the cargo registry: Rust)
        plangs = [x if x in pools.langs else pools.main_lang for x in plangs]
    for name, lang in zip(pnames, plangs):
        if pools.real:
            proj_files.append(pools.project_files(prng, lang))
            continue
        fl = []
        ext = {"rust": "rs", "ts": "ts", "python": "py"}[lang]
        for _ in range(prng.randint(20, 150)):
            u = prng.random()
            if u < 0.8:
                fl.append((f"{prng.choice(pools.dirs)}/{prng.choice(pools.snake)}.{ext}", prng.choice(pools.files[lang])))
            elif u < 0.9:
                fl.append((f"docs/{prng.choice(pools.snake)}.md", prng.choice(pools.files["md"])))
            elif u < 0.97:
                fl.append((f"data/{prng.choice(pools.snake)}.json", prng.choice(pools.files["json"])))
            else:
                fl.append(("Cargo.toml" if lang == "rust" else "pyproject.toml" if lang == "python" else "package.json",
                           prng.choice(pools.files["toml" if lang != "ts" else "json"])))
        proj_files.append(fl)

    # planting: assign each request to a plan index with matching plan-level traits
    arng = Random(a.seed * 13 + 11)
    n = len(plans)
    early = max(1, int(n * 0.8))
    v1_idx = [p.idx for p in plans[:early] if p.version == 1] or [p.idx for p in plans if p.version == 1]
    br_idx = [p.idx for p in plans[:early] if p.branched] or [p.idx for p in plans if p.branched]
    v23_idx = [p.idx for p in plans[:early] if p.version >= 2] or list(range(n))
    assigned: dict[int, list] = {}

    big_idx = [p.idx for p in plans[:early] if p.target >= 30_000] or list(range(n))

    def assign(item, req):
        pool = v1_idx if req == "v1" else br_idx if req == "abandoned" else \
            v23_idx if req in ("user_active", "assistant_active") else big_idx if req == "summary" else \
            list(range(early))
        if not pool:
            pool = list(range(n))
        i = arng.choice(pool)
        assigned.setdefault(i, []).append(item)
        if req == "summary":
            plans[i].force_compact += 1   # make sure that session has enough compaction summaries

    for tok, req in plant_requests():
        assign(("plant", tok, req), req)
    for i in range(1, N_PHRASES + 1):
        assign(("adjacent", f"{RARE}phrase{i:02d}a {RARE}phrase{i:02d}b", "phrase"), "phrase")
        assign(("split", f"{RARE}phrase{i:02d}b and then {RARE}phrase{i:02d}a", "split"), "split")
    for tok, cat in HIDDEN:
        assign(("hidden", tok, cat), cat)
    carry: list = []

    planted, phrases, hidden, damaged = [], {}, [], []
    voc = VocabMeter()
    tot = {"files": 0, "bytes": 0, "lines": 0, "user": 0, "assistant": 0, "toolResult": 0, "bashExecution": 0,
           "docs": 0, "docs_active": 0, "text": 0, "versions": {"1": 0, "2": 0, "3": 0}, "branched": 0, "compactions": 0}
    largest = []
    written = 0
    remaining_plan = sum(p.target for p in plans)
    for k, p in enumerate(plans):
        left = total - written
        scale = left / remaining_plan if remaining_plan > 0 else 1.0
        target = int(p.target * scale) if k < n - 1 else left
        remaining_plan -= p.target
        s = Session(pools, p, pnames[p.project], plangs[p.project], proj_files[p.project], target).run()
        lines, meta = s.lines, s.meta
        # active branch
        if s.v == 1 or not s.plan.branched:
            active = [True] * len(lines)
        else:
            parent_of = {m[0]: m[1] for m in meta if m[0] is not None}
            on = set()
            cur = meta[-1][0]
            while cur is not None and cur not in on:
                on.add(cur)
                cur = parent_of.get(cur)
            active = [m[0] is None or m[0] in on for m in meta]
        rel_dir = "--" + s.cwd.lstrip("/\\").replace("/", "-").replace("\\", "-").replace(":", "-") + "--"
        fname = s.ts.replace(":", "-").replace(".", "-") + "_" + s.sid + ".jsonl"
        rel = f"{rel_dir}/{fname}"
        # planting
        prn = Random(p.seed ^ 0x5EED)
        todo = carry + assigned.get(p.idx, [])
        carry = []
        used = set()
        protect = set()
        last = k == n - 1
        for item in todo:
            what, tok, req = item
            cands = [e for e in range(len(s.elig)) if e not in used and
                     matches(req, s.elig[e][1], active[s.elig[e][0]], s.v)]
            if not cands and last:   # relax: anything that fits the kind
                relax = "any_doc" if what != "hidden" else req
                cands = [e for e in range(len(s.elig)) if e not in used and
                         matches(relax, s.elig[e][1], True, s.v)]
            if not cands:
                carry.append(item)
                continue
            e = cands[prn.randrange(len(cands))]
            used.add(e)
            li, cat, key, val = s.elig[e]
            new = insert_at(prn, val, tok)
            old_frag = '"%s":%s' % (key, ENC(val))
            line = lines[li]
            j = line.find(old_frag)
            assert j >= 0, (rel, li, key)
            lines[li] = line[:j] + '"%s":%s' % (key, ENC(new)) + line[j + len(old_frag):]
            # keep any other eligible reference to the same value on this line consistent
            s.elig[e] = (li, cat, key, new)
            protect.add(li)
            role = meta[li][2]
            loc = {"file": rel, "line": li + 1, "role": role, "active": active[li], "version": s.v,
                   "entryId": meta[li][0], "content": "string" if cat == "user_string" else "blocks"}
            if what == "plant":
                planted.append({"token": tok, "want": req, **loc})
            elif what == "hidden":
                hidden.append({"token": tok, "kind": HIDDEN_KIND[req], **loc})
            else:
                phrases.setdefault(tok.split()[0][:-1] if what == "adjacent" else tok.split()[-1][:-1], {})[what] = \
                    {"text": tok, **loc}
        # damage (the size budget uses the undamaged bytes, so damage does not change the rest of the corpus)
        clean_bytes = None
        if a.damage > 0:
            clean_bytes = sum(len(L.encode("utf-8")) + 1 for L in lines)
            drng = Random(p.seed ^ 0xDA3A6E)
            for li in range(1, len(lines)):
                if drng.random() < a.damage and li not in protect:
                    L = lines[li]
                    lines[li] = L[:drng.randint(1, max(1, len(L) - 2))]
                    damaged.append({"file": rel, "line": li + 1, "type": meta[li][2], "wasDocument": meta[li][3]})
                    meta[li] = (meta[li][0], meta[li][1], meta[li][2], False)
        if a.json:   # distinct words of user and assistant text, overall and per VOCAB_WINDOW bytes of corpus
            voc.add_session(tot["bytes"], lines, s.elig)
        # write
        os.makedirs(os.path.join(out, rel_dir), exist_ok=True)
        nbytes = 0
        with open(os.path.join(out, rel_dir, fname), "wb") as fh:
            buf, bl = [], 0
            for L in lines:
                buf.append(L)
                bl += len(L)
                if bl >= 8_000_000:
                    b = ("\n".join(buf) + "\n").encode("utf-8")
                    fh.write(b)
                    nbytes += len(b)
                    buf, bl = [], 0
            if buf:
                b = ("\n".join(buf) + "\n").encode("utf-8")
                fh.write(b)
                nbytes += len(b)
        written += nbytes if clean_bytes is None else clean_bytes
        if a.fork_share > 0 and s.v >= 2 and all(active) and not a.damage:
            nf, fb, fc, fo = write_forks(out, rel_dir, fname, lines, meta, s.t, p.seed, a.fork_share)
            forks["sessions"] += 1 if nf else 0
            forks["forks"] += nf
            forks["bytes"] += fb
            forks["copiedDocuments"] += fc
            forks["ownDocuments"] += fo
        tot["files"] += 1
        tot["bytes"] += nbytes
        tot["lines"] += len(lines)
        tot["user"] += s.n_user
        tot["assistant"] += s.n_assist
        tot["toolResult"] += s.n_tool
        tot["bashExecution"] += s.n_bash
        tot["text"] += s.text_chars
        tot["versions"][str(s.v)] += 1
        tot["branched"] += 1 if (s.v >= 2 and not all(active)) else 0
        tot["compactions"] += sum(1 for m in meta if m[2] == "compaction")
        tot["docs"] += sum(1 for m in meta if m[3])
        tot["docs_active"] += sum(1 for m, on_ in zip(meta, active) if m[3] and on_)
        largest.append((nbytes, rel))
        largest.sort(reverse=True)
        del largest[5:]
        # byte offsets of planted lines
        if protect:
            offs = {}
            acc = 0
            for li, L in enumerate(lines):
                if li in protect:
                    offs[li + 1] = acc
                acc += len(L.encode("utf-8")) + 1
            for lst in (planted, hidden):
                for x in lst:
                    if x["file"] == rel:
                        x["offset"] = offs[x["line"]]
            for ph in phrases.values():
                for x in ph.values():
                    if x["file"] == rel:
                        x["offset"] = offs[x["line"]]
    dt = time.time() - t0
    missing = [it[1] for it in carry]
    print(f"gen-corpus: {tot['files']} files, {tot['bytes']:,} bytes (requested {total:,}, "
          f"{(tot['bytes'] - total) / total * 100:+.2f}%), {tot['lines']:,} lines, {nproj} projects, "
          f"{dt:.1f} s ({t_pools:.1f} s of it reading sources and building pools), "
          f"{tot['bytes'] / 1e6 / max(dt, 1e-9):.1f} MB/s, vocab {a.vocab}, "
          f"user and assistant text {tot['text'] / max(1, tot['bytes']) * 100:.1f}% of the bytes"
          + (f" (--text-share {a.text_share})" if a.text_share is not None else "")
          + (f", {len(damaged)} damaged lines" if a.damage else "")
          + (f", {forks['forks']} forks of {forks['sessions']} sessions ({forks['bytes']:,} bytes more, "
             f"{forks['copiedDocuments']:,} copied documents)" if a.fork_share else "")
          + (f", UNPLANTED: {missing}" if missing else ""), file=sys.stderr)
    if a.json:
        manifest = {
            "generator": "scripts/gen-corpus.py", "seed": a.seed, "requestedBytes": total, "damageRate": a.damage,
            "textShare": {"requested": "realistic" if a.text_share is None else a.text_share,
                          "userAssistantTextChars": tot["text"]},
            "totals": {"files": tot["files"], "bytes": tot["bytes"], "lines": tot["lines"], "projects": nproj,
                       "sessionsByVersion": tot["versions"], "branchedSessions": tot["branched"],
                       "compactions": tot["compactions"],
                       "messages": {"user": tot["user"], "assistant": tot["assistant"],
                                    "toolResult": tot["toolResult"], "bashExecution": tot["bashExecution"]},
                       "documents": tot["docs"], "documentsActive": tot["docs_active"],
                       "damagedLines": len(damaged)},
            "notes": ["line numbers are 1-based, offsets are byte offsets of the line start",
                      "documents = user/assistant message lines whose joined text is non-empty after trimming "
                      "(undamaged lines only), on any branch",
                      "planted tokens appear exactly once in the corpus; phrase words appear twice: once adjacent "
                      "('adjacent') and once split and reversed in another message ('split')",
                      "hidden tokens appear only outside default-indexed text and must not be found by default"],
            "planted": sorted(planted, key=lambda x: x["token"]),
            "phrases": [{"phrase": f"{w}a {w}b", **v} for w, v in sorted(phrases.items())],
            "hidden": sorted(hidden, key=lambda x: x["token"]),
            "unplanted": missing,
            "damaged": damaged,
            "largestFiles": [{"file": r_, "bytes": b_} for b_, r_ in largest],
            **({"forks": {**forks, "share": a.fork_share,
                          "note": "forks are extra files beyond totals (which do not count them); a fork's "
                                  "copiedDocuments repeat its parent's documents (one hit each after merging), "
                                  "ownDocuments are its own"}} if a.fork_share else {}),
            "vocab": {"mode": a.vocab,
                      "sourceRoots": src.roots if src else [],
                      "sourceCandidates": src.candidates if src else 0,
                      "sourceFiles": len(src.files) if src else 0,
                      "sourceBytes": src.bytes if src else 0,
                      "sourceBytesCap": a.source_bytes if src else 0,
                      "sourceDigest": "sha256:" + src.digest if src else None,
                      **voc.report(tot["bytes"])},
        }
        json.dump(manifest, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
