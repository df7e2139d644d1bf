// Who decided is known, not typed: a real sweep parks PII tags on a real worker (this process) and the test
// Temporal server, and two real `argus review serve` processes list them. One reads a stewards file made with
// `argus review steward-token` (through ARGUS_REVIEW_STEWARDS) and headless Chromium signs in there with dana's own
// token; the other believes X-Forwarded-User only from 127.0.0.3, where a small authenticating proxy
// (test/support/auth-proxy.ts) connects from, and Chromium reaches it through that proxy as erin. Chromium sending
// the header straight to the server, from 127.0.0.1, is refused. The sweep's report names dana for what she
// approved and erin for what he rejected. A bad stewards file stops the server at start, naming the line.
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { ARTIFACTS_DIR, launchChromium, saveScreenshot } from '../support/browser';
import { startAuthProxy, type AuthProxy } from '../support/auth-proxy';
import { gotoSweep, idsOn, serveReviewPage, stopReviewPages, waitForPhase } from '../support/review-serve';
import { argus, cliEnv } from './spawn';
import type { PendingReview } from '../../workflows/messages';
import type { SweepReport } from '../../domain/report';

const DANA = 'dana@example.org';
const ERIN = 'erin';
const HEADER = 'X-Forwarded-User';
/** The proxy's address: the server's only trusted TCP peer; the browser connects from 127.0.0.1. */
const PROXY_ADDRESS = '127.0.0.3';
const WAIT_MS = 60_000;

const w = useArgusWorker('tq-review-identity');
let browser: Browser | undefined;
let proxy: AuthProxy | undefined;

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  stopReviewPages();
});

/** `argus review steward-token <name>`: the token (stderr, once) and the stewards file line (stdout). */
async function stewardToken(name: string, env: NodeJS.ProcessEnv): Promise<{ token: string; line: string }> {
  const made = await argus(['review', 'steward-token', name], env);
  expect(made.code).toBe(0);
  expect(made.stdout).toMatch(new RegExp(`^${name.replace(/\./g, '\\.')} sha256:[0-9a-f]{64}\\n$`));
  const token = /^ {2}([\w-]{43})$/m.exec(made.stderr)?.[1];
  expect(token).toBeDefined();
  expect(made.stdout).not.toContain(token);
  return { token: token!, line: made.stdout.trim() };
}

async function failing<T>(page: Page, name: string, log: () => string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const shot = await saveScreenshot(page, name).catch(() => undefined);
    throw new Error(
      `${(err as Error).message}\n(page ${page.url()}; screenshot ${shot?.file ?? 'not saved'})\nserver log:\n${log()}`,
      { cause: err },
    );
  }
}

