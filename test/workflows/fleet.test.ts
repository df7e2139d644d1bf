// A fleet on real parts: three worker processes, each with a state folder of its own (three "hosts"), sharing one
// PostgreSQL state store on a throwaway cluster. One sweep of a generated 3,000-entity catalog must end as a single
// worker's run of the same catalog does, every proposal applied once, with one of the workers killed by SIGKILL
// in the middle; people's decisions taken while one worker holds the sweep are written by another; and a worker
// on the file store pointed at the fleet's task queue fails loudly instead of reviewing "nothing".
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client as PgClient } from 'pg';
import { testAddress, uniqueId } from '../support/temporal-env';
import { useArgusWorker, readCatalog } from '../support/argus-worker';
import { startWorkerProcess, kill9, type Proc } from '../support/processes';
import { startPostgres, type PgServer } from '../support/postgres';
import { generateCatalog } from '../../scripts/generate-catalog';
import { openPgStateStore, type PgStateStore } from '../../state/postgres/store';
import { undoSweep } from '../../activities/undo';
import type { SweepReport } from '../../domain/report';
import type { PendingReview } from '../../workflows/messages';
import { startFakeProvider } from '../../fakes/provider';
import { SK } from '../support/fake-secrets';

jest.setTimeout(420_000);

const w = useArgusWorker('tq-fleet-control');
const work = mkdtempSync(path.join(os.tmpdir(), 'argus-fleet-'));
const original = path.join(work, 'original.json');
const generated = generateCatalog({ entities: 3000, seed: 11, name: 'fleet' });
// People described some columns: what the drafter inherits downstream, so pages have writes.
for (const e of generated.entities) for (const c of e.columns) if (c.description) c.description_source = 'human';
writeFileSync(original, JSON.stringify(generated, null, 2));
const sweepInput = (file: string) => ({
  catalog: { kind: 'file' as const, path: file },
  pageSize: 100,
  concurrency: 4,
});

function copyOf(name: string, src = original): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'catalog.json');
  copyFileSync(src, file);
  return file;
}

let pg: PgServer;
let stateUrl: string;
let store: PgStateStore;
const procs: Proc[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  stateUrl = await pg.createDatabase('argus_fleet_state');
  store = await openPgStateStore(stateUrl);
});
afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await kill9(p);
  await store?.close();
  await pg?.stop();
});

/** A worker process on a "host" of its own: its own state folder, the fleet's state store (unless `fileStore`). */
async function host(
  taskQueue: string,
  name: string,
  fileStore = false,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ proc: Proc; stateDir: string }> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), `argus-host-${name}-`));
  const proc = await startWorkerProcess({
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_NAMESPACE: 'default',
    ARGUS_TASK_QUEUE: taskQueue,
    ARGUS_STATE_DIR: stateDir,
    ARGUS_STATE_URL: fileStore ? '' : stateUrl,
    ARGUS_FAULT_POINT: '',
    ...extra,
  });
  procs.push(proc);
  return { proc, stateDir };
}

async function auditWrites(sweepId: string): Promise<Map<string, number>> {
  const c = new PgClient({ connectionString: stateUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ proposal_id: string; n: string }>(
      `select proposal_id, count(*) as n from argus_state.audit
        where kind = 'write' and (line::jsonb ->> 'sweepId') = $1 group by proposal_id`,
      [sweepId],
    );
    return new Map(rows.map((r) => [r.proposal_id, Number(r.n)]));
  } finally {
    await c.end();
  }
}

/**
 * Which worker identities started the activities of a sweep: every run of it (it continues as new) and every child
 * it started (the Arbiters), as visibility lists them.
 */
async function activityWorkers(workflowId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const runs: { workflowId: string; runId: string }[] = [];
  for await (const x of w.client.workflow.list({ query: `WorkflowId STARTS_WITH "${workflowId}"` })) {
    runs.push({ workflowId: x.workflowId, runId: x.runId });
  }
  for (const r of runs) {
    const history = await w.client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const who = e.activityTaskStartedEventAttributes?.identity;
      if (who) ids.add(who);
    }
  }
  return ids;
}

