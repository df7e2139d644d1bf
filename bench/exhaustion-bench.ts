// npm run bench:exhaustion [-- --json] [--timeline] [--page-fixed-point on|off]
// The seed's scenario side by side: 45 entities, one endpoint whose daily quota is spent after 3 calls.
//   argus          a model-review sweep on a throwaway dev server (real worker, real Temporal)
//   naive          every 429 retried six times with exponential backoff, body never read
//   openaiDefault  the openai SDK with its default retries (it retries 429 without reading the body)
// Each prints wallMs (start to final report) and callsAfterExhaustion (calls the provider received after its
// first answer saying the quota was spent).
//   planned        the same catalog on a free tier declared as 100,000 tokens a day, 99 % already spent (the
//                  provider refuses past the 1,000 tokens left): `sweep plan` before any call, then a fitBudget
//                  sweep that takes what fits and defers the rest.
import { mkdtempSync, copyFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, bundleWorkflowCode, Runtime, DefaultLogger } from '@temporalio/worker';
import { startFakeProvider, type FakeProvider } from '../fakes/provider';
import { createArgusWorker } from '../worker/create-worker';
import { readCatalog, writeCatalog } from './catalog-io';
import { createCatalogContext } from '../judgment/catalog-context';
import { entityEvidence } from '../activities/model/model-review';
import { SYSTEM_PROMPTS, userMessage } from '../llm/prompts';
import type { SweepReport } from '../domain/report';
import { CatalogFile } from '../domain/catalog';
import { ROOT, pageFixedPointArg, startDevServer } from './support';
import { fileStateStore } from '../state/file/store';
import { usageDay } from '../state/store';
import { paceKey } from '../llm/client';
import type { SweepPlan } from '../activities/plan';
import { sweepTimeline } from './timeline';

const SCENARIO = 'daily-quota-3';
const ENTITIES = 45;
const NAIVE_ATTEMPTS = 6;
const NAIVE_BASE_MS = Number(process.env.NAIVE_BASE_MS ?? 50);

interface Figures {
  wallMs: number;
  callsAfterExhaustion: number;
  calls: number;
  outcome: string;
}

function figures(fp: FakeProvider, t0: number, outcome: string): Figures {
  const s = fp.stats()[`/s/${SCENARIO}`] ?? fp.stats()[`/s/${SCENARIO}/r/correct`];
  return {
    wallMs: Math.round(performance.now() - t0),
    callsAfterExhaustion: s?.callsAfterExhaustion ?? 0,
    calls: s?.calls ?? 0,
    outcome,
  };
}

function requestFor(entity: ReturnType<typeof entityEvidence>) {
  return {
    model: 'fake-model',
    messages: [
      { role: 'system' as const, content: SYSTEM_PROMPTS.classify_pii },
      { role: 'user' as const, content: userMessage({ argusTask: 'classify_pii', entity }) },
    ],
    response_format: { type: 'json_object' as const },
    max_tokens: 900,
  };
}

