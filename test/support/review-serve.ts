// The review page's end-to-end tests share these: `argus review serve` as a child process (the real CLI, as a
// steward's operator starts it), waiting for a sweep to park its proposals, and loading the page until a sweep
// shows (visibility lists a new run within moments, not at once).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Locator, Page } from 'playwright-core';
import type { SweepProgress } from '../../workflows/messages';

const ROOT = path.resolve(__dirname, '../..');
const WAIT_MS = 60_000;
const children: ChildProcessWithoutNullStreams[] = [];

export interface ServedPage {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** What the server printed on stdout up to its start line. */
  started: string;
  stderr: () => string;
}

/** `argus review serve …` as a child process; resolves once it prints its address (stopReviewPages ends it). */
export function serveReviewPage(args: string[], env: NodeJS.ProcessEnv): Promise<ServedPage> {
  const child = spawn(process.execPath, ['scripts/run-ts.js', 'client/cli.ts', 'review', 'serve', ...args], {
    cwd: ROOT,
    env,
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`review serve did not start in ${WAIT_MS} ms\n${stderr}`)),
      WAIT_MS,
    );
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /ARGUS review page on http:\/\/[^:]+:(\d+)\//.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), started: stdout, stderr: () => stderr });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`review serve exited (${code}) before serving\n${stdout}\n${stderr}`));
    });
  });
}

/** SIGTERM to every review server this file started that still runs. */
export function stopReviewPages(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
}

export async function waitForPhase(client: Client, sweepId: string, phase: SweepProgress['phase']): Promise<void> {
  const h = client.workflow.getHandle(sweepId);
  const until = Date.now() + 120_000;
  for (;;) {
    if ((await h.query<SweepProgress>('progress')).phase === phase) return;
    if (Date.now() > until) throw new Error(`${sweepId} did not reach ${phase}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Load `url` until the sweep's section shows. */
export async function gotoSweep(page: Page, url: string, sweepId: string): Promise<Locator> {
  const section = page.locator(`section.sweep[data-sweep="${sweepId}"]`);
  const until = Date.now() + WAIT_MS;
  await page.goto(url);
  while (!(await section.count())) {
    if (Date.now() > until) throw new Error(`${sweepId} did not appear on ${url}`);
    await new Promise((r) => setTimeout(r, 500));
    await page.reload();
  }
  return section;
}

/** The proposal ids a part of the page lists, sorted. */
export const idsOn = async (scope: Locator): Promise<string[]> =>
  (
    await scope.locator('article.proposal').evaluateAll((els) => els.map((e) => e.getAttribute('data-proposal')!))
  ).sort();
