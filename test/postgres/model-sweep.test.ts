// Model sweeps that fit a budget, on a live PostgreSQL database: pagila in a throwaway cluster, every agent and the
// review on the loopback fake provider, in batches. The plan is made from pagila's own tables; with most of a
// declared daily budget already spent, `fitBudget` sweeps the entities that fit, defers the others, has no call
// refused, and what it wrote is in pg_description; the next plan takes the deferred entities first.
import * as path from 'node:path';
import { Client } from 'pg';
import { planSweep, runSweep, useArgusWorker } from '../support/argus-worker';
import { loadSql, startPostgres, type PgServer } from '../support/postgres';
import { SK } from '../support/fake-secrets';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { fileStateStore } from '../../state/file/store';
import { usageDay } from '../../state/store';
import { paceKey } from '../../llm/client';
import { PLAN_MARGIN } from '../../activities/plan';
import type { EndpointConfig, SweepInput } from '../../domain/sweep';

jest.setTimeout(300_000);

const DUMPS = path.resolve(__dirname, '../../../shared/testdata/postgres');
const KEY_ENV = 'ARGUS_TEST_PG_MODEL_KEY';
const env: NodeJS.ProcessEnv = { ...process.env, [KEY_ENV]: `${SK}pg-model-not-a-real-key-1234` };
let server: PgServer;
let db: Client;
let fp: FakeProvider;

beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
  server = await startPostgres();
  const url = await server.createDatabase('pagila_model');
  await loadSql(url, path.join(DUMPS, 'pagila.sql'));
  env.ARGUS_PG_URL = url;
  db = new Client({ connectionString: url });
  db.on('error', () => undefined);
  await db.connect();
});

const w = useArgusWorker('tq-postgres-model', env);

afterAll(async () => {
  await db?.end();
  await server?.stop();
  await fp?.close();
});

// Budgets and spending are kept per provider key (base URL, model, key variable): each step its own model name.
const endpoint = (model: string, tokensPerDay: number): EndpointConfig => ({
  id: 'free-tier',
  baseUrl: fp.baseUrl('ok', 'correct'),
  model,
  apiKeyEnv: KEY_ENV,
  structuredOutput: 'json_schema',
  maxOutputTokens: 900,
  timeoutMs: 20_000,
  maxInFlight: 4,
  budget: { tokensPerDay },
});
const input = (ep: EndpointConfig, extra: Partial<SweepInput> = {}): SweepInput => ({
  catalog: { kind: 'postgres', schemas: ['public'] },
  review: 'model',
  agentBackend: 'model',
  endpoints: [ep],
  ...extra,
});
const plan = (i: SweepInput) => planSweep(w, i, 'plan/pg');

const commentCount = async () =>
  Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM pg_catalog.pg_description')).rows[0]!.n);

test('pagila on a mostly spent budget: the plan defers what does not fit, fitBudget sweeps the rest in batches', async () => {
  const fresh = await plan(input(endpoint('pg-fresh', 10_000_000)));
  expect(fresh.verdict).toBe('fits');
  expect(fresh.entities).toBeGreaterThan(20);
  expect(fresh.fitting).toBe(fresh.entities);

  // Leave room for about a third of the sweep: the plan says which entities fit, before any call.
  const ep = endpoint('pg-spent', 1_000_000);
  const left = Math.round(fresh.needed.tokens / 3);
  await fileStateStore(w.tw.stateDir).usage.add(paceKey(ep), usageDay(), 1_000_000 - left, 1);
  fp.reset();
  const p = await plan(input(ep));
  expect(fp.stats()['/s/ok/r/correct']?.calls ?? 0).toBe(0);
  expect(p.verdict).toBe('partial');
  expect(p.fitting).toBeGreaterThan(0);
  expect(p.deferred).toBe(p.entities - p.fitting);
  expect(p.deferred).toBeGreaterThan(0);

  const before = await commentCount();
  const r = await runSweep(w, input(ep, { fitBudget: true }), 'sweep/pg-model');
  const calls = fp.stats()['/s/ok/r/correct']!;
  expect(calls.exhaustedAnswers).toBe(0);
  expect(r.partial).toBe(false);
  expect(r.deferred).toMatchObject({ count: p.deferred, verdict: 'partial' });
  expect(r.entities.requested).toBe(p.fitting);
  expect(r.entities.processed).toBe(p.fitting);
  for (const id of r.deferred!.first) expect(r.proposals.some((x) => x.entityId === id)).toBe(false);

  // Every agent and the review asked several entities at once: fewer calls than entities (one call per entity
  // and task would be four times as many).
  expect(r.modelUsage.calls).toBe(calls.calls);
  expect(Object.keys(r.modelUsage.byAgent)).toEqual(expect.arrayContaining(['description-drafter', 'review']));
  expect(r.modelUsage.calls).toBeLessThan(r.entities.requested);
  const spent = r.modelUsage.promptTokens + r.modelUsage.completionTokens;
  expect(spent).toBeLessThanOrEqual(left);
  expect(spent).toBeLessThanOrEqual((p.promptTokens + p.completionTokens) * PLAN_MARGIN);

  expect(r.proposalsTruncated).toBe(0);
  // What was approved is in the database: the written descriptions as comments psql shows.
  const describedWritten = r.proposals.filter((x) => x.kind === 'description' && x.written).length;
  expect(describedWritten).toBeGreaterThan(0);
  expect(await commentCount()).toBe(before + describedWritten);

  // The next sweep's plan takes the deferred entities first: they were never reviewed.
  const next = await plan(input(endpoint('pg-next', 10_000_000)));
  expect(next.firstFitting.slice(0, 3)).toEqual(r.deferred!.first.slice(0, 3));
});
