// After an upgrade (the rules version changed), the rules judge again, but what people decided on evidence that
// has not changed stands: nothing they rejected is parked for them again. On a real dev server, the decisions made
// through the real `argus review` CLI.
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { connectTestClient, uniqueId } from '../support/temporal-env';
import { bundleOnce, copyCatalog, startTestWorker, DEMO_CATALOG, type TestWorker } from '../support/argus-worker';
import { argus, cliEnv } from '../e2e/spawn';
import type { SweepReport } from '../../domain/report';
import type { PendingReview } from '../../workflows/messages';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

jest.setTimeout(180_000);

let client: Client;
let connection: Connection;
let bundle: WorkflowBundleWithSourceMap;
const workers: TestWorker[] = [];
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-upgrade-'));
const taskQueue = uniqueId('tq-upgrade');

beforeAll(async () => {
  ({ client, connection } = await connectTestClient());
  bundle = await bundleOnce();
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await connection?.close();
});

async function worker(rulesVersion?: string): Promise<TestWorker> {
  const w = await startTestWorker(bundle, taskQueue, process.env, stateDir, undefined, rulesVersion);
  workers.push(w);
  return w;
}

async function pendingOf(id: string): Promise<PendingReview[]> {
  const h = client.workflow.getHandle(id);
  for (let i = 0; i < 150; i++) {
    const p = await h.query<PendingReview[]>('pendingReviews');
    if (p.length > 0) return p;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no proposal of ${id} became pending`);
}

test("an upgraded worker's sweep parks nothing people rejected before on unchanged evidence", async () => {
  const file = copyCatalog(DEMO_CATALOG, path.join(stateDir, 'demo'));
  const input = { catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '10m' } };
  const before = await worker();

  const first = uniqueId('sweep/upgrade');
  await client.workflow.start('sweepWorkflow', { taskQueue, workflowId: first, args: [input] });
  const pending = await pendingOf(first);
  expect(pending.length).toBeGreaterThanOrEqual(4);
  expect(new Set(pending.map((p) => p.kind))).toEqual(new Set(['pii_tag']));
  const env = cliEnv(taskQueue);
  const rejected = await argus(
    ['review', 'reject', first, '--all', '--reviewer', 'dana', '--comment', 'not personal here', '--json'],
    env,
  );
  expect(rejected.stderr).toBe('');
  expect(rejected.code).toBe(0);
  const report1 = (await client.workflow.getHandle(first).result()) as SweepReport;
  expect(report1.humanReview).toMatchObject({ waited: pending.length, rejected: pending.length, approved: 0 });
  const catalogAfter = readFileSync(file, 'utf8');

  // The upgrade: the same state store, a worker whose rules version differs (its judgment key with it).
  await before.stop();
  await worker(`upgraded-${Date.now()}`);
  const second = uniqueId('sweep/upgrade');
  const report2 = (await client.workflow.execute('sweepWorkflow', {
    taskQueue,
    workflowId: second,
    args: [{ ...input, humanReview: { kinds: ['pii_tag'], deadline: '1m' } }],
  })) as SweepReport;
  // Everything is judged again by the new rules...
  expect(report2.incremental?.judged).toBe(report2.entities.requested);
  // ...and nothing people rejected comes back to them, or is written.
  expect(report2.humanReview?.waited).toBe(0);
  expect(report2.incremental?.note).toMatch(/judgment changed/);
  expect(report2.incremental?.note).toMatch(new RegExp(`${pending.length} decisions people made .* stand`));
  expect(report2.written).toBe(0);
  expect(report2.proposals.filter((p) => p.kind === 'pii_tag' && p.outcome !== 'rejected')).toEqual([]);
  expect(readFileSync(file, 'utf8')).toBe(catalogAfter);
  expect(report2.partial).toBe(false);

  // A third sweep on the upgraded worker remembers them too: nothing judged, nothing parked.
  const report3 = (await client.workflow.execute('sweepWorkflow', {
    taskQueue,
    workflowId: uniqueId('sweep/upgrade'),
    args: [{ ...input, humanReview: { kinds: ['pii_tag'], deadline: '1m' } }],
  })) as SweepReport;
  expect(report3.incremental?.judged).toBe(0);
  expect(report3.humanReview?.waited ?? 0).toBe(0);
});
