// Headless Chromium for end-to-end tests of the Temporal Web UI, through playwright-core. The binary comes from
// scripts/ensure-browser.js: ARGUS_CHROMIUM_PATH, else the system's Chromium (/usr/bin/chromium, ...), else the one
// the npm devDependency @sparticuz/chromium ships, extracted once into .tools/chromium/. No browser download, no
// silent skip: when none of them works the test fails with what was tried and what to install.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

const ENSURE_BROWSER = path.resolve(__dirname, '../../scripts/ensure-browser.js');

/** The Chromium binary that scripts/ensure-browser.js finds or provisions; rejects with its reason otherwise. */
export function chromiumPath(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [ENSURE_BROWSER], { timeout: 300_000 }, (err, stdout, stderr) => {
      const file = stdout.trim();
      if (!err && file) return resolve(file);
      const reason = /argus: error: (.*)/.exec(stderr)?.[1] ?? (stderr.trim() || String(err));
      reject(new Error(`Chromium for the Web UI end-to-end test: ${reason}`));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (!String(chunk).includes('argus: error:')) process.stderr.write(chunk); // progress of a first extraction
    });
  });
}

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless Chromium; throws a clear error (never skips) when no Chromium can be found or provisioned. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = await chromiumPath();
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/** Repo-relative folder for test artifacts (gitignored). */
export const ARTIFACTS_DIR = path.resolve(__dirname, '../../test-artifacts');

export interface Shot {
  file: string;
  bytes: number;
}

/**
 * Saves a full-page screenshot as test-artifacts/<name> (replacing any earlier run's file, so a check that it
 * exists means this run wrote it) and returns its absolute path and size.
 */
export async function saveScreenshot(page: Page, name: string): Promise<Shot> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, name);
  rmSync(file, { force: true });
  await page.screenshot({ path: file, fullPage: true });
  return { file, bytes: existsSync(file) ? statSync(file).size : 0 };
}
