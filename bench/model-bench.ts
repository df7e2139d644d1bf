// npm run bench:model [-- --json] [--latency-ms 300] [--concurrency 8] [--sizes demo,1000,<catalog.json>] [--modes batched,unbatched]
//                       [--max-output-tokens 900] [--page-concurrency N] [--cold | --learned] [--page-fixed-point on|off]
// Model sweeps (all three agents model-backed, model review) of the demo catalog and a generated one on a
// throwaway dev server, the worker in its own process (compiled code), against the fake provider answering
// after --latency-ms: batched (the default modelBatch) and unbatched ({entities: 1}). Beside each, a plain
// in-process loop making the same calls (same batching, limits, latency and concurrency) without Temporal.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { generateCatalog } from '../scripts/generate-catalog';
import { convertPublicSchema } from '../eval/public-schema';
import { applyChange } from '../catalog/entity-repairs';
import { CatalogFile, type CatalogEntity } from '../domain/catalog';
import { proposalId } from '../domain/digest';
import { inPart, type PagePart } from '../domain/ids';
import type { AgentName, Outcome, Proposal, ProposalChange } from '../domain/proposal';
import type { SweepReport, TokenTotals } from '../domain/report';
import { effectivePageSize, parseSweepInput, type EndpointConfig, type SweepConfig } from '../domain/sweep';
import { createCatalogContext, type CatalogContext } from '../judgment/catalog-context';
import type { Neighbours } from '../judgment/description-evidence';
import { mechanicalReview } from '../judgment/gate/mechanical-gate';
import type { CallOptions, TokenCount } from '../llm/client';
import { startFakeProvider, type FakeProvider } from '../fakes/provider';
import { Pacer } from '../llm/pacer';
import {
  batchEntities,
  estimateEntityTokens,
  type EntityCost,
  needsModelCall,
  proposeBatchWithModel,
  proposeOnEvidence,
  proposeWithModel,
  AGENT_TASK,
} from '../activities/model/model-agents';
import {
  describeTargets,
  entityEvidence,
  knownNear,
  reviewBatchWithModel,
  reviewOnEvidence,
  reviewWithModel,
} from '../activities/model/model-review';
import { OutputCalibration, scaleOutput } from '../activities/model/calibration';
import { sendPlannedBatches, type BatchPlan } from '../workflows/lead-batches';
import { ROOT, startDevServer, startBenchWorker, killTree, cpuMs, pageFixedPointArg } from './support';

const KEY_ENV = 'ARGUS_BENCH_FAKE_KEY';
// The fake provider reads no key; the worker only needs the variable apiKeyEnv names to be set.
const KEY_VALUE = 'bench-fake-key-not-a-secret';
const SCENARIO = 'ok';
const REVIEWER = 'correct';
const MODES = ['batched', 'unbatched'] as const;
type Mode = (typeof MODES)[number];
const TARGETS = { callsPerEntityMax: 0.5, tokensReductionMin: 3, ratioMax: 1.2 } as const;

interface Usage {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  byAgent: Record<string, TokenTotals>;
}

interface LoopResult extends Usage {
  wallMs: number;
  approved: number;
  rejected: number;
  written: number;
  /** Calls the pacer (llm/pacer.ts) held back on the provider's x-ratelimit headers, and for how long in all. */
  pacedCalls: number;
  pacedMs: number;
}

interface ModeResult {
  entities: number;
  calls: number;
  callsPerEntity: number;
  promptTokensPerEntity: number;
  completionTokensPerEntity: number;
  wallMs: number;
  inProcessWallMs: number;
  ratio: number;
  promptTokens: number;
  completionTokens: number;
  /** The sweep's report.modelUsage.byAgent (`review` is the Arbiter's model review). */
  byAgent: Record<string, TokenTotals>;
  /** What the fake provider counted during the sweep, and whether the report's modelUsage agrees. */
  fakeProvider: { calls: number; promptTokens: number; completionTokens: number; counterResets: number };
  countsMatch: boolean;
  sweep: { approved: number; rejected: number; notReviewed: number; written: number; partial: boolean };
  /**
   * CPU time used during the sweep by the worker, the dev server and this process (the fake provider and the
   * client), and during the loop by this process (the loop and the fake provider). 2 cores: at most 2 × wall.
   */
  cpuMs: { sweepWorker: number; sweepServer: number; sweepBench: number; loopBench: number };
  inProcess: {
    calls: number;
    callsPerEntity: number;
    promptTokensPerEntity: number;
    completionTokensPerEntity: number;
    promptTokens: number;
    completionTokens: number;
    byAgent: Record<string, TokenTotals>;
    approved: number;
    rejected: number;
    written: number;
    pacedCalls: number;
    pacedMs: number;
  };
  /** The sweep approved and wrote what the loop did, with the same number of calls. */
  sameAsLoop: boolean;
  /** What the fresh worker's first sweep (the demo catalog, the warm-up) took; absent with --cold. */
  coldStart?: { catalog: 'demo'; wallMs: number };
}

/** Requests the fake provider receives on one endpoint between resets of its counters. */
const ROLLOVER_CALLS = 500;

