// A model sweep of a real dbt project: jaffle_shop copied and built with real dbt, every agent and the review on the
// loopback fake provider, in batches. The plan is made before any call and the sweep spends within it; the
// approved repairs land in the YAML files and `dbt parse` stays green with them in its manifest.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { planSweep, runSweep, useArgusWorker } from '../support/argus-worker';
import { dbtParse, prepareJaffleShop, type JaffleShop } from '../support/dbt';
import { SK } from '../support/fake-secrets';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { PLAN_MARGIN } from '../../activities/plan';
import type { EndpointConfig, SweepInput } from '../../domain/sweep';

jest.setTimeout(600_000);

const KEY_ENV = 'ARGUS_TEST_DBT_MODEL_KEY';
const w = useArgusWorker('tq-dbt-model', { ...process.env, [KEY_ENV]: `${SK}dbt-model-not-a-real-key-123` });
let fp: FakeProvider;
let shop: JaffleShop;

beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
  shop = await prepareJaffleShop();
});
afterAll(async () => {
  await fp?.close();
});

const endpoint: () => EndpointConfig = () => ({
  id: 'free-tier',
  baseUrl: fp.baseUrl('ok', 'correct'),
  model: 'dbt-model',
  apiKeyEnv: KEY_ENV,
  structuredOutput: 'json_schema',
  maxOutputTokens: 900,
  timeoutMs: 20_000,
  maxInFlight: 4,
  budget: { tokensPerDay: 100_000 },
});
const input = (): SweepInput => ({
  catalog: { kind: 'dbt', projectDir: shop.dir },
  review: 'model',
  agentBackend: 'model',
  endpoints: [endpoint()],
  // A plan covers the first pass; the passes that re-judge what the sweep wrote spend beyond it.
  maxPasses: 1,
});

test('jaffle_shop in batches: planned before any call, spent within the plan, written to YAML that dbt parses', async () => {
  fp.reset();
  const p = await planSweep(w, input(), 'plan/dbt');
  expect(fp.stats()['/s/ok/r/correct']?.calls ?? 0).toBe(0);
  expect(p.verdict).toBe('fits');
  expect(p.entities).toBeGreaterThan(5);

  const r = await runSweep(w, input(), 'sweep/dbt-model');
  expect(r.partial).toBe(false);
  expect(r.failures).toEqual([]);
  expect(r.entities.processed).toBe(p.entities);
  const calls = fp.stats()['/s/ok/r/correct']!;
  expect(calls.exhaustedAnswers).toBe(0);
  expect(r.modelUsage.calls).toBe(calls.calls);
  // Three agents and the review on every model: one call per entity and agent would be four times the entities.
  expect(r.modelUsage.calls).toBeLessThan(r.entities.requested);
  const spent = r.modelUsage.promptTokens + r.modelUsage.completionTokens;
  expect(spent).toBeLessThanOrEqual((p.promptTokens + p.completionTokens) * PLAN_MARGIN);
  expect(r.modelUsage.byAgent.review?.calls).toBeGreaterThan(0);

  expect(r.proposalsTruncated).toBe(0);
  const described = r.proposals.filter((x) => x.written && x.change.kind === 'description');
  expect(described.length).toBeGreaterThan(0);
  const parse = await dbtParse(shop.dir);
  expect({ code: parse.code, output: parse.code === 0 ? '' : parse.output }).toEqual({ code: 0, output: '' });
  const manifest = JSON.parse(readFileSync(path.join(shop.dir, 'target', 'manifest.json'), 'utf8')) as {
    nodes: Record<string, { description: string; columns: Record<string, { description: string }> }>;
    sources?: Record<string, { description: string; columns: Record<string, { description: string }> }>;
  };
  const texts = new Set<string>();
  for (const n of [...Object.values(manifest.nodes), ...Object.values(manifest.sources ?? {})]) {
    texts.add(n.description);
    for (const c of Object.values(n.columns)) texts.add(c.description);
  }
  for (const d of described) expect(texts).toContain((d.change as { text: string }).text);
});