test('three hosts, one PostgreSQL state store, one killed mid-sweep: the catalog ends as a single worker leaves it, each proposal applied once', async () => {
  const controlFile = copyOf('control');
  const control = (await w.client.workflow.execute('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId('sweep/fleet/control'),
    args: [sweepInput(controlFile)],
  })) as SweepReport;
  expect(control.partial).toBe(false);
  expect(control.written).toBeGreaterThan(1000);
  const controlIds = new Set(control.proposals.filter((p) => p.written).map((p) => p.id));

  const taskQueue = uniqueId('tq-fleet');
  const hosts = [];
  for (const name of ['a', 'b', 'c']) hosts.push(await host(taskQueue, name));
  const file = copyOf('fleet');
  const id = uniqueId('sweep/fleet/three');
  const handle = await w.client.workflow.start('sweepWorkflow', {
    taskQueue,
    workflowId: id,
    args: [sweepInput(file)],
  });
  for (let i = 0; ; i++) {
    const p = await handle.query<{ pagesDone: number; pageCount: number }>('progress');
    if (p.pagesDone >= 6) break;
    if (i > 1200) throw new Error('the fleet did not get through six pages');
    await new Promise((r) => setTimeout(r, 50));
  }
  const killedAt = Date.now();
  await kill9(hosts[1]!.proc);
  const report = (await handle.result()) as SweepReport;
  process.stderr.write(
    `fleet: 3 hosts, host b killed at ${((killedAt - Date.parse(report.startedAt)) / 1000).toFixed(1)} s; sweep complete ` +
      `${((Date.now() - killedAt) / 1000).toFixed(1)} s later; written ${report.written} (single worker ${control.written})\n`,
  );
  expect(report.partial).toBe(false);
  expect(report.failures).toEqual([]);
  expect(report.outcomes).toEqual(control.outcomes);
  expect(report.written).toBe(control.written);
  expect(readFileSync(file, 'utf8')).toBe(readFileSync(controlFile, 'utf8'));
  // Each written proposal has exactly one write line in the shared audit trail, and they are the control's.
  const writes = await auditWrites(id);
  expect(writes.size).toBe(control.written);
  expect([...writes.values()].every((n) => n === 1)).toBe(true);
  for (const p of report.proposals.filter((x) => x.written)) expect(controlIds.has(p.id)).toBe(true);
  // The work really was spread: more than one host ran activities, and no host kept sweep state locally.
  const workers = await activityWorkers(id);
  process.stderr.write(`fleet: activities started by ${workers.size} hosts\n`);
  expect(workers.size).toBeGreaterThan(1);
  for (const h of hosts) expect(readdirSync(h.stateDir)).not.toContain('sweeps');
  expect(report.reportFile).toMatch(/PostgreSQL state store/);
  // Undo reads the same shared trail, from any machine.
  const [undo] = await undoSweep(store, id, { stateDir: work });
  expect(undo?.conflicts).toEqual([]);
  expect(undo?.undone).toBe(control.written);
  expect(readFileSync(file, 'utf8')).toBe(readFileSync(original, 'utf8'));
  for (const h of hosts) if (h.proc.child.exitCode === null && h.proc.child.signalCode === null) await kill9(h.proc);
});

test("people's decisions recorded while one host holds the sweep are written by another host", async () => {
  const taskQueue = uniqueId('tq-fleet-human');
  const first = await host(taskQueue, 'h1');
  const small = generateCatalog({ entities: 60, seed: 5, name: 'fleet-human' });
  const src = path.join(work, 'human-original.json');
  writeFileSync(src, JSON.stringify(small, null, 2));
  const file = copyOf('human', src);
  const id = uniqueId('sweep/fleet/human');
  const handle = await w.client.workflow.start('sweepWorkflow', {
    taskQueue,
    workflowId: id,
    args: [{ ...sweepInput(file), pageSize: 20, humanReview: { kinds: ['pii_tag'], deadline: '1h' } }],
  });
  let pending: PendingReview[] = [];
  for (let i = 0; i < 600 && pending.length === 0; i++) {
    const p = await handle.query<{ phase: string }>('progress');
    if (p.phase === 'awaiting_review') pending = await handle.query<PendingReview[]>('pendingReviews');
    else await new Promise((r) => setTimeout(r, 100));
  }
  expect(pending.length).toBeGreaterThan(2);
  const decide = (p: PendingReview, decision: string) => ({
    proposalId: p.proposalId,
    decision,
    reviewer: 'ops@example.org',
    time: new Date().toISOString(),
  });
  const [rejected, ...approved] = pending;
  // Recorded through the first host (the only one polling)…
  await handle.executeUpdate('review', { args: [{ decisions: [decide(rejected!, 'rejected')] }] });
  // …which then dies; a second host, with a state folder of its own, takes the sweep over and writes.
  await kill9(first.proc);
  const second = await host(taskQueue, 'h2');
  await handle.executeUpdate('review', { args: [{ decisions: approved.map((p) => decide(p, 'approved')) }] });
  const report = (await handle.result()) as SweepReport;
  expect(report.humanReview).toEqual(
    expect.objectContaining({ waited: pending.length, rejected: 1, approved: approved.length }),
  );
  expect(report.byKind.pii_tag.written).toBe(approved.length);
  const byId = new Map(report.proposals.map((p) => [p.id, p]));
  expect(byId.get(rejected!.proposalId)).toEqual(
    expect.objectContaining({ outcome: 'rejected', written: false, reviewer: 'human:ops@example.org' }),
  );
  // The person's rejection holds in the catalog: that column carries no tag written by this sweep.
  const after = readCatalog(file);
  const rejectedTags = after.entities
    .filter((e) => e.id === rejected!.entityId)
    .flatMap((e) => e.columns.flatMap((c) => (c.tags ?? []).filter((t) => t.proposalId === rejected!.proposalId)));
  expect(rejectedTags).toEqual([]);
  expect(
    after.entities.flatMap((e) => e.columns.flatMap((c) => (c.tags ?? []).filter((t) => t.source === 'argus'))).length,
  ).toBeGreaterThanOrEqual(approved.length);
  await kill9(second.proc);
});