/**
 * What the fake provider received on one endpoint during a run, its counters folded in and reset every
 * ROLLOVER_CALLS requests: its x-ratelimit-remaining-requests is 1,000 less the requests since the last reset
 * (not per minute), so past 1,000 calls in one run every answer would say "0 left, reset in 1 s" and the
 * pacer (sweep and loop alike) would hold each call ~1 s. Requests and tokens are counted as a request
 * arrives, so none is lost across a reset.
 */
class FakeTally {
  private calls = 0;
  private promptTokens = 0;
  private completionTokens = 0;
  private resets = 0;
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly fp: FakeProvider,
    private readonly key: string,
  ) {}
  private fold(): void {
    const s = this.fp.stats()[this.key];
    this.fp.reset();
    if (!s) return;
    this.calls += s.calls;
    this.promptTokens += s.promptTokens;
    this.completionTokens += s.completionTokens;
  }
  start(): void {
    this.fp.reset();
    this.timer = setInterval(() => {
      if ((this.fp.stats()[this.key]?.calls ?? 0) >= ROLLOVER_CALLS) {
        this.fold();
        this.resets++;
      }
    }, 50);
  }
  stop(): { calls: number; promptTokens: number; completionTokens: number; counterResets: number } {
    clearInterval(this.timer);
    this.fold();
    const t = { calls: this.calls, promptTokens: this.promptTokens, completionTokens: this.completionTokens };
    return { ...t, counterResets: this.resets };
  }
}

/** A catalog in memory, with its context, and its entities by id as the neighbours loadNeighbours would read. */
function inMemory(text: string) {
  const cat = CatalogFile.parse(JSON.parse(text));
  const entities = cat.entities as CatalogEntity[];
  const ctx: CatalogContext = createCatalogContext(entities.map((e) => e.id));
  const byId = new Map(entities.map((e) => [e.id, e]));
  const neighbours: Neighbours = { get: (id) => byId.get(id) };
  return { cat, entities, ctx, byId, neighbours };
}

/** One answered call's tokens, added to the totals and to its agent's. */
function countUsage(u: Usage, agent: string, t: TokenCount): void {
  u.calls++;
  u.promptTokens += t.promptTokens;
  u.completionTokens += t.completionTokens;
  const a = (u.byAgent[agent] ??= { calls: 0, promptTokens: 0, completionTokens: 0 });
  a.calls++;
  a.promptTokens += t.promptTokens;
  a.completionTokens += t.completionTokens;
}

/** A counting semaphore, the loop's stand-in for the endpoint's maxInFlight slots in the worker. */
class Slots {
  private queue: (() => void)[] = [];
  private inUse = 0;
  constructor(private readonly size: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inUse >= this.size) await new Promise<void>((r) => this.queue.push(r));
    else this.inUse++;
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.inUse--;
    }
  }
}

/** At most `limit` items at once, taken in order: what the workflows' pool() does. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (i < items.length) await fn(items[i++] as T);
    }),
  );
}

/** The page's parts in the order the sweep runs them with pageFixedPoint (workflows/sweep/pages.ts). */
const LOOP_PARTS: readonly PagePart[] = ['lineage', 'evidence', 'pii'];

/**
 * The sweep's model work without Temporal, on the catalog in memory: pages as the sweep reads them (the same
 * page size, `cfg.concurrency` pages at once); per page every agent on the entities needsModelCall selects, in
 * batches planned as planModelBatches plans them (one entity per call unbatched), an entity a batch answer lacks
 * asked alone; the mechanical gate; the model review of what it passes, batched the same way; approved changes
 * applied; with pageFixedPoint, part by part as the sweep does. Every call goes through one `maxInFlight` limiter
 * and a pacer, as in the worker.
 */
