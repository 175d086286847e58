#!/usr/bin/env python3
"""The picker's screenshot (docs/pick.png), taken from the real picker.

Builds an index of the bundled fixtures, runs `pi-index pick` in a
tmux pane of its own (no user configuration), types a query, captures the
pane with its colours (`tmux capture-pane -e -p`), writes that screen as
HTML (each cell as the terminal drew it, in a monospace font) and has
headless Chromium screenshot the page. Nothing is drawn by hand: what the
PNG shows is the capture.

    python3 scripts/pick-screenshot.py --bin target/release/pi-index        # docs/pick.png
    python3 scripts/pick-screenshot.py --bin BIN --fixtures fixtures/search --query tokio --keys Down

Needs tmux and chromium. Standard library only.
"""

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# xterm's 16 colours (as most terminal themes draw them, dark background).
PALETTE16 = [
    "#1e1e1e", "#e05561", "#8cc265", "#d18f52", "#4aa5f0", "#c162de", "#42b3c2", "#d7dae0",
    "#5c6370", "#ff616e", "#a5e075", "#f0a45d", "#4dc4ff", "#de73ff", "#4cd1e0", "#ffffff",
]
FG, BG = "#d7dae0", "#1e1e1e"


def color256(n):
    if n < 16:
        return PALETTE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + 10 * (n - 232)
    return "#%02x%02x%02x" % (v, v, v)


