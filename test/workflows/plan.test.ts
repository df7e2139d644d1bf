// A plan before the run, on a real dev server against a real loopback provider: `planSweepWorkflow` estimates
// from the prompts a sweep would send and compares them with a declared budget less what ARGUS spent today,
// and with a provider's last long-window rate-limit headers; `fitBudget` sweeps what fits, oldest-unreviewed
// first, defers the rest and says so, with no call refused by the provider.
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { uniqueId } from '../support/temporal-env';
import {
  useArgusWorker,
  copyCatalog,
  readCatalog,
  writeCatalog,
  DEMO_CATALOG,
  planSweep,
} from '../support/argus-worker';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { fileStateStore } from '../../state/file/store';
import { usageDay } from '../../state/store';
import { paceKey } from '../../llm/client';
import { PLAN_MARGIN } from '../../activities/plan';
import type { SweepReport } from '../../domain/report';
import type { EndpointConfig, SweepInput } from '../../domain/sweep';
import { SK } from '../support/fake-secrets';

const KEY_ENV = 'ARGUS_TEST_PLAN_KEY';
const w = useArgusWorker('tq-plan', { ...process.env, [KEY_ENV]: `${SK}plan-not-a-real-key-123456` });
let fp: FakeProvider;
beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
});
afterAll(async () => {
  await fp?.close();
});

function catalog(name: string, n: number): string {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'plan', name));
  const c = readCatalog(file);
  c.entities = c.entities.slice(0, n);
  writeCatalog(file, c);
  return file;
}
// Each test's own model name: budgets and spending are kept per provider key (base URL, model, key variable).
const endpoint = (scenario: string, budget?: EndpointConfig['budget'], model = 'fake-model'): EndpointConfig => ({
  id: 'free-tier',
  baseUrl: fp.baseUrl(scenario, 'correct'),
  model,
  apiKeyEnv: KEY_ENV,
  structuredOutput: 'json_schema',
  maxOutputTokens: 900,
  timeoutMs: 10000,
  maxInFlight: 1,
  ...(budget ? { budget } : {}),
});
const input = (file: string, ep: EndpointConfig, extra: Partial<SweepInput> = {}): SweepInput => ({
  catalog: { kind: 'file', path: file },
  review: 'model',
  agentBackend: 'rules',
  endpoints: [ep],
  ...extra,
});
const plan = (i: SweepInput) => planSweep(w, i);
/** Spend `tokens` of today's budget on an endpoint's provider key, as earlier sweeps would have. */
const spend = (ep: EndpointConfig, tokens: number) =>
  fileStateStore(w.tw.stateDir).usage.add(paceKey(ep), usageDay(), tokens, 1);

test('a fresh free-tier budget fits; the same budget 99 % spent does not; no model call either way', async () => {
  const file = catalog('budget', 20);
  const fresh = endpoint('ok', { tokensPerDay: 100_000 });
  const p = await plan(input(file, fresh));
  expect(p.verdict).toBe('fits');
  expect(p.fitting).toBe(20);
  expect(p.calls).toBeGreaterThan(0);
  expect(p.promptTokens).toBeGreaterThan(0);
  expect(p.endpoints[0]).toMatchObject({ source: 'declared', remainingTokens: 100_000, spentTodayTokens: 0 });

  const spent = endpoint('ok', { tokensPerDay: 100_000 }, 'fake-model-spent');
  await spend(spent, 99_000);
  const q = await plan(input(file, spent));
  expect(q.verdict).not.toBe('fits');
  expect(q.fitting).toBeLessThan(20);
  expect(q.endpoints[0]).toMatchObject({ remainingTokens: 1_000, spentTodayTokens: 99_000 });
  expect(q.deferred).toBe(20 - q.fitting);
  expect(q.text).toMatch(q.verdict === 'partial' ? /Fits on \d+ of 20/ : /Does not fit/);
  expect(fp.stats()['/s/ok/r/correct']?.calls ?? 0).toBe(0);
});

test("a provider's last daily-window headers are planned against; a short window is only paced", async () => {
  const file = catalog('headers', 6);
  const daily = endpoint('daily-headers-300');
  // One sweep teaches the worker what the provider says is left today.
  await w.client.workflow.execute('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId('sweep/plan-headers'),
    args: [input(file, daily)],
  });
  // Planned on a copy the sweep has not repaired yet (the same work as before it ran).
  const p = await plan(input(catalog('headers-plan', 6), daily));
  expect(p.endpoints[0]).toMatchObject({ source: 'headers', remainingTokens: 300 });
  expect(p.verdict).not.toBe('fits');
  const minute = endpoint('rate-limit-headers-300');
  await w.client.workflow.execute('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId('sweep/plan-minute'),
    args: [input(file, minute)],
  });
  const q = await plan(input(file, minute));
  expect(q.endpoints[0]).toMatchObject({ source: 'unknown', remainingTokens: null });
  expect(q.verdict).toBe('fits');
});

test('fitBudget sweeps what fits, oldest-unreviewed first, defers the rest, and no call is refused', async () => {
  const file = catalog('fit', 20);
  fp.reset();
  const ep = endpoint('ok', { tokensPerDay: 100_000 }, 'fake-model-fit');
  const whole = await plan(input(file, ep));
  // Leave room for about a third of the sweep.
  await spend(ep, 100_000 - Math.round(whole.needed.tokens / 3));
  const p = await plan(input(file, ep));
  expect(p.verdict).toBe('partial');
  const r = (await w.client.workflow.execute('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId('sweep/plan-fit'),
    args: [input(file, ep, { fitBudget: true })],
  })) as SweepReport;
  const s = fp.stats()['/s/ok/r/correct']!;
  expect(s.calls).toBeGreaterThan(0);
  expect(s.exhaustedAnswers).toBe(0);
  expect(r.partial).toBe(false);
  expect(r.deferred).toMatchObject({ count: p.deferred, verdict: 'partial' });
  expect(r.entities.requested).toBe(p.fitting);
  expect(r.entities.processed).toBe(p.fitting);
  // Deferred entities were neither reviewed nor counted: no proposal of theirs is in the report.
  const swept = new Set(p.firstFitting);
  expect(r.proposals.every((x) => swept.has(x.entityId) || p.fitting > p.firstFitting.length)).toBe(true);
  for (const id of r.deferred!.first) expect(r.proposals.some((x) => x.entityId === id)).toBe(false);
  // What it spent stays within the plan's estimate and its margin, and not far below it.
  const spentTokens = r.modelUsage.promptTokens + r.modelUsage.completionTokens;
  expect(spentTokens).toBeLessThanOrEqual((p.promptTokens + p.completionTokens) * PLAN_MARGIN);
  expect(spentTokens).toBeGreaterThan((p.promptTokens + p.completionTokens) / 4);

  // The next sweep with room for everything takes the deferred entities first: they were never reviewed.
  const next = await plan(input(file, endpoint('ok', { tokensPerDay: 100_000 }, 'fake-model-next')));
  expect(next.firstFitting.slice(0, 3)).toEqual(r.deferred!.first.slice(0, 3));
});

test('invalid input fails at once, naming the field', async () => {
  const err = await plan({ catalog: { kind: 'demo' }, endpoints: [{ id: 'x' }] } as unknown as SweepInput).catch(
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/endpoints\.0\.baseUrl/);
});