async function inProcessLoop(
  text: string,
  cfg: SweepConfig,
  env: NodeJS.ProcessEnv,
  // As the worker plans batches: on what answers so far took of their output reserve (activities/model/calibration).
  calibration: OutputCalibration,
): Promise<LoopResult> {
  const t0 = performance.now();
  const { cat, entities, ctx, byId, neighbours } = inMemory(text);
  const endpoint = cfg.endpoints[0]!;
  const batched = cfg.modelBatch.entities > 1;
  const limits = {
    maxEntities: cfg.modelBatch.entities,
    promptTokens: cfg.modelBatch.promptTokens,
    outputTokens: Math.min(...cfg.endpoints.map((e) => e.maxOutputTokens)),
  };
  const slots = new Slots(endpoint.maxInFlight);
  const pacer = new Pacer();
  const models = cfg.endpoints.map((e) => e.model);
  const r: LoopResult = {
    wallMs: 0,
    calls: 0,
    promptTokens: 0,
    completionTokens: 0,
    byAgent: {},
    approved: 0,
    rejected: 0,
    written: 0,
    pacedCalls: 0,
    pacedMs: 0,
  };
  const options = (agent: string, used?: (completionTokens: number) => void): CallOptions => ({
    endpoint,
    env,
    pacer,
    onWait: (ms) => {
      r.pacedCalls++;
      r.pacedMs += ms;
    },
    onUsage: (t: TokenCount) => {
      used?.(t.completionTokens);
      countUsage(r, agent, t);
    },
  });

  /** What planModelBatches returns, on this loop's calibration: the wanted entities not yet sent, batched. */
  function planLike(
    task: AgentName | 'review',
    wanted: CatalogEntity[],
    sent: CatalogEntity[],
    cost: (e: CatalogEntity) => EntityCost,
  ): BatchPlan<CatalogEntity> {
    const scale = calibration.scale(models, task);
    const rest = sent.length ? wanted.filter((e) => !sent.includes(e)) : wanted;
    return {
      batches: batchEntities(rest, (e) => scaleOutput(cost(e), scale), limits),
      provisional: !calibration.known(models, task),
    };
  }

  /**
   * One task's batched calls on a page: planned as planModelBatches plans them, sent as the workflows send them
   * (workflows/lead-batches.ts), every answer teaching the calibration. Returns the entity ids answers lacked.
   */
  async function sendLikeWorkflow<A extends { missing: string[]; cutShort?: boolean }>(
    task: AgentName | 'review',
    wanted: CatalogEntity[],
    cost: (e: CatalogEntity) => EntityCost,
    call: (batch: CatalogEntity[], o: CallOptions) => Promise<A>,
    take: (answer: A) => void,
  ): Promise<string[]> {
    const lacking: string[] = [];
    // Each entity's cost is worked out once: the plans and the reserve an answer is measured against share it.
    const costs = new Map<CatalogEntity, EntityCost>();
    const costOf = (e: CatalogEntity): EntityCost => {
      let c = costs.get(e);
      if (!c) costs.set(e, (c = cost(e)));
      return c;
    };
    const plan = (sent: CatalogEntity[]) => planLike(task, wanted, sent, costOf);
    await sendPlannedBatches(
      plan([]),
      async (sent) => plan(sent),
      (batches) =>
        pool(batches, cfg.modelConcurrency, async ({ items: batch }) => {
          let used = 0;
          const answer = await slots.run(() =>
            call(
              batch,
              options(task, (n) => (used += n)),
            ),
          );
          const reserved = batch.reduce((n, e) => n + costOf(e).output, 0);
          calibration.record(endpoint.model, task, used, reserved, answer.cutShort === true);
          take(answer);
          lacking.push(...answer.missing);
        }),
    );
    return lacking;
  }

  async function agentOnPage(agent: AgentName, page: CatalogEntity[], out: Proposal[]): Promise<void> {
    const describing = agent === 'description-drafter';
    const keep = (entityId: string, changes: ProposalChange[]) => {
      for (const change of changes)
        out.push({ id: proposalId(cat.name, entityId, change), entityId, agent, change, evidence: [] });
    };
    let alone = page;
    if (batched) {
      const wanted = page.filter((e) => needsModelCall(agent, e, ctx, describing ? neighbours : undefined));
      const cost = (e: CatalogEntity) => estimateEntityTokens(agent, e, ctx, describing ? neighbours : undefined);
      const lacking = await sendLikeWorkflow(
        agent,
        wanted,
        cost,
        (batch, o) =>
          proposeBatchWithModel(
            agent,
            batch.map((entity) => ({ entity, ...(describing ? { neighbours } : {}) })),
            ctx,
            o,
          ),
        (answer) => {
          for (const [entityId, changes] of answer.byEntity) keep(entityId, changes);
        },
      );
      alone = lacking.sort().map((id) => byId.get(id)!);
    }
    // proposeWithModel makes no call for an entity needsModelCall skips, as modelAgentOnEntity.
    await pool(alone, cfg.modelConcurrency, async (entity) => {
      const changes = await slots.run(() =>
        proposeWithModel(agent, entity, ctx, options(agent), describing ? neighbours : undefined),
      );
      keep(entity.id, changes);
    });
  }

  async function reviewPage(proposals: Proposal[]): Promise<Outcome[]> {
    // The gate as reviewPageMechanically runs it; in model mode what it approves goes to the model.
    const passed = new Map<string, Proposal[]>();
    for (const p of proposals) {
      if (mechanicalReview(p, byId.get(p.entityId), ctx, neighbours).decision === 'rejected') r.rejected++;
      else passed.set(p.entityId, [...(passed.get(p.entityId) ?? []), p]);
    }
    const outcomes: Outcome[] = [];
    const ids = [...passed.keys()].sort();
    let alone = ids;
    if (batched) {
      const cost = (e: CatalogEntity) => estimateEntityTokens('review', e, ctx, neighbours, passed.get(e.id) ?? []);
      const wanted = ids.map((id) => byId.get(id)!);
      const lacking = await sendLikeWorkflow(
        'review',
        wanted,
        cost,
        (batch, o) =>
          reviewBatchWithModel({
            items: batch.map((entity) => ({ entity, neighbours })),
            ctx,
            proposals: batch.flatMap((e) => passed.get(e.id) ?? []),
            ...o,
          }),
        (answer) => outcomes.push(...answer.outcomes),
      );
      alone = lacking.sort();
    }
    await pool(alone, cfg.modelConcurrency, async (id) => {
      outcomes.push(
        ...(await slots.run(() =>
          reviewWithModel({
            entity: byId.get(id)!,
            ctx,
            neighbours,
            proposals: passed.get(id) ?? [],
            ...options('review'),
          }),
        )),
      );
    });
    return outcomes;
  }

  const pageSize = effectivePageSize(cfg.pageSize, entities.length);
  const pageCount = Math.ceil(entities.length / pageSize);
  let cursor = 0;
  const lanes = Array.from({ length: Math.min(cfg.concurrency, pageCount) }, async () => {
    while (cursor < pageCount) {
      const index = cursor++;
      const page = entities.slice(index * pageSize, (index + 1) * pageSize);
      // As the sweep does (workflows/sweep/pages.ts): with pageFixedPoint, the page's parts one after another in the
      // order evidence flows, each reviewed and written before the next part's agents read the page; otherwise every
      // agent at once and one review.
      const parts = cfg.pageFixedPoint
        ? LOOP_PARTS.map((part) => cfg.agents.filter((a) => inPart(part, a)))
        : [cfg.agents];
      for (const agents of parts) {
        if (agents.length === 0) continue;
        const proposals: Proposal[] = [];
        await Promise.all(agents.map((agent) => agentOnPage(agent, page, proposals)));
        // The ledger keeps one proposal per id.
        const unique = [...new Map(proposals.map((p) => [p.id, p])).values()];
        if (unique.length === 0) continue;
        const verdicts = new Map((await reviewPage(unique)).map((o) => [o.proposalId, o.decision]));
        for (const p of unique) {
          const decision = verdicts.get(p.id);
          if (decision === 'rejected') r.rejected++;
          if (decision !== 'approved') continue;
          r.approved++;
          if (applyChange(byId.get(p.entityId)!, p.change, p.id, cfg.overwriteHumanText).status === 'written')
            r.written++;
        }
      }
    }
  });
  await Promise.all(lanes);
  r.wallMs = performance.now() - t0;
  return r;
}

