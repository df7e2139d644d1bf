// `argus review serve` as a data steward uses it: a real sweep with `humanReview` parks PII tags on a real worker
// (this process) and the test Temporal server; the real CLI serves the review page (a child process, bound off
// loopback with ARGUS_REVIEW_TOKEN); headless Chromium signs in with the token, reads every proposal with its
// evidence, approves a whole group, rejects one proposal and then a selection, by clicks. The sweep writes exactly
// what was approved and its report's `humanReview` says so. Refusals (no token, a forged token, bad CSRF, decided
// and unknown ids, a finished sweep, no token off loopback at start) are checked over HTTP. Screenshots go to
// test-artifacts/.
import * as http from 'node:http';
import * as path from 'node:path';
import { existsSync, rmSync, statSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { ARTIFACTS_DIR, launchChromium, saveScreenshot, type Shot } from '../support/browser';
import { gotoSweep, idsOn, serveReviewPage, stopReviewPages, waitForPhase } from '../support/review-serve';
import { argus, cliEnv } from './spawn';
import type { PendingReview } from '../../workflows/messages';
import type { SweepReport } from '../../domain/report';

const TOKEN = 'e2e-review-token-5f0c2a9e8d7b6a41';
const REVIEWER = 'dana@example.org';
const WAIT_MS = 60_000;

const w = useArgusWorker('tq-review-page');
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  stopReviewPages();
});

/** What a steward sees without scrolling (for the README: docs/images/ holds copies of these). */
async function saveView(page: Page, name: string): Promise<Shot> {
  const file = path.join(ARTIFACTS_DIR, name);
  rmSync(file, { force: true });
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: file });
  return { file, bytes: statSync(file).size };
}