test('a worker on the file store pointed at a fleet on the PostgreSQL store fails loudly, naming what is missing', async () => {
  const taskQueue = uniqueId('tq-fleet-mixed');
  const fleet = await host(taskQueue, 'pg');
  const file = copyOf('mixed');
  const id = uniqueId('sweep/fleet/mixed');
  const handle = await w.client.workflow.start('sweepWorkflow', {
    taskQueue,
    workflowId: id,
    args: [sweepInput(file)],
  });
  for (let i = 0; ; i++) {
    const p = await handle.query<{ pagesDone: number }>('progress');
    if (p.pagesDone >= 1) break;
    if (i > 1200) throw new Error('no page done');
    await new Promise((r) => setTimeout(r, 50));
  }
  await kill9(fleet.proc);
  const stray = await host(taskQueue, 'stray', true);
  const outcome = await handle.result().then(
    (r) => r as SweepReport,
    (e: unknown) => e as Error,
  );
  await kill9(stray.proc);
  // Either the report could not be built (the stray worker has no ledger) and the sweep failed, or the pages it
  // took failed with SweepStateMissing: never a complete sweep with zero proposals reviewed.
  const causes = (e: unknown): string[] =>
    e instanceof Error ? [e.message, ...causes((e as Error & { cause?: unknown }).cause)] : [];
  const text = outcome instanceof Error ? causes(outcome).join(' | ') : JSON.stringify(outcome.failures);
  if (!(outcome instanceof Error)) expect(outcome.partial).toBe(true);
  expect(text).toMatch(/is missing: looked in/);
  expect(text).toMatch(/ARGUS_STATE_URL/);
  expect(readdirSync(stray.stateDir)).not.toContain('sweeps');
});

test('a spent quota is hit by one call for the whole fleet, not one per worker', async () => {
  const fp = await startFakeProvider({ port: 0 });
  const KEY_ENV = 'ARGUS_FLEET_FAKE_KEY';
  const taskQueue = uniqueId('tq-fleet-quota');
  const hosts = [];
  try {
    for (const name of ['q1', 'q2', 'q3'])
      hosts.push(await host(taskQueue, name, false, { [KEY_ENV]: `${SK}fleet-not-a-real-key-123456` }));
    const small = generateCatalog({ entities: 40, seed: 3, name: 'fleet-quota' });
    const src = path.join(work, 'quota-original.json');
    writeFileSync(src, JSON.stringify(small, null, 2));
    const report = (await w.client.workflow.execute('sweepWorkflow', {
      taskQueue,
      workflowId: uniqueId('sweep/fleet/quota'),
      args: [
        {
          catalog: { kind: 'file', path: copyOf('quota', src) },
          pageSize: 20,
          concurrency: 2,
          review: 'model',
          agentBackend: 'rules',
          modelConcurrency: 6,
          endpoints: [
            {
              id: 'free-tier',
              baseUrl: fp.baseUrl('insufficient-quota', 'correct'),
              model: 'fake-model',
              apiKeyEnv: KEY_ENV,
              maxInFlight: 1,
            },
          ],
        },
      ],
    })) as SweepReport;
    const st = fp.stats()['/s/insufficient-quota/r/correct'];
    expect(report.partial).toBe(true);
    expect(report.endpoints.breakerTripped).toBe(true);
    expect(report.written).toBe(report.byKind.lineage_flag.written); // nothing the model had to review was written
    expect(st?.exhaustedAnswers).toBe(1);
    expect(st?.callsAfterExhaustion).toBe(0);
  } finally {
    for (const h of hosts) await kill9(h.proc);
    await fp.close();
  }
});