/**
 * The reference the issue's token target names, "one call per entity and agent", as ARGUS made its calls before
 * batching and trimming: every agent asked about every entity alone, each call stating its own instructions and
 * carrying the entity's full evidence (entityEvidence; describe also says what to describe, lineage its candidate
 * entities), then one review call per entity, on the full evidence, for what the mechanical gate passes. Counted,
 * not timed: run against a provider without latency, which tokens do not depend on.
 */
async function referenceLoop(
  text: string,
  cfg: SweepConfig,
  endpoint: EndpointConfig,
  env: NodeJS.ProcessEnv,
): Promise<Usage & { entities: number; approved: number; written: number }> {
  const { cat, entities, ctx, byId, neighbours } = inMemory(text);
  const r: Usage = { calls: 0, promptTokens: 0, completionTokens: 0, byAgent: {} };
  const options = (agent: string): CallOptions => ({
    endpoint,
    env,
    onUsage: (t: TokenCount) => countUsage(r, agent, t),
  });
  const proposals: Proposal[] = [];
  await pool(entities, cfg.modelConcurrency, async (entity) => {
    const full = entityEvidence(entity, ctx, neighbours);
    for (const agent of cfg.agents) {
      const evidence =
        AGENT_TASK[agent] === 'describe'
          ? { ...full, toDescribe: describeTargets(entity, ctx, neighbours) }
          : AGENT_TASK[agent] === 'check_lineage'
            ? { ...full, knownEntities: knownNear(entity, ctx) }
            : full;
      for (const change of await proposeOnEvidence(agent, entity, evidence, options(agent)))
        proposals.push({
          id: proposalId(cat.name, entity.id, change),
          entityId: entity.id,
          agent,
          change,
          evidence: [],
        });
    }
  });
  const passed = new Map<string, Proposal[]>();
  for (const p of new Map(proposals.map((q) => [q.id, q])).values())
    if (mechanicalReview(p, byId.get(p.entityId), ctx, neighbours).decision !== 'rejected')
      passed.set(p.entityId, [...(passed.get(p.entityId) ?? []), p]);
  let approved = 0;
  let written = 0;
  await pool([...passed.keys()].sort(), cfg.modelConcurrency, async (id) => {
    const entity = byId.get(id)!;
    const mine = passed.get(id)!;
    for (const o of await reviewOnEvidence(entityEvidence(entity, ctx, neighbours), mine, options('review'))) {
      if (o.decision !== 'approved') continue;
      approved++;
      const p = mine.find((q) => q.id === o.proposalId)!;
      if (applyChange(entity, p.change, p.id, cfg.overwriteHumanText).status === 'written') written++;
    }
  });
  return { ...r, entities: entities.length, approved, written };
}

/** A worker process on compiled code, polling its own task queue, with the fake key in its environment. */
function startWorker(address: string, taskQueue: string, stateDir: string): Promise<ChildProcess> {
  return startBenchWorker({ address, taskQueue, stateDir, env: { [KEY_ENV]: KEY_VALUE } });
}

