// The Temporal Web UI as a person reads ARGUS sweeps: two real sweeps (one complete, one partial) on a worker in
// this process, then headless Chromium on the test server's UI — the list filtered by `ArgusPartial = true` and the
// partial run's page with its summary. Screenshots go to test-artifacts/.
import * as path from 'node:path';
import { existsSync, rmSync, statSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { testUiUrl, uniqueId, TEST_NAMESPACE } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { ARTIFACTS_DIR, launchChromium, saveScreenshot, type Shot } from '../support/browser';
import { startSweep, resultOf } from '../../client/sweeps';
import type { SweepReport } from '../../domain/report';

const PARTIAL_QUERY = 'ArgusPartial = true';
// The UI is a single-page app served by the dev server: on a loaded 2-core machine its first render has taken
// over 20 s, so each wait allows 45 s (and the test four minutes in all).
const UI_WAIT_MS = 45_000;

let browser: Browser | undefined;

const w = useArgusWorker('tq-web-ui');

afterAll(async () => {
  await browser?.close();
});

async function sweepOf(name: string, edit?: (c: { entities: Record<string, unknown>[] }) => void) {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'copies', name), `${name}.json`);
  if (edit) {
    const c = readCatalog(file) as unknown as { entities: Record<string, unknown>[] };
    edit(c);
    writeCatalog(file, c);
  }
  const workflowId = uniqueId(`sweep/${name}`);
  const handle = await startSweep(
    w.client,
    { catalog: { kind: 'file', path: file } },
    { taskQueue: w.tw.taskQueue, workflowId },
  );
  return { workflowId, result: resultOf(handle) as Promise<SweepReport> };
}

/** Polls visibility until `query` lists `workflowId` (visibility is eventually consistent). */
async function visibleTo(query: string, workflowId: string, timeoutMs = UI_WAIT_MS): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for await (const run of w.client.workflow.list({ query })) if (run.workflowId === workflowId) return;
    if (Date.now() > until) throw new Error(`${workflowId} not listed by "${query}" after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Loads `url` until `text` shows on the page, reloading between tries. */
async function gotoUntilVisible(page: Page, url: string, text: string, timeoutMs = UI_WAIT_MS): Promise<void> {
  const until = Date.now() + timeoutMs;
  await page.goto(url);
  for (;;) {
    try {
      await page.getByText(text, { exact: true }).first().waitFor({ state: 'visible', timeout: 3_000 });
      return;
    } catch (err) {
      if (Date.now() > until)
        throw new Error(`"${text}" did not appear on ${url} within ${timeoutMs / 1000} s`, { cause: err });
      await page.reload();
    }
  }
}

test('the Web UI lists partial sweeps by ArgusPartial and shows the partial run with its summary', async () => {
  browser = await launchChromium(); // first: a missing Chromium fails the test before any sweep runs
  const complete = await sweepOf('webui-complete');
  const partial = await sweepOf('webui-partial', (c) =>
    c.entities.push({ id: 'raw.broken', database: 'shop', name: 'broken', kind: 'table', columns: [] }),
  );
  const [completeReport, partialReport] = await Promise.all([complete.result, partial.result]);
  expect(completeReport.partial).toBe(false);
  expect(partialReport.partial).toBe(true);

  // The filter must be indexed on the server before the browser can be expected to show it.
  await visibleTo(PARTIAL_QUERY, partial.workflowId);
  await visibleTo('ArgusPartial = false', complete.workflowId);

  for (const name of [
    'web-ui-partial-list.png',
    'web-ui-partial-run.png',
    'web-ui-partial-memo-no-worker.png',
    'web-ui-failure.png',
  ])
    rmSync(path.join(ARTIFACTS_DIR, name), { force: true });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.setDefaultTimeout(UI_WAIT_MS);
  const base = testUiUrl();
  let list: Shot | undefined;
  let run: Shot | undefined;
  let memoShot: Shot | undefined;
  try {
    // 1. The list, filtered to partial runs through the URL's `query` parameter (the UI shows it as a filter chip).
    const listUrl = `${base}/namespaces/${TEST_NAMESPACE}/workflows?query=${encodeURIComponent(PARTIAL_QUERY)}`;
    await gotoUntilVisible(page, listUrl, partial.workflowId);
    await page
      .getByRole('button', { name: /ArgusPartial\s*=\s*true/ })
      .first()
      .waitFor({ state: 'visible' });
    expect(await page.getByText(complete.workflowId, { exact: true }).count()).toBe(0);
    list = await saveScreenshot(page, 'web-ui-partial-list.png');

    // 2. The partial run's page, opened from the list. It opens on the Timeline tab; the static summary and details
    // and the current details are on the User Metadata tab, each rendered as Markdown in its own iframe.
    await page.getByRole('link', { name: partial.workflowId, exact: true }).first().click();
    await page.getByRole('heading', { name: partial.workflowId }).first().waitFor({ state: 'visible' });
    await page.getByText('User Metadata', { exact: true }).first().click();
    const summary = page
      .frameLocator('iframe#user-metadata-summary')
      .getByText('ARGUS sweep of webui-partial (mechanical review)', { exact: true });
    const current = page.frameLocator('iframe#user-metadata-current-details');
    const partialLine = current.getByText(`PARTIAL — ${partialReport.partialReasons[0]}`);
    await summary.waitFor({ state: 'visible' });
    await partialLine.waitFor({ state: 'visible' });
    expect(await summary.isVisible()).toBe(true);
    expect(await partialLine.isVisible()).toBe(true);
    expect(await current.locator('strong', { hasText: 'PARTIAL' }).count()).toBe(1); // the Markdown was rendered
    run = await saveScreenshot(page, 'web-ui-partial-run.png');

    // 3. With every worker stopped the live details are gone; the persisted memo still says PARTIAL, why, and
    // where the full report is.
    await w.tw.stop();
    await page.reload();
    await page.getByRole('heading', { name: partial.workflowId }).first().waitFor({ state: 'visible' });
    await page.getByText('Memo', { exact: true }).first().click();
    const memo = page.getByText(/"verdict": "PARTIAL"/).first();
    await memo.waitFor({ state: 'visible' });
    const memoText = await page.locator('main').innerText();
    expect(memoText).toContain(`argus report ${partial.workflowId} --format html`);
    expect(memoText).toContain(partialReport.reportFile);
    expect(memoText).toContain(partialReport.partialReasons[0]!);
    memoShot = await saveScreenshot(page, 'web-ui-partial-memo-no-worker.png');
  } catch (err) {
    const shot = await saveScreenshot(page, 'web-ui-failure.png').catch(() => undefined);
    throw new Error(`${(err as Error).message}\n(page ${page.url()}; screenshot ${shot?.file ?? 'not saved'})`, {
      cause: err,
    });
  }

  for (const shot of [list, run, memoShot]) {
    expect(shot && existsSync(shot.file)).toBe(true);
    expect(statSync(shot!.file).size).toBeGreaterThan(0);
  }
}, 240_000);
