import * as path from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { uniqueId } from '../support/temporal-env';
import {
  bundleOnce,
  useArgusWorker,
  copyCatalog,
  readCatalog,
  startTestWorker,
  writeCatalog,
  DEMO_CATALOG,
} from '../support/argus-worker';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import type { SweepReport } from '../../domain/report';
import type { SweepInput, EndpointConfig } from '../../domain/sweep';
import type { AuditEntry } from '../../state/store';
import { SK } from '../support/fake-secrets';
import { LEAD_BATCHES } from '../../workflows/lead-batches';
import { undoSweep } from '../../activities/undo';
import { fileAnswers } from '../../state/file/answers';

// Model-mode regressions from the seed story, on a real dev server against a real loopback HTTP provider.
let fp: FakeProvider;
const KEY_ENV = 'ARGUS_TEST_FAKE_KEY';
const workerEnv = { ...process.env, [KEY_ENV]: `${SK}test-not-a-real-key-123456` };
const w = useArgusWorker('tq-model', workerEnv);

beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
});
afterAll(async () => {
  await fp?.close();
});

/** A small catalog: the first `n` demo entities, lineage to the rest left as it is. */
function smallCatalog(name: string, n = 8): string {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'model', name));
  const c = readCatalog(file);
  c.entities = c.entities.slice(0, n);
  writeCatalog(file, c);
  return file;
}

function endpoint(id: string, scenario: string, reviewer = 'correct'): EndpointConfig {
  return {
    id,
    baseUrl: fp.baseUrl(scenario, reviewer),
    model: 'fake-model',
    apiKeyEnv: KEY_ENV,
    structuredOutput: 'json_schema',
    maxOutputTokens: 900,
    timeoutMs: 10000,
    maxInFlight: 1,
  };
}

const stats = (scenario: string, reviewer = 'correct') => fp.stats()[`/s/${scenario}/r/${reviewer}`];

async function sweep(input: SweepInput): Promise<SweepReport> {
  return w.client.workflow.execute('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId('sweep/model'),
    args: [input],
  }) as Promise<SweepReport>;
}

function writesOf(sweepId: string): Extract<AuditEntry, { type: 'write' }>[] {
  const dir = path.join(w.tw.stateDir, 'audit');
  return readdirSync(dir)
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l) as AuditEntry)
    .filter((e): e is Extract<AuditEntry, { type: 'write' }> => e.sweepId === sweepId && e.type === 'write');
}

beforeEach(() => fp.reset());

test('a temporary limit is waited out: burst 429s are retried on the same endpoint, nothing retired', async () => {
  const r = await sweep({
    catalog: { kind: 'file', path: smallCatalog('burst') },
    review: 'model',
    agentBackend: 'rules',
    endpoints: [endpoint('a', 'burst-2')],
  });
  expect(r.endpoints.retired).toEqual([]);
  expect(r.outcomes.not_reviewed).toBe(0);
  expect(r.partial).toBe(false);
  expect(stats('burst-2')?.throttled).toBe(2);
  expect(r.proposals.filter((p) => p.outcome !== 'rejected').every((p) => p.reviewer === 'model:a')).toBe(true);
});

test('every model call is counted with the tokens the provider reported, per agent and endpoint', async () => {
  const r = await sweep({
    catalog: { kind: 'file', path: smallCatalog('usage', 5) },
    review: 'model',
    agentBackend: 'model',
    agents: ['description-drafter', 'pii-classifier'],
    endpoints: [endpoint('a', 'ok')],
    modelBatch: { entities: 1 }, // one call per entity and agent: the counts below are per entity
    maxPasses: 1, // one pass: no entity is asked again after the sweep's own writes
  });
  const s = stats('ok')!;
  expect(s.answered).toBeGreaterThan(5);
  const u = r.modelUsage;
  expect({
    calls: u.calls,
    prompt: u.promptTokens,
    completion: u.completionTokens,
    estimated: u.estimatedCalls,
  }).toEqual({
    calls: s.answered,
    prompt: s.promptTokens,
    completion: s.completionTokens,
    estimated: 0,
  });
  expect(Object.keys(u.byAgent).sort()).toEqual(['description-drafter', 'pii-classifier', 'review']);
  expect(u.byAgent['pii-classifier']!.calls).toBe(5);
  expect(u.byEndpoint.a).toEqual({
    calls: u.calls,
    promptTokens: u.promptTokens,
    completionTokens: u.completionTokens,
  });
  expect(u.perEntity.calls).toBeCloseTo(u.calls / 5, 2);
  const memo = (await w.client.workflow.getHandle(r.sweepId).describe()).memo as {
    summary: { modelUsage: { calls: number; promptTokens: number } };
  };
  expect(memo.summary.modelUsage).toMatchObject({ calls: u.calls, promptTokens: u.promptTokens });
});