/**
 * A catalog of `--sizes` as its file text: `demo`, a number of generated entities, or a catalog file (ARGUS's
 * JSON catalog, or a labelled public schema as in shared/testdata/public-schemas, converted).
 */
function catalogText(size: string): string {
  if (size === 'demo') return readFileSync(path.join(ROOT, 'catalog', 'demo', 'shop-warehouse.json'), 'utf8');
  if (isCatalogPath(size)) {
    const json: unknown = JSON.parse(readFileSync(size, 'utf8'));
    const asCatalog = CatalogFile.safeParse(json);
    if (asCatalog.success) return JSON.stringify(json);
    if (json && typeof json === 'object' && 'tables' in json)
      return JSON.stringify(convertPublicSchema(json, size).catalog);
    const issue = asCatalog.error.issues[0];
    throw new Error(
      `--sizes: ${size} is not an ARGUS catalog file (${issue?.path.join('.') || 'root'}: ${issue?.message})`,
    );
  }
  const n = Number(size);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--sizes: demo, a number of entities or a catalog file (*.json), not "${size}"`);
  // Kept as generated: 90 % of the descriptions are marked as written by ARGUS.
  return JSON.stringify(generateCatalog({ entities: n, seed: 42, name: `bench-${size}` }));
}

const isCatalogPath = (size: string): boolean => size.endsWith('.json') || size.includes('/');

/** How a catalog of `--sizes` is named in ids, folders and the JSON: a file by its base name. */
const catalogLabel = (size: string): string => (isCatalogPath(size) ? path.basename(size, '.json') : size);

function numberArg(flag: string, dflt: number, min: number, max: number): number {
  const i = process.argv.indexOf(flag);
  if (i < 0) return dflt;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${flag}: an integer from ${min} to ${max}`);
  return v;
}

