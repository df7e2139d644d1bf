#!/usr/bin/env node
// Runs a TypeScript entry point with tsx's loader in one child process (`node --import tsx entry.ts`, not
// the tsx CLI, which would add a process of its own that relays only SIGINT and SIGTERM). Always from
// source: a compiled dist/ copy newer than the entry file may still be older than what it imports.
//
// Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process are passed on to the child, and this
// process ends the way the child did: the same exit code, or the same signal re-raised on itself, so a
// killed worker shows as killed (`kill <pid of npm run worker>` stops the worker; a kill -9'd one is not a 0).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
// What a terminal sends to its whole foreground process group (Ctrl-C, Ctrl-\).
const FROM_TERMINAL = new Set(['SIGINT', 'SIGQUIT']);

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.js <entry.ts> [args...]');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');
const src = path.resolve(root, entry);
const loader = path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
if (!fs.existsSync(loader)) {
  console.error('Dependencies are missing: run `bash scripts/ensure-deps.sh` (or `npm install`) first.');
  process.exit(1);
}

/**
 * True when this process (and so the child, which shares its group) is in its terminal's foreground
 * process group: a Ctrl-C then reaches the child directly, and passing it on would make it a second one
 * (the Temporal worker treats a second SIGINT as "stop now" instead of shutting down gracefully).
 */
function inForegroundGroup() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const [, , pgrp, , , tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(tpgid) > 0 && pgrp === tpgid;
  } catch {
    return false; // not Linux: pass everything on
  }
}

const child = spawn(process.execPath, ['--import', pathToFileURL(loader).href, src, ...args], { stdio: 'inherit' });

const forward = (signal) => {
  if (FROM_TERMINAL.has(signal) && inForegroundGroup()) return;
  try {
    child.kill(signal);
  } catch {
    /* already gone: its exit event follows */
  }
};
for (const signal of FORWARDED) process.on(signal, forward);

child.on('error', (err) => {
  console.error(`cannot start ${entry}: ${err.message}`);
  process.exit(1);
});

child.on('exit', (code, signal) => {
  for (const s of FORWARDED) process.off(s, forward);
  if (signal === null) process.exit(code ?? 1);
  // Die of the same signal. Node ignores a few (SIGPIPE) or handles them itself (SIGUSR1): for those
  // there is the shell's convention, 128 + the signal number.
  try {
    process.kill(process.pid, signal);
  } catch {
    /* unknown to this platform */
  }
  setTimeout(() => process.exit(128 + (os.constants.signals[signal] ?? 0)), 100);
});