test('a spent daily quota retires the endpoint at once: no retry after exhaustion, no approval, nothing unreviewed written', async () => {
  const r = await sweep({
    catalog: { kind: 'file', path: smallCatalog('daily') },
    review: 'model',
    agentBackend: 'rules',
    endpoints: [endpoint('a', 'daily-quota-3')],
    modelBatch: { entities: 1 }, // one call per entity: the quota runs out mid-page
  });
  const s = stats('daily-quota-3')!;
  expect(s.answered).toBe(3);
  expect(s.exhaustedAnswers).toBe(1);
  expect(s.callsAfterExhaustion).toBe(0);
  expect(r.endpoints.breakerTripped).toBe(true);
  expect(r.endpoints.retired).toEqual([expect.objectContaining({ endpointId: 'a', window: 'day', status: 429 })]);
  expect(r.endpoints.retired[0]?.providerMessage).toMatch(/tokens per day/);
  expect(r.partial).toBe(true);
  expect(r.partialReasons.join(' ')).toMatch(/model budget exhausted/);
  expect(r.partialReasons.join(' ')).toMatch(/tokens per day/);
  const unreviewed = r.proposals.filter((p) => p.outcome === 'not_reviewed');
  expect(unreviewed.length).toBeGreaterThan(0);
  for (const p of unreviewed) expect(p.reason).toMatch(/^model budget exhausted/);
  // Never a fallback to the mechanical gate's approval in a model sweep.
  expect(r.proposals.filter((p) => p.outcome === 'approved' && p.reviewer !== 'model:a')).toEqual([]);
  const written = new Set(writesOf(r.sweepId).map((w) => w.proposalId));
  for (const p of unreviewed) expect(written.has(p.id)).toBe(false);
  expect(written.size).toBe(r.outcomes.approved);
});

test('the breaker lives in the sweep: the next sweep starts clean and uses the endpoint again', async () => {
  const file = smallCatalog('reset');
  const first = await sweep({
    catalog: { kind: 'file', path: file },
    review: 'model',
    agentBackend: 'rules',
    endpoints: [endpoint('a', 'daily-quota-2')],
    modelBatch: { entities: 1 },
  });
  expect(first.endpoints.breakerTripped).toBe(true);
  fp.reset(); // the provider's quota resets overnight
  const second = await sweep({
    catalog: { kind: 'file', path: file },
    review: 'model',
    agentBackend: 'rules',
    endpoints: [endpoint('a', 'daily-quota-2')],
    modelBatch: { entities: 1 },
  });
  expect(stats('daily-quota-2')!.answered).toBe(2);
  expect(second.proposals.some((p) => p.reviewer === 'model:a')).toBe(true);
});

test('persistent unnamed throttling rotates to the next endpoint; the work is done there', async () => {
  const r = await sweep({
    catalog: { kind: 'file', path: smallCatalog('rotate', 4) },
    review: 'model',
    agentBackend: 'rules',
    modelConcurrency: 1,
    throttleAttemptsBeforeRotation: 3,
    endpoints: [endpoint('a', 'throttle-unnamed'), endpoint('b', 'ok')],
  });
  expect(r.endpoints.retired.map((e) => e.endpointId)).toEqual(['a']);
  expect(r.endpoints.retired[0]?.reason).toMatch(/persistent throttling/);
  expect(r.endpoints.breakerTripped).toBe(false);
  expect(r.outcomes.not_reviewed).toBe(0);
  expect(stats('throttle-unnamed')!.calls).toBe(3);
  expect(stats('ok')!.answered).toBeGreaterThan(0);
});

test.each([
  ['server-500', /ProviderServerError/],
  ['malformed', /MalformedOutput/],
])(
  'a %s failure does not rotate: B is never called, the work ends not reviewed with the reason',
  async (scenario, reason) => {
    const r = await sweep({
      catalog: { kind: 'file', path: smallCatalog(`norotate-${scenario}`, 3) },
      review: 'model',
      agentBackend: 'rules',
      throttleAttemptsBeforeRotation: 2,
      endpoints: [endpoint('a', scenario), endpoint('b', 'ok')],
    });
    expect(r.endpoints.retired).toEqual([]);
    expect(stats('ok')?.calls ?? 0).toBe(0);
    const unreviewed = r.proposals.filter((p) => p.outcome === 'not_reviewed');
    expect(unreviewed.length).toBeGreaterThan(0);
    for (const p of unreviewed) expect(p.reason).toMatch(reason);
    expect(r.written).toBe(r.outcomes.approved);
  },
);