async function naive(fp: FakeProvider, evidence: ReturnType<typeof entityEvidence>[]): Promise<Figures> {
  fp.reset();
  const t0 = performance.now();
  let failed = 0;
  for (const e of evidence) {
    for (let attempt = 0; attempt <= NAIVE_ATTEMPTS; attempt++) {
      const res = await fetch(`${fp.baseUrl(SCENARIO)}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer fake' },
        body: JSON.stringify(requestFor(e)),
      });
      await res.text();
      if (res.status !== 429) break;
      if (attempt === NAIVE_ATTEMPTS) failed++;
      else await new Promise((r) => setTimeout(r, NAIVE_BASE_MS * 2 ** attempt));
    }
  }
  return figures(fp, t0, `${failed} of ${evidence.length} entities "review failed"`);
}

/** How long the openai SDK contender may run before it is stopped and its figures projected. */
const OPENAI_BUDGET_MS = Number(process.env.OPENAI_BUDGET_MS ?? 20000);

async function openaiDefault(
  fp: FakeProvider,
  evidence: ReturnType<typeof entityEvidence>[],
): Promise<Figures & { stoppedAfterMs?: number; note?: string }> {
  fp.reset();
  const client = new OpenAI({ apiKey: 'fake', baseURL: fp.baseUrl(SCENARIO) });
  const t0 = performance.now();
  let failed = 0;
  let done = 0;
  const loop = (async () => {
    for (const e of evidence) {
      try {
        await client.chat.completions.create(requestFor(e));
      } catch {
        failed++;
      }
      done++;
    }
  })();
  // The SDK sleeps whatever retry-after says (here the daily quota's 5444 s) before each of its 2 retries,
  // and that sleep cannot be interrupted: stop measuring after the budget and say so.
  const finished = await Promise.race([
    loop.then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), OPENAI_BUDGET_MS).unref()),
  ]);
  if (finished) return figures(fp, t0, `${failed} of ${evidence.length} calls failed after the SDK's retries`);
  const f = figures(
    fp,
    t0,
    `stopped after ${OPENAI_BUDGET_MS} ms with ${done} of ${evidence.length} entities done: the SDK was sleeping the provider's retry-after`,
  );
  return {
    ...f,
    stoppedAfterMs: OPENAI_BUDGET_MS,
    note: 'wallMs is a lower bound; the SDK honours retry-after (5444 s) before each of its 2 retries',
  };
}

/** A throwaway dev server and an in-process ARGUS worker on a fresh state folder, for `fn`. */
async function withArgus<T>(fn: (client: Client, taskQueue: string, stateDir: string) => Promise<T>): Promise<T> {
  const server = await startDevServer();
  const taskQueue = `bench-exhaustion-${Date.now()}`;
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-bench-ex-'));
  const nc = await NativeConnection.connect({ address: server.address });
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
    logger: new DefaultLogger('WARN'),
  });
  const worker = await createArgusWorker({
    config: {
      taskQueue,
      stateDir,
      namespace: 'default',
      stateUrl: process.env.ARGUS_STATE_URL,
      stateSchema: process.env.ARGUS_STATE_SCHEMA,
    },
    connection: nc,
    workflowBundle: bundle,
    env: { ...process.env, FAKE_KEY: 'fake' },
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  try {
    return await worker.runUntil(fn(client, taskQueue, stateDir));
  } finally {
    await connection.close();
    await nc.close();
    await server.stop();
  }
}

async function argus(
  fp: FakeProvider,
  file: string,
): Promise<Figures & { partial: boolean; notReviewed: number; reason: string }> {
  fp.reset();
  return withArgus(async (client, taskQueue) => {
    const t0 = performance.now();
    const workflowId = `sweep/bench-exhaustion/${Date.now()}`;
    const handle = await client.workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId,
      args: [
        {
          catalog: { kind: 'file', path: file },
          review: 'model',
          agentBackend: 'rules',
          endpoints: [{ id: 'quota-3', baseUrl: fp.baseUrl(SCENARIO), model: 'fake-model', apiKeyEnv: 'FAKE_KEY' }],
          ...pageFixedPointArg(),
        },
      ],
    });
    const report = (await handle.result()) as SweepReport;
    const f = figures(fp, t0, report.partial ? 'partial report' : 'complete report');
    // --timeline: where ARGUS's wall time went, one line per activity (ms after the sweep started).
    if (process.argv.includes('--timeline'))
      for (const s of await sweepTimeline(client, workflowId, handle.firstExecutionRunId, 1))
        process.stderr.write(
          `  ${String(Math.round(s.startedMs)).padStart(6)} → ${String(Math.round(s.closedMs)).padStart(6)} ms ` +
            `(queued ${Math.round(s.startedMs - s.scheduledMs)} ms)  ${s.workflow}: ${s.activity}\n`,
        );
    return {
      ...f,
      partial: report.partial,
      notReviewed: report.outcomes.not_reviewed,
      reason: report.partialReasons.join('; ').slice(0, 300),
    };
  });
}

const PLANNED_SCENARIO = 'token-quota-1000';
const TOKENS_PER_DAY = 100_000;
const SPENT = 99_000;

/** The seed's free tier, planned: the plan says it does not fit before any call; fitBudget defers what does not. */
async function planned(fp: FakeProvider, file: string) {
  fp.reset();
  const endpoint = {
    id: 'free-tier',
    baseUrl: fp.baseUrl(PLANNED_SCENARIO),
    model: 'fake-model',
    apiKeyEnv: 'FAKE_KEY',
    budget: { tokensPerDay: TOKENS_PER_DAY },
  };
  const input = {
    catalog: { kind: 'file', path: file },
    review: 'model',
    agentBackend: 'rules',
    endpoints: [endpoint],
  };
  const stats = () => fp.stats()[`/s/${PLANNED_SCENARIO}`] ?? fp.stats()[`/s/${PLANNED_SCENARIO}/r/correct`];
  return withArgus(async (client, taskQueue, stateDir) => {
    // Earlier sweeps today spent 99 % of the day's tokens on this provider key.
    await fileStateStore(stateDir).usage.add(paceKey(endpoint), usageDay(), SPENT, 0);
    const plan = (await client.workflow.execute('planSweepWorkflow', {
      taskQueue,
      workflowId: `plan/bench-exhaustion/${Date.now()}`,
      args: [input],
    })) as SweepPlan;
    const callsDuringPlan = stats()?.calls ?? 0;
    const t0 = performance.now();
    const report = (await client.workflow.execute('sweepWorkflow', {
      taskQueue,
      workflowId: `sweep/bench-exhaustion-planned/${Date.now()}`,
      args: [{ ...input, fitBudget: true }],
    })) as SweepReport;
    const s = stats();
    return {
      budget: { tokensPerDay: TOKENS_PER_DAY, spentToday: SPENT, providerRefusesPast: TOKENS_PER_DAY - SPENT },
      plan: {
        verdict: plan.verdict,
        entities: plan.entities,
        fitting: plan.fitting,
        deferred: plan.deferred,
        wholeSweep: plan.needed,
        text: plan.text,
      },
      callsDuringPlan,
      sweep: {
        wallMs: Math.round(performance.now() - t0),
        swept: report.entities.requested,
        deferred: report.deferred?.count ?? 0,
        partial: report.partial,
        calls: s?.calls ?? 0,
        tokens: report.modelUsage.promptTokens + report.modelUsage.completionTokens,
        refusedByProvider: s?.exhaustedAnswers ?? 0,
        approved: report.outcomes.approved,
        written: report.written,
      },
    };
  });
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-bench-ex-cat-'));
  const file = path.join(dir, 'catalog.json');
  copyFileSync(path.join(ROOT, 'catalog', 'demo', 'shop-warehouse.json'), file);
  const cat = readCatalog(file);
  cat.entities = cat.entities.slice(0, ENTITIES);
  writeCatalog(file, cat);
  const parsed = CatalogFile.parse(cat);
  const ctx = createCatalogContext(parsed.entities.map((e) => e.id));
  const evidence = parsed.entities.map((e) => entityEvidence(e, ctx));
  const fp = await startFakeProvider({ port: 0 });
  try {
    process.stderr.write('bench:exhaustion: argus…\n');
    const a = await argus(fp, file);
    process.stderr.write(
      `bench:exhaustion: naive loop (${NAIVE_ATTEMPTS} retries, backoff ${NAIVE_BASE_MS} ms × 2^n)…\n`,
    );
    const n = await naive(fp, evidence);
    process.stderr.write('bench:exhaustion: openai SDK defaults…\n');
    const o = await openaiDefault(fp, evidence);
    process.stderr.write('bench:exhaustion: planned (99 % of a 100,000-token day spent, fitBudget)…\n');
    // A copy as it was before the argus run wrote its repairs: the same work to plan.
    const fresh = path.join(dir, 'planned.json');
    writeCatalog(fresh, cat);
    const p = await planned(fp, fresh);
    const out = {
      scenario: {
        entities: ENTITIES,
        provider: `fake ${SCENARIO}: daily token quota spent after 3 calls`,
        naiveRetries: NAIVE_ATTEMPTS,
        naiveBackoffBaseMs: NAIVE_BASE_MS,
      },
      argus: a,
      naive: n,
      openaiDefault: o,
      planned: p,
    };
    if (json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    else {
      for (const [k, v] of Object.entries({ argus: a, naive: n, openaiDefault: o }))
        process.stdout.write(
          `${k.padEnd(14)} wallMs ${String(v.wallMs).padStart(7)}  callsAfterExhaustion ${String(v.callsAfterExhaustion).padStart(4)}  calls ${String(v.calls).padStart(4)}  ${v.outcome}\n`,
        );
      process.stdout.write(
        `${'planned'.padEnd(14)} plan ${p.plan.verdict} (${p.plan.fitting} of ${p.plan.entities} fit, ${p.callsDuringPlan} calls to plan); ` +
          `fitBudget swept ${p.sweep.swept}, deferred ${p.sweep.deferred}, ${p.sweep.calls} calls, refused by the provider ${p.sweep.refusedByProvider}, partial ${p.sweep.partial}\n`,
      );
    }
  } finally {
    await fp.close();
  }
  // The openai contender may still be sleeping inside the SDK.
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
