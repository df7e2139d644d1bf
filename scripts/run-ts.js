#!/usr/bin/env node
// Runs a TypeScript entry point: the compiled copy in dist/ when it is present and newer, otherwise via tsx.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');
const [entry, ...args] = process.argv.slice(2);
const root = path.resolve(__dirname, '..');
const src = path.join(root, entry);
const tsx = path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
if (!fs.existsSync(tsx)) {
  console.error('Dependencies are missing: run `npm install` first.');
  process.exit(1);
}
const r = spawnSync(process.execPath, [tsx, src, ...args], { stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