test('every endpoint spent: a clear stop, no call after exhaustion, all model work not reviewed, the providers quoted', async () => {
  const r = await sweep({
    catalog: { kind: 'file', path: smallCatalog('allspent', 6) },
    review: 'model',
    agentBackend: 'rules',
    endpoints: [endpoint('a', 'insufficient-quota'), endpoint('b', 'credits-402')],
  });
  // One call in flight per endpoint (maxInFlight 1): the first answer retires it, nothing follows.
  for (const s of [stats('insufficient-quota')!, stats('credits-402')!]) {
    expect(s.callsAfterExhaustion).toBe(0);
    expect(s.calls).toBe(1);
  }
  expect(r.endpoints.breakerTripped).toBe(true);
  expect(r.endpoints.retired.map((e) => e.endpointId).sort()).toEqual(['a', 'b']);
  expect(r.outcomes.approved).toBe(0);
  expect(r.written).toBe(0);
  expect(r.partialReasons.join(' ')).toMatch(/exceeded your current quota/);
  expect(r.partialReasons.join(' ')).toMatch(/Insufficient credits/);
});

test('model-backed agents that lose their model leave entities unprocessed and the run partial', async () => {
  const r = await sweep({
    catalog: { kind: 'file', path: smallCatalog('agents', 6) },
    review: 'model',
    agentBackend: 'model',
    agents: ['pii-classifier'],
    modelConcurrency: 1,
    endpoints: [endpoint('a', 'daily-quota-2')],
    modelBatch: { entities: 1 },
  });
  expect(stats('daily-quota-2')!.callsAfterExhaustion).toBe(0);
  expect(r.endpoints.breakerTripped).toBe(true);
  expect(r.failures.filter((f) => f.category === 'model_budget_exhausted').length).toBeGreaterThan(0);
  expect(r.entities.processed).toBeLessThan(r.entities.requested);
  expect(r.partial).toBe(true);
  expect(r.proposals.every((p) => p.outcome !== 'approved' || p.reviewer === 'model:a')).toBe(true);
});

test('no API key ever reaches Temporal: not in the history, not in the report', async () => {
  const id = uniqueId('sweep/model-secrets');
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    args: [
      {
        catalog: { kind: 'file', path: smallCatalog('secrets', 3) },
        review: 'model',
        agentBackend: 'rules',
        endpoints: [endpoint('a', 'auth-401')],
      },
    ],
  });
  const r = (await h.result()) as SweepReport;
  expect(stats('auth-401')!.authHeaders).toContain('present');
  const history = JSON.stringify(await h.fetchHistory());
  expect(history).not.toContain(`${SK}test-not-a-real-key`);
  expect(JSON.stringify(r)).not.toContain(`${SK}test-not-a-real-key`);
  expect(r.endpoints.retired).toEqual([]);
  expect(r.proposals.filter((p) => p.outcome === 'not_reviewed').every((p) => /ProviderAuth/.test(p.reason))).toBe(
    true,
  );
});

