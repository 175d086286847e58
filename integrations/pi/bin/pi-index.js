#!/usr/bin/env node
// `pi-index` from npm: runs the binary of this platform (lib/binary.js)
// with the same arguments, standard streams and exit status.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");
const { binaryPath } = require("../lib/binary.js");

let bin;
try {
  bin = binaryPath();
} catch (e) {
  process.stderr.write(`pi-index: error: ${e.message}\n`);
  process.exit(2);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
// A signal sent to this process alone (a supervisor stopping it) reaches
// the binary too; one from the terminal reaches both already, and a
// second delivery changes nothing.
const forward = ["SIGINT", "SIGTERM", "SIGHUP"];
const handlers = forward.map((sig) => {
  const h = () => child.kill(sig);
  process.on(sig, h);
  return [sig, h];
});
child.on("error", (e) => {
  process.stderr.write(`pi-index: error: cannot run ${bin}: ${e.message}\n`);
  process.exit(2);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so whoever waits sees what the binary did.
    // (A signal Node ignores, SIGPIPE, leaves the shell's 128 + number.)
    for (const [sig, h] of handlers) process.off(sig, h);
    process.exitCode = 128 + (constants.signals[signal] ?? 0);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 2);
});
