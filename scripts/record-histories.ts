// Records histories of small real sweeps (plain, a model review whose quota runs out, model agents in batches, a
// budget-fitted sweep, one that waits for people, and a plan) for the replay test, named `<workflow>-<kind><tag>.binpb`; the manifest gains their workflow ids, and histories
// recorded before stay (each covers the code paths of its day: patched() keeps them replayable).
// Usage: TEMPORAL_ADDRESS=127.0.0.1:7233 node scripts/run-ts.js scripts/record-histories.ts [tag, e.g. -2026-12-01]
import { mkdtempSync, readFileSync, writeFileSync, copyFileSync, mkdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createArgusWorker } from '../worker/create-worker';
import { startFakeProvider } from '../fakes/provider';
import { arbiterWorkflowId } from '../domain/ids';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-record-'));
  const file = path.join(stateDir, 'demo.json');
  mkdirSync(stateDir, { recursive: true });
  copyFileSync(path.join(__dirname, '..', 'catalog', 'demo', 'shop-warehouse.json'), file);
  const taskQueue = `record-${Date.now()}`;
  const nc = await NativeConnection.connect({ address });
  const fp = await startFakeProvider({ port: 0 });
  const worker = await createArgusWorker({
    config: {
      taskQueue,
      stateDir,
      namespace: 'default',
      stateUrl: process.env.ARGUS_STATE_URL,
      stateSchema: process.env.ARGUS_STATE_SCHEMA,
    },
    connection: nc,
    env: { ...process.env, FAKE_KEY: 'fake' },
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const tag = process.argv[2] ?? '';
  if (!/^[-\w.]*$/.test(tag)) throw new Error(`tag: letters, digits, dots and dashes, not "${tag}"`);
  const out = path.join(__dirname, '..', 'test', 'fixtures', 'histories');
  const manifestFile = path.join(out, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, string>;
  // Binary protobuf: read back with the same @temporalio/proto types the worker uses.
  const save = async (name: string, wid: string, runId?: string) => {
    const hist = await client.workflow.getHandle(wid, runId).fetchHistory();
    writeFileSync(path.join(out, `${name}${tag}.binpb`), temporal.api.history.v1.History.encode(hist).finish());
    // Replay needs the original workflow ids (child ids are derived from them).
    manifest[`${name}${tag}.binpb`] = wid;
  };
  const record = async (
    kind: string,
    input: Record<string, unknown>,
    whileRunning?: (h: WorkflowHandle) => Promise<void>,
  ) => {
    const wid = `sweep/record${kind}/${Date.now()}`;
    const h = await client.workflow.start('sweepWorkflow', { taskQueue, workflowId: wid, args: [input] });
    await whileRunning?.(h);
    await h.result();
    await save(`sweep-workflow${kind}`, wid, h.firstExecutionRunId);
    // The Arbiters the sweep started, as its runs' histories name them (each run continued as new, in turn): a page's
    // parts (pageFixedPoint) each have one, and a part that proposed nothing has none. The first is saved, and the
    // first of each other part.
    const started: string[] = [];
    for (let runId: string | undefined = h.firstExecutionRunId; runId;) {
      const events: temporal.api.history.v1.IHistoryEvent[] =
        (await client.workflow.getHandle(wid, runId).fetchHistory()).events ?? [];
      for (const e of events) {
        const id = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
        if (id && !started.includes(id)) started.push(id);
      }
      runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    const first = started[0] ?? arbiterWorkflowId(wid, 0);
    await save(`arbiter-workflow${kind}`, first);
    for (const part of ['lineage', 'pii'] as const) {
      const one = started.find((id) => id !== first && id.endsWith(`/${part}`));
      if (one) await save(`arbiter-workflow${kind}-${part}`, one);
    }
  };
  /** People decide what waits for them: the first proposal rejected, the rest approved, in one update each. */
  const decide = async (h: WorkflowHandle) => {
    for (let i = 0; i < 600; i++) {
      const p = await h.query<{ phase: string }>('progress');
      if (p.phase === 'awaiting_review') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const pending = await h.query<{ proposalId: string }[]>('pendingReviews');
    const d = (ids: string[], decision: string) => ({
      decisions: ids.map((proposalId) => ({
        proposalId,
        decision,
        reviewer: 'recorder',
        time: new Date().toISOString(),
      })),
    });
    const [first, ...rest] = pending.map((p) => p.proposalId);
    if (first) await h.executeUpdate('review', { args: [d([first], 'rejected')] });
    if (rest.length) await h.executeUpdate('review', { args: [d(rest, 'approved')] });
  };
  const copy = (name: string) => {
    const f = path.join(stateDir, `${name}.json`);
    copyFileSync(demo, f);
    return f;
  };
  const endpoint = (scenario: string) => ({
    id: 'fake',
    baseUrl: fp.baseUrl(scenario),
    model: 'fake',
    apiKeyEnv: 'FAKE_KEY',
  });
  const demo = path.join(stateDir, 'pristine.json');
  copyFileSync(file, demo);
  await worker.runUntil(async () => {
    // Two pages per run and one page per execution: the recorded history covers children and continue-as-new.
    await record('', { catalog: { kind: 'file', path: file }, pageSize: 20, pagesPerRun: 2 });
    // A model review whose quota runs out mid-run: covers rotation, the breaker and not_reviewed outcomes.
    // Each on a copy of the unrepaired demo: on one already swept, the memory leaves nothing to judge.
    await record('-model', {
      catalog: { kind: 'file', path: copy('model') },
      pageSize: 20,
      review: 'model',
      agentBackend: 'rules',
      endpoints: [endpoint('daily-quota-3')],
    });
    // Model agents and review in batches, on a worker that has not seen the model: lead batches, then the rest.
    await record('-batched', {
      catalog: { kind: 'file', path: copy('batched') },
      review: 'model',
      agentBackend: 'model',
      endpoints: [endpoint('ok')],
    });
    // A plan, then a sweep fitted to a budget that covers part of it (on copies of the unrepaired demo).
    const planned = { catalog: { kind: 'file', path: copy('plan') }, review: 'model', agentBackend: 'rules' };
    const pid = `sweep/record-plan/${Date.now()}`;
    const plan = (await client.workflow.execute('planSweepWorkflow', {
      taskQueue,
      workflowId: pid,
      args: [{ ...planned, endpoints: [{ ...endpoint('ok'), budget: { tokensPerDay: 1_000_000 } }] }],
    })) as { needed: { tokens: number } };
    await save('plan-workflow', pid);
    // Half of what the plan needs: the sweep judges what fits, oldest-unreviewed first, and defers the rest.
    const half = {
      ...endpoint('ok'),
      model: 'fake-half',
      budget: { tokensPerDay: Math.round(plan.needed.tokens / 2) },
    };
    await record('-fit-budget', { ...planned, endpoints: [half], fitBudget: true });
    // People decide: PII tags wait for them, one is rejected and the rest approved.
    await record(
      '-human-review',
      {
        catalog: { kind: 'file', path: copy('human') },
        pageSize: 40,
        humanReview: { kinds: ['pii_tag'], deadline: '1h' },
      },
      decide,
    );
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n');
    console.log(`recorded ${Object.keys(manifest).length} histories into ${out}`);
  });
  await connection.close();
  await nc.close();
  await fp.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
