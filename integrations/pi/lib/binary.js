// Which pi-index binary runs on this machine: the one in the package of
// this platform, `@pi-index/<platform>-<arch>`, one of the
// optionalDependencies of `pi-index` (npm installs only the one whose
// `os`, `cpu` and `libc` fit). Used by the launcher (bin/pi-index.js) and
// by the Pi extension (extensions/find.ts). Plain Node, no dependencies.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

/** The platforms a binary is built for, as `${process.platform}-${process.arch}`. */
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];

/** This machine's platform, as the packages are named. */
function platform() {
  return `${process.platform}-${process.arch}`;
}

/** Whether this is Linux with a C library other than glibc (musl). */
function notGlibc() {
  if (process.platform !== "linux" || !process.report) return false;
  const header = process.report.getReport().header;
  return !header.glibcVersionRuntime;
}

/** The path of the binary for this platform; throws an Error whose
 * message says why there is none and what to do. */
function binaryPath() {
  const here = platform();
  const instead = "build it from source with `cargo install pi-index`, and set PI_INDEX_BIN to its path for Pi's extension";
  if (!PLATFORMS.includes(here)) {
    throw new Error(`pi-index has no prebuilt binary for ${here} (only ${PLATFORMS.join(", ")}): ${instead}`);
  }
  const pkg = `@pi-index/${here}`;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    if (notGlibc()) {
      throw new Error(`pi-index's prebuilt binary for ${here} needs glibc, and this system's C library is another (musl?): ${instead}`);
    }
    throw new Error(
      `${pkg}, the package of pi-index's binary for ${here}, is not installed beside pi-index: ` +
        "install pi-index from npm with its optional dependencies, not with --omit=optional",
    );
  }
  const bin = path.join(dir, "bin", process.platform === "win32" ? "pi-index.exe" : "pi-index");
  if (!fs.existsSync(bin)) {
    throw new Error(`${pkg} is installed but has no ${bin}: install pi-index again`);
  }
  return bin;
}

module.exports = { PLATFORMS, platform, binaryPath };