describe('batched model calls', () => {
  const input = (file: string, scenario: string, entities: number): SweepInput => ({
    catalog: { kind: 'file', path: file },
    review: 'model',
    agentBackend: 'model',
    endpoints: [endpoint(`batch-${entities}`, scenario)],
    modelBatch: { entities, promptTokens: 6000 },
    modelConcurrency: 2,
  });
  const decisions = (r: SweepReport) => Object.fromEntries(r.proposals.map((p) => [p.id, `${p.outcome}:${p.written}`]));

  test('change no proposal and no verdict, with several entities per call', async () => {
    const one = smallCatalog('batch-one', 12);
    const many = smallCatalog('batch-many', 12);
    const unbatched = await sweep(input(one, 'ok', 1));
    const batched = await sweep(input(many, 'ok', 16));
    expect(unbatched.partial).toBe(false);
    expect(batched.partial).toBe(false);
    expect(decisions(batched)).toEqual(decisions(unbatched));
    expect(readFileSync(many, 'utf8')).toBe(readFileSync(one, 'utf8'));
    // Fewer calls and fewer tokens for the same work; every call counted.
    // (Demo tables are mostly undescribed: the answers, bounded by maxOutputTokens per call, set the batch size.)
    expect(batched.modelUsage.calls).toBeLessThan(unbatched.modelUsage.calls / 2);
    expect(batched.modelUsage.promptTokens).toBeLessThan(unbatched.modelUsage.promptTokens);
  });

  test('a fresh worker sends a few batches first, then plans the rest on what they took: fewer calls, same result', async () => {
    // A model this worker has never seen: its first plans are provisional, sized for the longest answers.
    const model = uniqueId('lead-model');
    const run = async (name: string, taskQueue = w.tw.taskQueue) => {
      const file = smallCatalog(name, 69);
      // One pass: the plans below are the first pass's (later passes plan the entities they re-judge).
      const sweepInput = {
        ...input(file, 'ok', 16),
        endpoints: [{ ...endpoint('batch-lead', 'ok'), model }],
        maxPasses: 1,
      };
      const workflowId = uniqueId('sweep/lead');
      const report = (await w.client.workflow.execute('sweepWorkflow', {
        taskQueue,
        workflowId,
        args: [sweepInput],
      })) as SweepReport;
      const history = await w.client.workflow.getHandle(workflowId).fetchHistory();
      const decode = (p: { data?: Uint8Array | null } | null | undefined) =>
        p?.data ? (JSON.parse(Buffer.from(p.data).toString('utf8')) as Record<string, unknown>) : {};
      const asked = new Map<string, { agent: string; skip: number }>();
      const plans: { agent: string; skip: number; batches: string[][]; provisional: boolean }[] = [];
      for (const e of history.events ?? []) {
        const a = e.activityTaskScheduledEventAttributes;
        if (a?.activityType?.name === 'planModelBatches') {
          const i = decode(a.input?.payloads?.[0]) as { agent: string; skip?: string[] };
          asked.set(String(e.eventId), { agent: i.agent, skip: i.skip?.length ?? 0 });
        }
        const done = e.activityTaskCompletedEventAttributes;
        const q = done && asked.get(String(done.scheduledEventId));
        if (q)
          plans.push({
            ...q,
            ...(decode(done.result?.payloads?.[0]) as { batches: string[][]; provisional: boolean }),
          });
      }
      return { file, report, plans: plans.filter((p) => p.agent === 'pii-classifier') };
    };
    const fresh = await run('batch-lead-fresh');
    expect(fresh.report.partial).toBe(false);
    const [first, rest, ...more] = fresh.plans;
    expect(more).toEqual([]);
    expect(first!.provisional).toBe(true);
    expect(first!.batches.length).toBeGreaterThan(LEAD_BATCHES);
    // The rest is planned without the lead batches' entities, on a scale the three answers set.
    expect(rest!.skip).toBe(first!.batches.slice(0, LEAD_BATCHES).flat().length);
    expect(rest!.provisional).toBe(false);
    const sent = LEAD_BATCHES + rest!.batches.length;
    expect(sent).toBeLessThan(first!.batches.length);
    expect(fresh.report.modelUsage.byAgent['pii-classifier']?.calls).toBeGreaterThanOrEqual(sent);
    // Now calibrated: one plan, not provisional; the same proposals, verdicts and catalog as the fresh run.
    const again = await run('batch-lead-again');
    expect(again.plans.map((p) => p.provisional)).toEqual([false]);
    expect(decisions(again.report)).toEqual(decisions(fresh.report));
    expect(readFileSync(again.file, 'utf8')).toBe(readFileSync(fresh.file, 'utf8'));
    // A worker started later on the same state folder (a restart, a second worker) starts where the answers left
    // the calibration: the state store shares it.
    const later = await startTestWorker(await bundleOnce(), uniqueId('tq-model-later'), workerEnv, w.tw.stateDir);
    try {
      const restarted = await run('batch-lead-restarted', later.taskQueue);
      expect(restarted.plans.map((p) => p.provisional)).toEqual([false]);
      expect(decisions(restarted.report)).toEqual(decisions(fresh.report));
      expect(readFileSync(restarted.file, 'utf8')).toBe(readFileSync(fresh.file, 'utf8'));
    } finally {
      await later.stop();
    }
    expect(JSON.parse(readFileSync(path.join(w.tw.stateDir, 'calibration.json'), 'utf8'))).toHaveProperty(
      `${model}|pii-classifier`,
    );
  });

  test.each(['batch-drop-last', 'batch-bad-item'])(
    'a %s answer fails only the entity it lacks, which is asked alone: same result as a whole answer',
    async (scenario) => {
      const whole = smallCatalog(`batch-whole-${scenario}`, 12);
      const spoiled = smallCatalog(`batch-${scenario}`, 12);
      const ok = await sweep(input(whole, 'ok', 16));
      const r = await sweep(input(spoiled, scenario, 16));
      expect(r.partial).toBe(false);
      expect(r.failures).toEqual([]);
      expect(decisions(r)).toEqual(decisions(ok));
      expect(readFileSync(spoiled, 'utf8')).toBe(readFileSync(whole, 'utf8'));
      // The lacking entities cost calls of their own.
      expect(r.modelUsage.calls).toBeGreaterThan(ok.modelUsage.calls);
    },
  );
});