test('a steward approves a group and rejects one proposal and a selection in the browser; the sweep writes exactly the approved', async () => {
  browser = await launchChromium(); // first: a missing Chromium fails the test before any sweep runs
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'review-page'), 'catalog.json');
  const sweepId = uniqueId('sweep/review-page');
  const handle = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: sweepId,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '30m' } }],
  });
  await waitForPhase(w.client, sweepId, 'awaiting_review');
  const env = cliEnv(w.tw.taskQueue);
  const listed = await argus(['review', 'list', sweepId, '--json'], env);
  expect(listed.code).toBe(0);
  const pending = JSON.parse(listed.stdout) as PendingReview[];
  expect(pending.length).toBeGreaterThanOrEqual(4);
  const taggedBefore = new Set(
    readCatalog(file).entities.flatMap((e) =>
      e.columns.filter((c) => (c.tags ?? []).some((t) => t.kind === 'pii')).map((c) => `${e.id}.${c.name}`),
    ),
  );

  // Off loopback without the token the server refuses to start, naming the variable.
  const refused = await argus(['review', 'serve', '--host', '0.0.0.0', '--port', '0'], env);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(
    'argus: refusing to serve the review page on 0.0.0.0, which is not a loopback address, without an access token: ' +
      "set ARGUS_REVIEW_TOKEN in this server's environment",
  );

  const served = await serveReviewPage(
    ['--host', '0.0.0.0', '--port', '0', '--state-dir', w.tw.stateDir, '--task-queue', w.tw.taskQueue],
    { ...env, ARGUS_REVIEW_TOKEN: TOKEN },
  );
  const base = `http://127.0.0.1:${served.port}`;

  // Without the token: 401, the token form, and not one proposal id.
  const anonymous = await fetch(`${base}/`);
  expect(anonymous.status).toBe(401);
  const anonymousBody = await anonymous.text();
  expect(anonymousBody).toContain('name="token" type="password"');
  for (const p of pending) expect(anonymousBody).not.toContain(p.proposalId);
  const noToken = await fetch(`${base}/decide`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ act: `approved|one|0|${pending[0]!.proposalId}`, 'sweep.0': sweepId }).toString(),
  });
  expect(noToken.status).toBe(401);
  expect(await noToken.text()).toContain('this review page needs its access token (ARGUS_REVIEW_TOKEN)');

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(WAIT_MS);
  const shots: Shot[] = [];
  try {
    // A forged token is refused; the right one opens the page.
    await page.goto(`${base}/`);
    await page.getByLabel(/Access token/).fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Open the review page' }).click();
    await page.getByText('That is not the access token: the page stays closed.').waitFor();
    shots.push(await saveScreenshot(page, 'review-page-token.png'));
    await page.getByLabel(/Access token/).fill(TOKEN);
    await page.getByRole('button', { name: 'Open the review page' }).click();
    let sweep = await gotoSweep(page, `${base}/`, sweepId);
    // The shared token lets a steward in without saying who they are: the page says the name will be as typed.
    expect(await page.locator('.signed-in').innerText()).toBe(
      'Signed in with the shared access token: names on this page are typed, not checked.',
    );
    expect(await page.locator('label[for="reviewer"]').innerText()).toContain('typed, not checked');

    // Every id `argus review list` prints, each with its evidence, the gate's reason and the catalog's text.
    expect(await idsOn(sweep)).toEqual(pending.map((p) => p.proposalId).sort());
    for (const p of pending) {
      const card = sweep.locator(`article.proposal[data-proposal="${p.proposalId}"]`);
      const column = /^tag \S+\.([^.\s]+) as /.exec(p.summary)![1]!;
      const evidence = await card.locator('ul.evidence li').allInnerTexts();
      expect(evidence.length).toBeGreaterThan(0);
      expect(evidence.join('\n')).toContain(column);
      expect(await card.locator('dd.reason').first().innerText()).toBe(p.arbiterReason);
      const text = await card.innerText();
      expect(text).toMatch(/In the catalog now\s+(no description|.+\(written by (a person|ARGUS|unknown)\))/);
      expect(text).toMatch(/no PII tag|tags: /);
      expect(text).not.toContain('not read by this server');
    }
    expect(await sweep.locator('.meta').innerText()).toMatch(/deadline \S+ · \d+ min left/);
    const html = await page.content();
    expect(html).not.toContain(TOKEN);
    expect(html).not.toMatch(/<script|\son[a-z]+=/i);
    shots.push(await saveScreenshot(page, 'review-page-listing.png'));
    shots.push(await saveView(page, 'review-page-listing-view.png'));

    // The group with the most proposals is approved as a whole; one proposal of another group is rejected.
    const groups = await sweep.locator('section.group').evaluateAll((els) =>
      els.map((g) => ({
        key: g.getAttribute('data-group')!,
        ids: [...g.querySelectorAll('article.proposal')].map((a) => a.getAttribute('data-proposal')!),
      })),
    );
    expect(groups.length).toBeGreaterThanOrEqual(2);
    const approvedGroup = [...groups].sort((a, b) => b.ids.length - a.ids.length)[0]!;
    expect(approvedGroup.ids.length).toBeGreaterThanOrEqual(2);
    const rejectOne = groups.find((g) => g.key !== approvedGroup.key)!.ids[0]!;
    const approved = [...approvedGroup.ids].sort();

    await page.locator('#reviewer').fill(REVIEWER);
    await sweep.locator('textarea').fill('checked against the data dictionary');
    const group = sweep.locator(`section.group[data-group="${approvedGroup.key}"]`);
    await group.getByRole('button', { name: `Approve all ${approved.length}` }).click();
    const recorded = page.locator('.recorded li');
    await recorded.first().waitFor();
    expect(await recorded.first().innerText()).toBe(
      `${sweepId} recorded ${approved.length} approved by ${REVIEWER} (note: “checked against the data dictionary”): ` +
        `${approvedGroup.ids.join(', ')}. ${pending.length - approved.length} still wait for people.`,
    );
    sweep = page.locator(`section.sweep[data-sweep="${sweepId}"]`);
    for (const id of approved) expect(await sweep.locator(`[data-proposal="${id}"]`).count()).toBe(0);

    await sweep.locator('textarea').fill('not personal data in this table');
    await sweep.getByRole('button', { name: `Reject ${rejectOne}`, exact: true }).click();
    await recorded.filter({ hasText: `recorded 1 rejected by ${REVIEWER}` }).waitFor();
    expect(await recorded.count()).toBe(2);
    expect(await page.locator('#reviewer').inputValue()).toBe(REVIEWER);
    shots.push(await saveScreenshot(page, 'review-page-decided.png'));
    shots.push(await saveView(page, 'review-page-decided-view.png'));

    // Refusals while the sweep runs, with this browser's session: each is a 4xx with a message and changes nothing.
    const csrf = (await page.locator('input[name="csrf"]').getAttribute('value'))!;
    const post = (form: Record<string, string>) => page.request.post(`${base}/decide`, { form, maxRedirects: 0 });
    const still = (await idsOn(sweep)).sort();
    const decided = await post({ csrf, reviewer: REVIEWER, 'sweep.0': sweepId, act: `approved|one|0|${approved[0]}` });
    expect(decided.status()).toBe(409);
    expect(await decided.text()).toContain(`the sweep refused the decisions: not awaiting review: ${approved[0]}`);
    const unknown = await post({ csrf, reviewer: REVIEWER, 'sweep.0': sweepId, act: 'approved|one|0|p-no-such-id' });
    expect(unknown.status()).toBe(409);
    expect(await unknown.text()).toContain('not awaiting review: p-no-such-id');
    const badCsrf = await post({
      csrf: 'forged',
      reviewer: REVIEWER,
      'sweep.0': sweepId,
      act: `approved|one|0|${still[0]}`,
    });
    expect(badCsrf.status()).toBe(403);
    expect(await badCsrf.text()).toContain('CSRF token does not match this session');
    const noSweep = await post({
      csrf,
      reviewer: REVIEWER,
      'sweep.0': 'sweep/none',
      act: `approved|one|0|${still[0]}`,
    });
    expect(noSweep.status()).toBe(404);
    expect((await w.client.workflow.getHandle(sweepId).query<PendingReview[]>('pendingReviews')).length).toBe(
      still.length,
    );

    // The rest, as a selection: tick every remaining box and reject them in one update.
    const rest = still;
    expect(rest.length).toBe(pending.length - approved.length - 1);
    await page.reload();
    sweep = await gotoSweep(page, `${base}/`, sweepId);
    for (const id of rest) await sweep.getByLabel(`Select ${id}`, { exact: true }).check();
    await sweep.getByRole('button', { name: 'Reject selected' }).click();
    await recorded.filter({ hasText: `recorded ${rest.length} rejected by` }).waitFor();
    const last = await recorded.first().innerText();
    expect(last).toContain(`recorded ${rest.length} rejected by ${REVIEWER}: `);
    expect(last).toContain('. 0 still wait for people.');
    for (const id of rest) expect(last).toContain(id);

    const report = (await handle.result()) as SweepReport;
    expect(report.humanReview).toEqual(
      expect.objectContaining({
        waited: pending.length,
        approved: approved.length,
        rejected: pending.length - approved.length,
        expired: 0,
        notParked: 0,
      }),
    );
    const pii = report.proposals.filter((p) => pending.some((q) => q.proposalId === p.id));
    expect(
      pii
        .filter((p) => p.written)
        .map((p) => p.id)
        .sort(),
    ).toEqual(approved);
    for (const p of pii) expect(p.reviewer).toBe(`human:${REVIEWER}`);
    expect(report.proposals.find((p) => p.id === rejectOne)?.reason).toContain('not personal data in this table');
    expect(report.byKind.pii_tag.written).toBe(approved.length);
    // The catalog holds exactly the approved tags, each carrying its proposal id.
    const after = readCatalog(file);
    const newTags = after.entities.flatMap((e) =>
      e.columns
        .filter((c) => !taggedBefore.has(`${e.id}.${c.name}`))
        .flatMap((c) => (c.tags ?? []).filter((t) => t.kind === 'pii').map((t) => t.proposalId)),
    );
    expect(newTags.sort()).toEqual(approved);

    // The sweep has finished: the page lists it no more, and a decision for it is refused.
    await page.goto(`${base}/`);
    expect(await page.locator(`section.sweep[data-sweep="${sweepId}"]`).count()).toBe(0);
    const finished = await post({ csrf, reviewer: REVIEWER, 'sweep.0': sweepId, act: `approved|one|0|${rest[0]}` });
    expect(finished.status()).toBe(409);
    expect(await finished.text()).toMatch(
      /has finished \(completed\) and takes no more decisions: nothing was changed/,
    );
    shots.push(await saveScreenshot(page, 'review-page-empty.png'));
  } catch (err) {
    const shot = await saveScreenshot(page, 'review-page-failure.png').catch(() => undefined);
    throw new Error(
      `${(err as Error).message}\n(page ${page.url()}; screenshot ${shot?.file ?? 'not saved'})\nserver log:\n${served.stderr()}`,
      { cause: err },
    );
  }
  for (const shot of shots) {
    expect(existsSync(shot.file)).toBe(true);
    expect(statSync(shot.file).size).toBeGreaterThan(0);
  }
}, 300_000);

test('on loopback (the default) no token is asked, and only loopback Host names are answered', async () => {
  const env = cliEnv(w.tw.taskQueue);
  const served = await serveReviewPage(
    ['--port', '0', '--state-dir', w.tw.stateDir, '--task-queue', w.tw.taskQueue],
    env,
  );
  const ok = await fetch(`http://127.0.0.1:${served.port}/`);
  expect(ok.status).toBe(200);
  expect(ok.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(ok.headers.get('x-content-type-options')).toBe('nosniff');
  expect(await ok.text()).toContain('<h1>ARGUS review</h1>');
  const rebound = await new Promise<number>((resolve, reject) =>
    http
      .get({ host: '127.0.0.1', port: served.port, path: '/', headers: { Host: 'attacker.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject),
  );
  expect(rebound).toBe(403);
}, 120_000);
