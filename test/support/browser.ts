// Headless Chromium for end-to-end tests of the Temporal Web UI, through playwright-core and the system's
// Chromium (Debian's `chromium` package; CI's .ci/run installs it). No browser download, no silent skip: a
// missing Chromium fails the test with what to install.
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The Chromium binary: ARGUS_CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.ARGUS_CHROMIUM_PATH || '/usr/bin/chromium';
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

/** Launches headless Chromium; throws a clear error (never skips) when the binary is missing. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium not found at ${executablePath}: the Web UI end-to-end test needs it. ` +
        'Install it (Debian/Ubuntu: `apt-get install -y chromium`) or set ARGUS_CHROMIUM_PATH to a Chromium binary.',
    );
  }
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