describe('answers remembered by their request', () => {
  test('a full sweep sends no request answered before; undo of the sweep forgets its answers and they are asked again', async () => {
    const file = smallCatalog('remembered', 10);
    // A model id of its own: no other test of this worker's state store asked these requests.
    const ep = { ...endpoint('a', 'ok'), model: 'fake-model-remembered' };
    const input: SweepInput = {
      catalog: { kind: 'file', path: file },
      review: 'model',
      agentBackend: 'model',
      endpoints: [ep],
    };
    const first = await sweep(input);
    expect(stats('ok')!.answered).toBeGreaterThan(0);
    expect(first.modelUsage.calls).toBe(stats('ok')!.answered);
    expect(first.written).toBeGreaterThan(0);
    // A full sweep right after, as after an upgrade: a request whose only change is the text ARGUS wrote from its
    // answer is no new request (the describe answers are kept under the evidence view too). What is still sent:
    // requests on what a write changed beyond ARGUS's text (a reviewer's evidence, a lineage repair).
    // On this catalog there is none: nothing is sent.
    fp.reset();
    const upgraded = await sweep({ ...input, incremental: false });
    expect(upgraded.partial).toBe(false);
    expect(stats('ok')?.answered ?? 0).toBe(0);
    expect(upgraded.modelUsage.calls).toBe(0);
    expect(upgraded.modelUsage.remembered).toBeGreaterThan(0);
    expect(upgraded.written).toBe(0);

    // Judging everything again, as after an upgrade: every request is one answered before, and none is sent.
    fp.reset();
    const full = await sweep({ ...input, incremental: false });
    expect(full.partial).toBe(false);
    expect(stats('ok')?.answered ?? 0).toBe(0);
    expect(full.modelUsage.calls).toBe(0);
    expect(full.modelUsage.remembered).toBeGreaterThan(0);
    expect(full.written).toBe(0);
    expect(full.outcomes.not_reviewed).toBe(0);
    const used = new Set(callDigests(full.sweepId));
    expect(used.size).toBeGreaterThan(0);

    // Undo of that sweep forgets the answers its decisions rest on: the next sweep asks each of them again.
    const [undo] = await undoSweep(w.tw.stateDir, full.sweepId);
    expect(undo?.answersForgotten).toBe(used.size);
    const book = fileAnswers(w.tw.stateDir);
    const left = await Promise.all([...used].map((d) => book.recall(d)));
    expect(left.filter((a) => a !== undefined)).toEqual([]);
    fp.reset();
    const again = await sweep({ ...input, incremental: false });
    expect(again.modelUsage.calls).toBeGreaterThan(0);
    expect(stats('ok')!.answered).toBe(again.modelUsage.calls);
    expect(again.modelUsage.remembered ?? 0).toBe(0);
    expect(again.written).toBe(0);
    expect(again.proposals.map((p) => [p.id, p.outcome])).toEqual(full.proposals.map((p) => [p.id, p.outcome]));
  });
});

/** The digests a sweep's call records name (sent, remembered or kept per entity), read from its ledger's pages. */
function callDigests(sweepId: string): string[] {
  const root = path.join(w.tw.stateDir, 'sweeps');
  const out: string[] = [];
  for (const run of readdirSync(root)) {
    const meta = JSON.parse(readFileSync(path.join(root, run, 'meta.json'), 'utf8')) as { sweepId: string };
    if (meta.sweepId !== sweepId) continue;
    for (const page of readdirSync(path.join(root, run, 'pages')))
      for (const f of readdirSync(path.join(root, run, 'pages', page)).filter((x) => /^calls-.*\.json$/.test(x)))
        for (const c of JSON.parse(readFileSync(path.join(root, run, 'pages', page, f), 'utf8')) as {
          digest?: string;
          kept?: string[];
        }[])
          out.push(...[c.digest, ...(c.kept ?? [])].filter((d): d is string => d !== undefined));
  }
  return out;
}