test('a steward signs in with her own token, a proxy names another; the sweep records who decided, not what was typed', async () => {
  browser = await launchChromium(); // first: a missing Chromium fails the test before any sweep runs
  const env = cliEnv(w.tw.taskQueue);
  const dir = path.join(w.tw.stateDir, 'review-identity');
  const file = copyCatalog(DEMO_CATALOG, dir, 'catalog.json');

  const dana = await stewardToken(DANA, env);
  const erin = await stewardToken(ERIN, env);
  const stewards = path.join(dir, 'stewards.txt');
  writeFileSync(stewards, `# who may decide on the review page\n${dana.line}\n\n${erin.line}   # data team\n`);

  // A bad file is refused at start (exit 2), naming the line, before anything connects.
  const bad = path.join(dir, 'stewards-bad.txt');
  writeFileSync(bad, `${dana.line}\n# erin pasted her token here\n${ERIN} ${erin.token}\n`);
  const refused = await argus(['review', 'serve', '--port', '0', '--stewards', bad], env);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(
    `argus: ${bad}:3: the token digest of ${ERIN} is not "sha256:" and 64 hex digits (the file holds a token's digest, never the token`,
  );
  expect(refused.stderr).not.toContain(erin.token);

  const sweepId = uniqueId('sweep/review-identity');
  const handle = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: sweepId,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '30m' } }],
  });
  await waitForPhase(w.client, sweepId, 'awaiting_review');
  const listed = await argus(['review', 'list', sweepId, '--json'], env);
  const pending = (JSON.parse(listed.stdout) as PendingReview[]).map((p) => p.proposalId).sort();
  expect(pending.length).toBeGreaterThanOrEqual(4);
  const serveArgs = ['--port', '0', '--state-dir', w.tw.stateDir, '--task-queue', w.tw.taskQueue];

  // Per-steward tokens, the file named by ARGUS_REVIEW_STEWARDS, off loopback without ARGUS_REVIEW_TOKEN.
  const byToken = await serveReviewPage(['--host', '0.0.0.0', ...serveArgs], {
    ...env,
    ARGUS_REVIEW_STEWARDS: stewards,
  });
  expect(byToken.started).toContain(`(2 stewards from ${stewards}, each signing in with their own token;`);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(WAIT_MS);
  const approved = await failing(page, 'review-steward-failure.png', byToken.stderr, async () => {
    const base = `http://127.0.0.1:${byToken.port}/`;
    await page.goto(base);
    await page.getByLabel(/Your steward token/).fill(dana.line.split(' ')[1]!); // the digest is not the token
    await page.getByRole('button', { name: 'Open the review page' }).click();
    await page.getByText('That is no steward’s token: the page stays closed.').waitFor();
    await page.getByLabel(/Your steward token/).fill(dana.token);
    await page.getByRole('button', { name: 'Open the review page' }).click();
    let sweep = await gotoSweep(page, base, sweepId);
    expect(await page.locator('.signed-in').innerText()).toBe(`Signed in as ${DANA} (your steward token) Sign out`);
    expect(await page.locator('#reviewer').count()).toBe(0);
    expect(await page.locator('p.who').innerText()).toBe(`Every decision is recorded as ${DANA}.`);
    expect(await idsOn(sweep)).toEqual(pending);

    const groups = await sweep.locator('section.group').evaluateAll((els) =>
      els.map((g) => ({
        key: g.getAttribute('data-group')!,
        ids: [...g.querySelectorAll('article.proposal')].map((a) => a.getAttribute('data-proposal')!),
      })),
    );
    const biggest = [...groups].sort((a, b) => b.ids.length - a.ids.length)[0]!;
    expect(biggest.ids.length).toBeLessThan(pending.length); // something is left for erin
    const group = sweep.locator(`section.group[data-group="${biggest.key}"]`);
    await group.getByRole('button', { name: `Approve all ${biggest.ids.length}` }).click();
    const recorded = page.locator('.recorded li');
    await recorded.first().waitFor();
    expect(await recorded.first().innerText()).toContain(`recorded ${biggest.ids.length} approved by ${DANA}: `);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, 'review-page-steward.png') });

    // Signing out closes the page again for this browser.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel(/Your steward token/).waitFor();
    sweep = page.locator(`section.sweep[data-sweep="${sweepId}"]`);
    expect(await sweep.count()).toBe(0);
    return [...biggest.ids].sort();
  });
  expect(byToken.stderr()).toContain(`[review] ${DANA} (steward token) approved ${approved.length} of ${sweepId}`);
  for (const t of [dana.token, erin.token]) expect(byToken.stderr()).not.toContain(t);

  // Behind the proxy: X-Forwarded-User counts only from 127.0.0.3.
  const byProxy = await serveReviewPage(
    ['--trusted-user-header', HEADER, '--trusted-proxy', PROXY_ADDRESS, ...serveArgs],
    env,
  );
  expect(byProxy.started).toContain(`(names from ${HEADER}, believed only from ${PROXY_ADDRESS};`);
  proxy = await startAuthProxy({
    targetPort: byProxy.port,
    localAddress: PROXY_ADDRESS,
    header: HEADER,
    user: () => ERIN,
  });

  // A browser that sends the header itself, straight to the server, is refused: its peer is 127.0.0.1.
  const forger = await browser.newContext({ extraHTTPHeaders: { [HEADER]: DANA } });
  const forged = await forger.newPage();
  const answer = await forged.goto(`http://127.0.0.1:${byProxy.port}/`);
  expect(answer?.status()).toBe(403);
  expect(await forged.locator('.refusal').innerText()).toBe(
    `this request carries ${HEADER} but comes from 127.0.0.1, which is not the trusted proxy: ${HEADER} is ` +
      `believed only from ${PROXY_ADDRESS}. Nothing was read or changed`,
  );
  expect(await forged.content()).not.toContain('data-proposal');
  await forger.close();

  const proxied = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  proxied.setDefaultTimeout(WAIT_MS);
  const rest = await failing(proxied, 'review-proxy-failure.png', byProxy.stderr, async () => {
    const sweep = await gotoSweep(proxied, proxy!.url, sweepId);
    expect(await proxied.locator('.signed-in').innerText()).toBe(
      `Signed in as ${ERIN} (named by the sign-in proxy in front of this page)`,
    );
    expect(await proxied.locator('#reviewer').count()).toBe(0);
    const left = await idsOn(sweep);
    expect(left).toEqual(pending.filter((id) => !approved.includes(id)));
    for (const id of left) await sweep.getByLabel(`Select ${id}`, { exact: true }).check();
    await sweep.getByRole('button', { name: 'Reject selected' }).click();
    const recorded = proxied.locator('.recorded li');
    await recorded.first().waitFor();
    expect(await recorded.first().innerText()).toContain(`recorded ${left.length} rejected by ${ERIN}: `);
    await saveScreenshot(proxied, 'review-page-proxy.png');
    return left;
  });
  expect(byProxy.stderr()).toContain(`[review] refused a request from 127.0.0.1 carrying ${HEADER}: not the proxy`);
  expect(byProxy.stderr()).toContain(`[review] ${ERIN} (named by the proxy) rejected ${rest.length} of ${sweepId}`);

  const report = (await handle.result()) as SweepReport;
  expect(report.humanReview).toEqual(
    expect.objectContaining({ waited: pending.length, approved: approved.length, rejected: rest.length, expired: 0 }),
  );
  const reviewers = new Map(report.proposals.map((p) => [p.id, p.reviewer]));
  for (const id of approved) expect(reviewers.get(id)).toBe(`human:${DANA}`);
  for (const id of rest) expect(reviewers.get(id)).toBe(`human:${ERIN}`);
  const written = report.proposals
    .filter((p) => pending.includes(p.id) && p.written)
    .map((p) => p.id)
    .sort();
  expect(written).toEqual(approved);
  const tagged = readCatalog(file).entities.flatMap((e) =>
    e.columns.flatMap((c) => (c.tags ?? []).filter((t) => t.kind === 'pii' && t.proposalId).map((t) => t.proposalId)),
  );
  expect(tagged.filter((id) => pending.includes(id!)).sort()).toEqual(approved);
}, 300_000);