class Style:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = self.bg = None
        self.bold = self.dim = self.italic = self.underline = self.reverse = False

    def key(self):
        return (self.fg, self.bg, self.bold, self.dim, self.italic, self.underline, self.reverse)

    def apply(self, params):
        ps = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(ps):
            p = ps[i]
            if p == 0:
                self.reset()
            elif p == 1:
                self.bold = True
            elif p == 2:
                self.dim = True
            elif p == 3:
                self.italic = True
            elif p == 4:
                self.underline = True
            elif p == 7:
                self.reverse = True
            elif p == 22:
                self.bold = self.dim = False
            elif p == 23:
                self.italic = False
            elif p == 24:
                self.underline = False
            elif p == 27:
                self.reverse = False
            elif 30 <= p <= 37:
                self.fg = PALETTE16[p - 30]
            elif 90 <= p <= 97:
                self.fg = PALETTE16[p - 90 + 8]
            elif p == 39:
                self.fg = None
            elif 40 <= p <= 47:
                self.bg = PALETTE16[p - 40]
            elif 100 <= p <= 107:
                self.bg = PALETTE16[p - 100 + 8]
            elif p == 49:
                self.bg = None
            elif p in (38, 48) and i + 1 < len(ps):
                if ps[i + 1] == 5 and i + 2 < len(ps):
                    c = color256(ps[i + 2])
                    i += 2
                elif ps[i + 1] == 2 and i + 4 < len(ps):
                    c = "#%02x%02x%02x" % tuple(ps[i + 2:i + 5])
                    i += 4
                else:
                    c = None
                if p == 38:
                    self.fg = c
                else:
                    self.bg = c
                i += 1
            i += 1

    def css(self):
        fg, bg = self.fg or FG, self.bg or BG
        if self.reverse:
            fg, bg = bg, fg
        out = [f"color:{fg}"]
        if bg != BG:
            out.append(f"background:{bg}")
        if self.bold:
            out.append("font-weight:bold")
        if self.dim:
            out.append("opacity:0.6")
        if self.italic:
            out.append("font-style:italic")
        if self.underline:
            out.append("text-decoration:underline")
        return ";".join(out)


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def ansi_to_html(screen, cols):
    """Each line of `screen` (tmux capture-pane -e: SGR sequences only) as
    spans of one style, padded to `cols` cells."""
    style = Style()
    lines = []
    for raw in screen.split("\n"):
        spans, text, width, at = [], "", 0, 0
        current = style.key()
        css = style.css()
        for m in SGR.finditer(raw):
            chunk = raw[at:m.start()]
            if chunk:
                text += chunk
                width += len(chunk)
            at = m.end()
            style.apply(m.group(1))
            if style.key() != current:
                if text:
                    spans.append((css, text))
                text, current, css = "", style.key(), style.css()
        text += raw[at:]
        width += len(raw[at:])
        if text:
            spans.append((css, text))
        if width < cols:
            spans.append((Style().css(), " " * (cols - width)))
        lines.append("".join(f'<span style="{c}">{html.escape(t)}</span>' for c, t in spans))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                                                  "release", "pi-index"))
    ap.add_argument("--fixtures", nargs="+",
                    default=[os.path.join(ROOT, "fixtures", d) for d in ("search", "sessions")],
                    help="the session directories indexed (default: fixtures/search and fixtures/sessions)")
    ap.add_argument("--query", default="release")
    ap.add_argument("--keys", default="", help="tmux keys sent after the query, e.g. 'Down Tab' (default: none)")
    ap.add_argument("--cols", type=int, default=110)
    ap.add_argument("--rows", type=int, default=26)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "pick.png"))
    ap.add_argument("--keep", help="also keep the capture (.ansi) and the page (.html) in this directory")
    args = ap.parse_args()
    for tool in ("tmux", "chromium"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed")
    binary = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="pick-shot")
    index = os.path.join(work, "index")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/home/u", "LANG": "C.UTF-8", "TZ": "UTC"}
    subprocess.run([binary, "build", *args.fixtures, "--index", index, "-q"], env=env, check=True)
    sock = os.path.join(work, "tmux.sock")
    tmux = ["tmux", "-f", "/dev/null", "-S", sock]
    script = os.path.join(work, "pick.sh")
    with open(script, "w") as f:
        f.write(f"export HOME=/home/u LANG=C.UTF-8 TZ=UTC TERM=xterm-256color\n"
                f"cd /\nexec {binary} pick --index {index} --no-refresh\n")
    subprocess.run(tmux + ["new-session", "-d", "-s", "pick", "-x", str(args.cols), "-y", str(args.rows),
                           "sh", script], check=True)
    try:
        def capture(colours=False):
            return subprocess.run(tmux + ["capture-pane", "-p", "-t", "pick"] + (["-e"] if colours else []),
                                  capture_output=True, text=True).stdout

        def wait_for(pred, what):
            deadline = time.time() + 30
            while time.time() < deadline:
                s = capture()
                if pred(s):
                    return
                time.sleep(0.1)
            sys.exit(f"the picker never showed {what}:\n{capture()}")

        wait_for(lambda s: "Esc quit" in s, "its first frame")
        subprocess.run(tmux + ["send-keys", "-t", "pick", "-l", args.query], check=True)
        wait_for(lambda s: s.startswith("> " + args.query) and "session" in s.split("\n")[0], "the query's rows")
        for k in args.keys.split():
            subprocess.run(tmux + ["send-keys", "-t", "pick", k], check=True)
        time.sleep(1.0)  # the preview of the new selection
        screen = capture(colours=True).rstrip("\n")
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
    body = ansi_to_html(screen, args.cols)
    page = f"""<!doctype html><meta charset="utf-8"><style>
html,body{{margin:0;background:{BG}}}
pre{{margin:0;padding:10px 12px;font:14px/1.17 'DejaVu Sans Mono',monospace;color:{FG};background:{BG}}}
</style><pre>{body}</pre>"""
    page_path = os.path.join(work, "pick.html")
    with open(page_path, "w") as f:
        f.write(page)
    # 14px DejaVu Sans Mono: 8.43 px a cell, 16.4 px a line.
    width = int(args.cols * 8.43 + 24) + 1
    height = int(args.rows * 16.4 + 20) + 1
    out = os.path.abspath(args.out)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--force-device-scale-factor=1", f"--window-size={width},{height}",
                    f"--screenshot={out}", "file://" + page_path],
                   check=True, capture_output=True)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        with open(os.path.join(args.keep, "pick.ansi"), "w") as f:
            f.write(screen)
        shutil.copy(page_path, args.keep)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{out}: {os.path.getsize(out):,} bytes, {args.cols}x{args.rows} cells, query {args.query!r}")


if __name__ == "__main__":
    main()
