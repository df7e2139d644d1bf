// Taking back a steward's decision on the review page, as a steward does it: a first human-review sweep of the demo's
// customers table, its PII tags rejected by a person; the whole demo swept with `humanReview` next, so the gate
// rejects the same shapes elsewhere on that person's word and the sweep waits for people. The real CLI serves the
// page on loopback (reading the workers' file state store); headless Chromium sees the decision with its shape, its
// reviewer and what it decided elsewhere, and presses Forget. The memory then no longer holds it, and the next sweep
// judges the customers table afresh and writes the tags the person had rejected.
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { uniqueId } from '../support/temporal-env';
import {
  useArgusWorker,
  copyCatalog,
  readCatalog,
  writeCatalog,
  runSweep,
  DEMO_CATALOG,
} from '../support/argus-worker';
import { launchChromium, saveScreenshot } from '../support/browser';
import { gotoSweep, serveReviewPage, stopReviewPages, waitForPhase } from '../support/review-serve';
import { cliEnv } from './spawn';
import { fileStateStore } from '../../state/file/store';
import { standingDecisions } from '../../activities/forget-decision';
import { piiShapeOf, SHAPE_REVIEWER_PREFIX } from '../../judgment/pii/shape';
import type { PendingReview } from '../../workflows/messages';
import type { SweepReport } from '../../domain/report';

const w = useArgusWorker('tq-review-forget');
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  stopReviewPages();
});

const shapeOf = (p: SweepReport['proposals'][number]) =>
  p.change.kind === 'pii_tag' ? piiShapeOf(p.change) : undefined;

async function pendingOf(sweepId: string): Promise<PendingReview[]> {
  const h = w.client.workflow.getHandle(sweepId);
  for (let i = 0; i < 300; i++) {
    const pending = await h.query<PendingReview[]>('pendingReviews');
    if (pending.length) return pending;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${sweepId} parked nothing for people`);
}

test('a steward forgets a decision on the page: the memory lets it go, and the next sweep judges its entity afresh', async () => {
  browser = await launchChromium(); // first: a missing Chromium fails the test before any sweep runs
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'review-forget'), 'catalog.json');
  const whole = readCatalog(file);
  writeCatalog(file, { ...whole, entities: whole.entities.filter((e) => e.id === 'raw.customers') });

  // Night one: dana rejects every PII tag proposed on raw.customers.
  const firstId = uniqueId('sweep/forget');
  const first = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: firstId,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '10m' } }],
  });
  const parked = await pendingOf(firstId);
  await first.executeUpdate('review', {
    args: [
      {
        decisions: parked.map((p) => ({
          proposalId: p.proposalId,
          decision: 'rejected',
          reviewer: 'dana',
          time: new Date().toISOString(),
        })),
      },
    ],
  });
  const firstReport = (await first.result()) as SweepReport;
  const rejected = firstReport.proposals.filter((p) => p.kind === 'pii_tag' && p.outcome === 'rejected');
  expect(rejected.length).toBeGreaterThan(0);
  const rejectedShapes = new Set(rejected.map(shapeOf));

  // Night two, the whole demo: the same shapes elsewhere are rejected for dana's decision; other tags wait for people.
  writeCatalog(file, whole);
  const secondId = uniqueId('sweep/forget');
  const second = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: secondId,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '10m' } }],
  });
  await waitForPhase(w.client, secondId, 'awaiting_review');
  const store = fileStateStore(w.tw.stateDir);
  const before = (await standingDecisions(store, secondId)).decisions.filter(
    (d) => d.reviewer === 'dana' && d.decision === 'rejected' && d.shape !== undefined,
  );
  expect(before.length).toBe(rejected.length);
  // The decision the page is to forget: one that decided a tag elsewhere too.
  const target = before.find((d) => d.byShape.length > 0) ?? before[0]!;
  expect(rejectedShapes.has(target.shape)).toBe(true);

  const served = await serveReviewPage(
    ['--port', '0', '--state-dir', w.tw.stateDir, '--task-queue', w.tw.taskQueue],
    cliEnv(w.tw.taskQueue),
  );
  const page = await browser.newPage();
  try {
    const section = await gotoSweep(page, `http://127.0.0.1:${served.port}/`, secondId);
    const row = section.locator(`section.standing tr[data-decision="${target.proposalId}"]`);
    await row.waitFor();
    const text = await row.innerText();
    expect(text).toContain('raw.customers');
    expect(text).toContain('dana');
    expect(text).toContain('rejected');
    if (target.byShape.length) expect(text).toContain(target.byShape[0]!);
    await saveScreenshot(page, 'review-page-standing.png');

    // Without a name the browser does not send the form (the name is required): nothing is forgotten.
    await row.getByRole('button', { name: `Forget ${target.proposalId}` }).click();
    expect(await page.locator('#reviewer:invalid').count()).toBe(1);
    expect(await page.locator('section.forgotten').count()).toBe(0);
    expect((await standingDecisions(store, secondId)).decisions.some((d) => d.proposalId === target.proposalId)).toBe(
      true,
    );
    const again = section;
    await page.locator('#reviewer').fill('erin');
    await again
      .locator(`section.standing tr[data-decision="${target.proposalId}"]`)
      .getByRole('button', { name: `Forget ${target.proposalId}` })
      .click();
    const said = await page.locator('section.forgotten').innerText();
    expect(said).toContain(`Forgot dana’s decision on ${target.proposalId}`);
    expect(said).toContain('(by erin)');
    expect(said).toContain('raw.customers');
    expect(served.stderr()).toContain(`erin (name typed on the page) forgot dana's decision on ${target.proposalId}`);
    await saveScreenshot(page, 'review-page-forgotten.png');
  } catch (err) {
    const shot = await saveScreenshot(page, 'review-page-forget-failure.png').catch(() => undefined);
    throw new Error(
      `${(err as Error).message}\n(page ${page.url()}; screenshot ${shot?.file ?? 'not saved'})\nserver log:\n${served.stderr()}`,
      { cause: err },
    );
  } finally {
    await page.close();
  }
  const after = (await standingDecisions(store, secondId)).decisions.find((d) => d.proposalId === target.proposalId);
  expect(after?.entityId).toBeUndefined(); // the person's own record is gone

  // Night two ends (the rest rejected by people); night three judges raw.customers afresh and tags what dana rejected.
  const rest = await w.client.workflow.getHandle(secondId).query<PendingReview[]>('pendingReviews');
  await second.executeUpdate('review', {
    args: [
      {
        decisions: rest.map((p) => ({
          proposalId: p.proposalId,
          decision: 'rejected',
          reviewer: 'erin',
          time: new Date().toISOString(),
        })),
      },
    ],
  });
  await second.result();
  const third = await runSweep(w, { catalog: { kind: 'file', path: file } }, 'sweep/forget');
  const retagged = third.proposals.filter(
    (p) => p.entityId === 'raw.customers' && p.written && shapeOf(p) === target.shape,
  );
  expect(retagged.length).toBe(1);
  expect(retagged[0]!.reviewer.startsWith(SHAPE_REVIEWER_PREFIX)).toBe(false);
}, 240_000);