/** CPU time (user + system) this process used since `from`, in milliseconds. */
function benchCpu(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const latencyMs = numberArg('--latency-ms', 300, 0, 600_000);
  // modelConcurrency (at most 32) and maxInFlight of the endpoint are the same figure here.
  const concurrency = numberArg('--concurrency', 8, 1, 32);
  // The endpoint's answer budget (EndpointConfig's default 900) bounds how many entities a batch may hold.
  const maxOutputTokens = numberArg('--max-output-tokens', 900, 16, 32000);
  // Pages in flight (the sweep's `concurrency`, and the loop's); absent: the sweep's default.
  const pIdx = process.argv.indexOf('--page-concurrency');
  const pages = pIdx >= 0 ? numberArg('--page-concurrency', 4, 1, 64) : undefined;
  // Each worker sweeps the demo once before it is measured, and the loop runs it once (--cold: neither).
  const warmUp = !process.argv.includes('--cold');
  // --learned: the warm-up sweeps use the measured model, so the measured sweep and loop plan their batches on what
  // the warm-up's answers taught (as a nightly sweep does from its second night); by default they start cold.
  const learned = process.argv.includes('--learned');
  if (learned && !warmUp) throw new Error('--learned needs the warm-up that --cold leaves out');
  const sIdx = process.argv.indexOf('--sizes');
  const sizes = (sIdx >= 0 && process.argv[sIdx + 1] ? process.argv[sIdx + 1]! : 'demo,1000').split(',');
  if (new Set(sizes.map(catalogLabel)).size !== sizes.length)
    throw new Error(`--sizes: two catalogs would have the same name (${sizes.map(catalogLabel).join(', ')})`);
  const texts = new Map(sizes.map((s) => [s, catalogText(s)]));
  const mIdx = process.argv.indexOf('--modes');
  const modes = (mIdx >= 0 && process.argv[mIdx + 1] ? process.argv[mIdx + 1]! : MODES.join(',')).split(',') as Mode[];
  for (const m of modes)
    if (!MODES.includes(m)) throw new Error(`--modes: ${MODES.join(' and/or ')}, comma-separated, not "${m}"`);
  const say = (s: string) => process.stderr.write(s + '\n');

  say('bench:model: building (npm run build)…');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const fp: FakeProvider = await startFakeProvider({ port: 0, latencyMs });
  const endpointKey = fp.endpointKey(SCENARIO, REVIEWER);
  // The reference's calls are counted, not timed: a provider of their own, without latency.
  const counting: FakeProvider = await startFakeProvider({ port: 0, latencyMs: 0 });
  const countingKey = counting.endpointKey(SCENARIO, REVIEWER);
  const endpoint: EndpointConfig = {
    id: 'fake',
    baseUrl: fp.baseUrl(SCENARIO, REVIEWER),
    model: 'fake-model',
    apiKeyEnv: KEY_ENV,
    structuredOutput: 'json_schema',
    maxOutputTokens,
    timeoutMs: 60_000,
    maxInFlight: concurrency,
  };
  // Warm-up runs use another model name: calibration is per model, so the measured runs start without any
  // (--learned: the measured model, so they start with what the warm-up taught).
  const warmupEndpoint: EndpointConfig = learned ? endpoint : { ...endpoint, model: 'warmup-model' };
  const demoText = texts.get('demo') ?? catalogText('demo');
  const warmupDir = mkdtempSync(path.join(os.tmpdir(), 'argus-bench-warmup-'));
  let warmups = 0;
  const warmupCatalog = () => {
    const file = path.join(warmupDir, `demo-${++warmups}.json`);
    writeFileSync(file, demoText);
    return file;
  };
  let loopWarm = false;
  const server = await startDevServer();
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const catalogs: Record<string, Record<string, unknown>> = {};
  const met: Record<string, Record<string, boolean>> = {};
  let batchLimits: SweepConfig['modelBatch'] | undefined;
  let pageConcurrency = 0;
  const lines: string[] = [];
  try {
    for (const size of sizes) {
      const text = texts.get(size)!;
      const label = catalogLabel(size);
      const results: Partial<Record<Mode, ModeResult>> = {};
      // The reference reads the agents, concurrency and overwrite rule of the sweeps' input (not its batching).
      let sizeCfg: SweepConfig | undefined;
      for (const mode of modes) {
        const dir = mkdtempSync(path.join(os.tmpdir(), `argus-bench-model-${label}-`));
        const file = path.join(dir, 'catalog.json');
        writeFileSync(file, text);
        const input = {
          catalog: { kind: 'file' as const, path: file },
          review: 'model' as const,
          agentBackend: 'model' as const,
          endpoints: [endpoint],
          modelConcurrency: concurrency,
          ...(pages !== undefined ? { concurrency: pages } : {}),
          ...(mode === 'unbatched' ? { modelBatch: { entities: 1 } } : {}),
          ...pageFixedPointArg(),
        };
        const parsed = parseSweepInput(input);
        if (!parsed.ok) throw new Error(parsed.message);
        const cfg = parsed.value;
        sizeCfg = cfg;
        if (mode === 'batched') batchLimits = cfg.modelBatch;
        pageConcurrency = cfg.concurrency;

        // A task queue per worker process: no task can go to a poll a previous (stopped) worker left.
        const taskQueue = `bench-model-${Date.now()}-${label}-${mode}`;
        const worker = await startWorker(server.address, taskQueue, path.join(dir, 'state'));
        // A warm worker, as a long-lived one is: a sweep of the demo catalog first, on another model name, so the
        // measured sweep's calibration (per model and task, in memory and in the state store) starts cold; with
        // --learned on the measured model, so it starts from what this sweep's answers taught.
        let coldWallMs: number | undefined;
        if (warmUp) {
          const t = performance.now();
          await client.workflow.execute('sweepWorkflow', {
            taskQueue,
            workflowId: `sweep/bench-warmup-${label}-${mode}/${Date.now()}`,
            args: [
              { ...input, catalog: { kind: 'file' as const, path: warmupCatalog() }, endpoints: [warmupEndpoint] },
            ],
          });
          coldWallMs = Math.round(performance.now() - t);
          say(`bench:model: a fresh worker's first sweep (demo, warm-up) took ${coldWallMs} ms`);
        }
        say(`bench:model: sweeping ${label} (${mode})…`);
        const tally = new FakeTally(fp, endpointKey);
        tally.start();
        let report: SweepReport;
        let wallMs: number;
        let cpu0: { worker: number; server: number; bench: NodeJS.CpuUsage };
        let sweepCpu: { worker: number; server: number; bench: number };
        try {
          cpu0 = { worker: cpuMs(worker.pid!), server: cpuMs(server.pid), bench: process.cpuUsage() };
          const t0 = performance.now();
          report = (await client.workflow.execute('sweepWorkflow', {
            taskQueue,
            workflowId: `sweep/bench-model-${label}-${mode}/${Date.now()}`,
            args: [input],
          })) as SweepReport;
          wallMs = performance.now() - t0;
          sweepCpu = {
            worker: cpuMs(worker.pid!) - cpu0.worker,
            server: cpuMs(server.pid) - cpu0.server,
            bench: benchCpu(cpu0.bench),
          };
        } finally {
          await killTree(worker);
        }
        const seen = tally.stop();
        const u = report.modelUsage;
        // The report counts answered calls only: equal requests mean every request was answered.
        const countsMatch =
          u.calls === seen.calls &&
          u.promptTokens === seen.promptTokens &&
          u.completionTokens === seen.completionTokens;
        if (!countsMatch)
          say(
            `bench:model: WARNING ${label} ${mode}: the report counts ${u.calls} calls, ${u.promptTokens}+${u.completionTokens} tokens; ` +
              `the fake provider ${seen.calls} requests, ${seen.promptTokens}+${seen.completionTokens} tokens`,
          );

        // Each mode's loop plans on what its own warm-up taught, as each mode's worker does (nothing of the measured
        // model unless --learned: calibration is per model).
        const loopCalibration = new OutputCalibration();
        if (warmUp && (learned || !loopWarm)) {
          await inProcessLoop(
            demoText,
            { ...cfg, endpoints: [warmupEndpoint] },
            { [KEY_ENV]: KEY_VALUE },
            loopCalibration,
          );
          loopWarm = true;
        }
        say(`bench:model: in-process loop ${label} (${mode})…`);
        const loopTally = new FakeTally(fp, endpointKey);
        loopTally.start();
        const loopCpu0 = process.cpuUsage();
        const loop = await inProcessLoop(text, cfg, { [KEY_ENV]: KEY_VALUE }, loopCalibration);
        const loopCpu = benchCpu(loopCpu0);
        const loopSeen = loopTally.stop();
        if (loopSeen.calls !== loop.calls || loopSeen.promptTokens !== loop.promptTokens)
          say(
            `bench:model: WARNING ${label} ${mode}: the loop counted ${loop.calls} calls, the fake provider ${loopSeen.calls}`,
          );
        if (!process.env.ARGUS_BENCH_KEEP) rmSync(dir, { recursive: true, force: true });

        const n = report.entities.requested;
        const per = (x: number, digits: number) => round(x / n, digits);
        const sweep = {
          approved: report.outcomes.approved,
          rejected: report.outcomes.rejected,
          notReviewed: report.outcomes.not_reviewed,
          written: report.written,
          partial: report.partial,
        };
        const result: ModeResult = {
          entities: n,
          calls: u.calls,
          callsPerEntity: per(u.calls, 3),
          promptTokensPerEntity: per(u.promptTokens, 1),
          completionTokensPerEntity: per(u.completionTokens, 1),
          wallMs: Math.round(wallMs),
          inProcessWallMs: Math.round(loop.wallMs),
          ratio: round(wallMs / loop.wallMs, 2),
          promptTokens: u.promptTokens,
          completionTokens: u.completionTokens,
          byAgent: u.byAgent,
          fakeProvider: seen,
          countsMatch,
          sweep,
          cpuMs: {
            sweepWorker: Math.round(sweepCpu.worker),
            sweepServer: Math.round(sweepCpu.server),
            sweepBench: Math.round(sweepCpu.bench),
            loopBench: Math.round(loopCpu),
          },
          inProcess: {
            calls: loop.calls,
            callsPerEntity: per(loop.calls, 3),
            promptTokensPerEntity: per(loop.promptTokens, 1),
            completionTokensPerEntity: per(loop.completionTokens, 1),
            promptTokens: loop.promptTokens,
            completionTokens: loop.completionTokens,
            byAgent: loop.byAgent,
            approved: loop.approved,
            rejected: loop.rejected,
            written: loop.written,
            pacedCalls: loop.pacedCalls,
            pacedMs: Math.round(loop.pacedMs),
          },
          ...(coldWallMs !== undefined ? { coldStart: { catalog: 'demo' as const, wallMs: coldWallMs } } : {}),
          sameAsLoop:
            sweep.approved === loop.approved &&
            sweep.written === loop.written &&
            sweep.rejected === loop.rejected &&
            u.calls === loop.calls,
        };
        if (!result.sameAsLoop)
          say(
            `bench:model: WARNING ${label} ${mode}: the sweep approved ${sweep.approved}, rejected ${sweep.rejected}, wrote ${sweep.written} ` +
              `in ${u.calls} calls; the loop ${loop.approved}, ${loop.rejected}, ${loop.written} in ${loop.calls}`,
          );
        results[mode] = result;
        lines.push(
          `${label.padEnd(6)} ${mode.padEnd(9)} ${String(n).padStart(5)} entities  ${String(result.callsPerEntity).padStart(6)} calls/entity (${u.calls})  ` +
            `tokens/entity ${result.promptTokensPerEntity} prompt + ${result.completionTokensPerEntity} completion  ` +
            `sweep ${result.wallMs} ms  loop ${result.inProcessWallMs} ms  ratio ${result.ratio}x  ` +
            `approved ${sweep.approved}/${loop.approved}  written ${sweep.written}/${loop.written} (sweep/loop)` +
            (countsMatch ? '' : '  COUNTS DIFFER FROM THE FAKE PROVIDER'),
        );
        say(`bench:model: ${lines[lines.length - 1]!}`);
      }
      say(`bench:model: reference ${label} (one call per entity and agent, full evidence, counted without latency)…`);
      const refTally = new FakeTally(counting, countingKey);
      refTally.start();
      const ref = await referenceLoop(
        text,
        sizeCfg!,
        { ...endpoint, baseUrl: counting.baseUrl(SCENARIO, REVIEWER) },
        { [KEY_ENV]: KEY_VALUE },
      );
      const refSeen = refTally.stop();
      if (refSeen.calls !== ref.calls || refSeen.promptTokens !== ref.promptTokens)
        say(`bench:model: WARNING ${label} reference: counted ${ref.calls} calls, the fake provider ${refSeen.calls}`);
      const entityCount = ref.entities;
      const reference = {
        calls: ref.calls,
        callsPerEntity: round(ref.calls / entityCount, 3),
        promptTokensPerEntity: round(ref.promptTokens / entityCount, 1),
        completionTokensPerEntity: round(ref.completionTokens / entityCount, 1),
        promptTokens: ref.promptTokens,
        completionTokens: ref.completionTokens,
        byAgent: ref.byAgent,
        approved: ref.approved,
        written: ref.written,
      };
      const tokens = (m: { promptTokensPerEntity: number; completionTokensPerEntity: number }) =>
        m.promptTokensPerEntity + m.completionTokensPerEntity;
      lines.push(
        `${label.padEnd(6)} reference ${String(entityCount).padStart(5)} entities  ${String(reference.callsPerEntity).padStart(6)} calls/entity (${ref.calls})  ` +
          `tokens/entity ${reference.promptTokensPerEntity} prompt + ${reference.completionTokensPerEntity} completion  ` +
          `approved ${ref.approved}  written ${ref.written}  (one call per entity and agent, full evidence)`,
      );
      say(`bench:model: ${lines[lines.length - 1]!}`);
      const b = results.batched;
      const ub = results.unbatched;
      // One mode only (--modes): its figures and the reference, no comparison and no targets.
      if (!b || !ub) {
        catalogs[label] = { ...results, reference };
        continue;
      }
      const comparison = {
        tokensPerEntityReduction: round(tokens(ub) / tokens(b), 2),
        promptTokensPerEntityReduction: round(ub.promptTokensPerEntity / b.promptTokensPerEntity, 2),
        tokensPerEntityReductionFromReference: {
          batched: round(tokens(reference) / tokens(b), 2),
          unbatched: round(tokens(reference) / tokens(ub), 2),
        },
        callsPerEntity: {
          batched: b.callsPerEntity,
          unbatched: ub.callsPerEntity,
          reference: reference.callsPerEntity,
        },
      };
      catalogs[label] = { batched: b, unbatched: ub, reference, comparison };
      met[label] = {
        callsPerEntityMax: b.callsPerEntity <= TARGETS.callsPerEntityMax,
        tokensReductionMin: comparison.tokensPerEntityReduction >= TARGETS.tokensReductionMin,
        tokensReductionMinFromReference:
          comparison.tokensPerEntityReductionFromReference.batched >= TARGETS.tokensReductionMin,
        ratioMax: b.ratio <= TARGETS.ratioMax && ub.ratio <= TARGETS.ratioMax,
        ratioMaxBatched: b.ratio <= TARGETS.ratioMax,
        ratioMaxUnbatched: ub.ratio <= TARGETS.ratioMax,
      };
      lines.push(
        `${label.padEnd(6)} targets   batched calls/entity ${b.callsPerEntity} <= ${TARGETS.callsPerEntityMax}: ${met[label].callsPerEntityMax}  ` +
          `tokens/entity reduction ${comparison.tokensPerEntityReduction}x from unbatched, ` +
          `${comparison.tokensPerEntityReductionFromReference.batched}x from the reference >= ${TARGETS.tokensReductionMin}: ` +
          `${met[label].tokensReductionMin} / ${met[label].tokensReductionMinFromReference}  ` +
          `ratio ${b.ratio}x / ${ub.ratio}x <= ${TARGETS.ratioMax}: ${met[label].ratioMax}`,
      );
    }
  } finally {
    await connection.close();
    await server.stop();
    await fp.close();
    await counting.close();
    rmSync(warmupDir, { recursive: true, force: true });
  }
  const out = {
    machine: {
      cpus: os.cpus().length,
      node: process.version,
      server: 'temporal server start-dev (in-memory SQLite)',
      provider: 'fakes/provider.ts on loopback',
    },
    settings: {
      latencyMs,
      concurrency,
      pageConcurrency,
      warmUp: !warmUp
        ? 'none (--cold): every worker is measured on its first sweep'
        : learned
          ? "each worker sweeps the demo catalog once before it is measured, on the measured model (--learned: the measured sweep plans on the calibration it taught); so does each mode's loop"
          : "each worker sweeps the demo catalog once before it is measured (model 'warmup-model', so the measured sweep's calibration starts cold); the loop runs it once",
      calibration: learned ? 'learned' : 'cold',
      pageSize: 'auto (a tenth of the catalog, 100..1000)',
      scenario: SCENARIO,
      reviewer: REVIEWER,
      maxOutputTokens: endpoint.maxOutputTokens,
      modelBatch: { batched: batchLimits, unbatched: { entities: 1 } },
      agents: ['description-drafter', 'pii-classifier', 'lineage-checker'],
      // See FakeTally: the provider's counters are folded and reset every this many requests.
      fakeCountersResetEvery: ROLLOVER_CALLS,
    },
    catalogs,
    targets: {
      ...TARGETS,
      appliesTo: {
        callsPerEntityMax: 'batched callsPerEntity',
        tokensReductionMin:
          'comparison.tokensPerEntityReduction (prompt + completion tokens per entity, unbatched / batched)',
        tokensReductionMinFromReference:
          'comparison.tokensPerEntityReductionFromReference.batched (reference / batched; the reference is one call per entity and agent with the full evidence, as before batching and trimming)',
        ratioMax: 'ratio of both modes',
      },
      met,
    },
  };
  if (json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  else process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
