import { Context, log } from '@temporalio/activity';
import type { AgentName, Proposal, ProposalChange } from '../domain/proposal';
import type { EndpointConfig, SweepConfig } from '../domain/sweep';
import { FailureType, partTag, type PagePart } from '../domain/ids';
import { proposalId } from '../domain/digest';
import { BudgetExhaustedError, ProviderBurstError, ProviderError } from '../llm/errors';
import { Pacer } from '../llm/pacer';
import { type SweepLedger, type ModelCallRecord, usageDay, type FleetGate } from '../state/store';
import { storeOf, type ActivityDeps } from './sweep-context';
import { paceKey, type CallOptions, type TokenCount } from '../llm/client';
import { catalogContext } from './catalog-access';
import { nonRetryableFailure, toApplicationFailure } from './failures';
import {
  batchEntities,
  estimateEntityTokens,
  reviewOutputReserve,
  needsModelCall,
  proposeBatchWithModel,
  proposeWithModel,
} from './model/model-agents';
import { reviewBatchWithModel, reviewWithModel } from './model/model-review';
import { OutputCalibration, scaleOutput } from './model/calibration';
import { loadNeighbours } from './neighbours';
import { endpointRooms, estimateNeeds, fitPlan, oldestUnreviewedFirst, refit, type SweepPlan } from './plan';
import { judgmentSettingsOf, parseSweepInput } from '../domain/sweep';
import { previewChanges, skippedOnPage, unsettledProposals } from './incremental-activities';
import { countProposals, noMetrics, type ModelTask, type RetireReason, type SweepMetrics } from './metrics';

/**
 * Endpoints this worker has seen exhausted, per sweep: a sibling activity of the same sweep fails at once
 * instead of sending one more doomed call. Keyed by sweep, so the next sweep starts clean; the
 * authoritative state is the sweep workflow's own list of retired endpoints.
 */
const exhaustedBySweep = new Map<string, Map<string, Record<string, unknown>>>();
const MAX_SWEEPS_REMEMBERED = 500;

function rememberExhausted(sweepId: string, endpointId: string, details: Record<string, unknown>): void {
  let m = exhaustedBySweep.get(sweepId);
  if (!m) {
    if (exhaustedBySweep.size >= MAX_SWEEPS_REMEMBERED)
      exhaustedBySweep.delete(exhaustedBySweep.keys().next().value as string);
    m = new Map();
    exhaustedBySweep.set(sweepId, m);
  }
  m.set(endpointId, details);
}

function refuseIfExhausted(sweepId: string, endpoint: EndpointConfig, retired: string[]): void {
  const known = exhaustedBySweep.get(sweepId)?.get(endpoint.id);
  if (known || retired.includes(endpoint.id)) {
    throw nonRetryableFailure(
      FailureType.BudgetExhausted,
      `endpoint ${endpoint.id} is already retired for this sweep; no call made`,
      known ?? { endpointId: endpoint.id, alreadyRetired: true },
    );
  }
}

/** A counting semaphore: callers queue in order. */
class Semaphore {
  private queue: (() => void)[] = [];
  private inUse = 0;
  constructor(private readonly size: number) {}
  async acquire(): Promise<() => void> {
    if (this.inUse >= this.size) await new Promise<void>((r) => this.queue.push(r));
    else this.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next();
      else this.inUse--;
    };
  }
}

const slots = new Map<string, Semaphore>();
/** Calls in flight per sweep and endpoint in this worker: `maxInFlight` of the endpoint. */
function slotFor(sweepId: string, endpoint: EndpointConfig): Semaphore {
  const key = `${sweepId}\u0000${endpoint.id}`;
  let s = slots.get(key);
  if (!s) {
    if (slots.size > 5000) slots.clear();
    s = new Semaphore(endpoint.maxInFlight ?? 1);
    slots.set(key, s);
  }
  return s;
}

/** How a failed call is counted: `(sweep, endpoint, error)`. */
type FailureCount = (sweepId: string, endpoint: EndpointConfig, err: ProviderError) => void;

/**
 * Failed calls counted by kind; one the workflow's rotation retires the endpoint for (a spent budget, a burst on
 * the last attempt the retry policy allows) counts as a retirement too, once per sweep and endpoint.
 */
function failureCounter(metrics: SweepMetrics): FailureCount {
  const counted = new Set<string>();
  const retire = (sweepId: string, endpointId: string, reason: RetireReason) => {
    const key = `${sweepId}\u0000${endpointId}`;
    if (counted.has(key)) return;
    if (counted.size >= MAX_SWEEPS_REMEMBERED * 4) counted.delete(counted.values().next().value as string);
    counted.add(key);
    metrics.endpointRetired(endpointId, reason);
  };
  return (sweepId, endpoint, err) => {
    metrics.modelCallFailed(endpoint.id, err.kind);
    if (err instanceof BudgetExhaustedError) {
      metrics.endpointExhausted(endpoint.id, err.window ?? 'unknown');
      retire(sweepId, endpoint.id, 'exhausted');
    } else if (err instanceof ProviderBurstError) {
      const { attempt, retryPolicy } = Context.current().info;
      const max = retryPolicy?.maximumAttempts;
      if (max && attempt >= max) retire(sweepId, endpoint.id, 'persistent_throttling');
    }
  };
}

async function withProviderErrors<T>(
  sweepId: string,
  endpoint: EndpointConfig,
  retired: string[],
  fleet: FleetGate | undefined,
  countFailure: FailureCount,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  // Every activity heartbeats while it runs (activities/heartbeat.ts), queueing and pacing waits included; the
  // context's signal lets a cancellation reach the request.
  const ctx = Context.current();
  const release = await slotFor(sweepId, endpoint).acquire();
  // With a shared state store the endpoint's in-flight limit holds for the sweep across every worker.
  let releaseFleet: (() => Promise<void>) | undefined;
  try {
    releaseFleet = await fleet?.acquireSlot(
      `inflight:${sweepId}:${endpoint.id}`,
      endpoint.maxInFlight ?? 1,
      () => ctx.heartbeat(),
      ctx.cancellationSignal,
    );
    // Checked again after the wait: the call ahead of this one (on any worker) may have found the quota spent.
    refuseIfExhausted(sweepId, endpoint, retired);
    const known = await fleet?.exhausted(sweepId, endpoint.id);
    if (known) {
      rememberExhausted(sweepId, endpoint.id, known);
      refuseIfExhausted(sweepId, endpoint, retired);
    }
    return await fn(ctx.cancellationSignal);
  } catch (err) {
    if (err instanceof ProviderError) {
      log.warn('model call failed', {
        endpoint: endpoint.id,
        kind: err.kind,
        status: err.status,
        requestId: err.requestId,
        body: err.body,
      });
      countFailure(sweepId, endpoint, err);
      if (err instanceof BudgetExhaustedError) {
        rememberExhausted(sweepId, endpoint.id, err.toDetails());
        await fleet
          ?.markExhausted(sweepId, endpoint.id, err.toDetails())
          .catch((e: unknown) => log.warn('could not share a spent quota with the fleet', { error: String(e) }));
      }
    }
    throw toApplicationFailure(err);
  } finally {
    await releaseFleet?.();
    release();
  }
}

/**
 * planSweep's input: the sweep's config as its workflow parsed it. A plan scheduled by a workflow from before the
 * workflows parsed once (still retrying when its worker was upgraded) carries the raw input (`sweep`) instead,
 * which that workflow had validated.
 */
type PlanSweepInput = { config: SweepConfig; ledgerKey?: string } | { sweep: unknown; ledgerKey?: string };

function configOf(input: PlanSweepInput): SweepConfig {
  if ('config' in input) return input.config;
  const parsed = parseSweepInput(input.sweep);
  // Its workflow parsed this input before it scheduled the plan: failing here is a bug, never bad input.
  if (!parsed.ok) throw new Error(`planSweep: an input its workflow accepted does not parse: ${parsed.message}`);
  return parsed.value;
}

/** Activities that call a model: one call per activity, so Temporal's retry policy is the only retry loop. */
export function createModelActivities(deps: ActivityDeps & { env?: NodeJS.ProcessEnv }) {
  const store = storeOf(deps);
  const fleet = store.fleet;
  const pacer = new Pacer(fleet);
  const env = deps.env ?? process.env;
  const metrics = deps.metrics ?? noMetrics;
  const countFailure = failureCounter(metrics);
  // What batch answers take of their output reserve, per model and agent: as this worker has seen them, and as the
  // state store holds them (an earlier run's, another worker's).
  const calibration = new OutputCalibration();

  /** Before planning: ratios the store holds for models this worker does not know yet (a read failure is no loss). */
  async function adoptShared(models: string[], task: string): Promise<void> {
    if (models.length === 0 || calibration.known(models, task)) return;
    try {
      const found = await store.calibration.load(models.map((m) => OutputCalibration.key(m, task)));
      for (const m of models) {
        const ratios = found[OutputCalibration.key(m, task)];
        if (ratios) calibration.adopt(m, task, ratios);
      }
    } catch (e) {
      log.warn('could not read the shared output calibration', { error: String(e) });
    }
  }

  /** One batch answer learnt, here and in the store (a write failure costs only the sharing). */
  async function learn(model: string, task: string, used: number, reserved: number, cutShort: boolean) {
    calibration.record(model, task, used, reserved, cutShort);
    const ratios = calibration.ratios(model, task);
    if (ratios.length === 0) return;
    await store.calibration
      .save(OutputCalibration.key(model, task), ratios)
      .catch((e: unknown) => log.warn('could not share the output calibration', { error: String(e) }));
  }

  /** The sweep's ledger and catalog, and the one entity a model call is about (EntityInvalid if unreadable). */
  async function open(ledgerKey: string, entityId: string, withNeighbours = false) {
    const ledger = storeOf(deps).ledger(ledgerKey);
    const meta = await ledger.meta();
    const catalog = await deps.catalogs(meta.catalogRef);
    const entity = (await catalog.getEntities([entityId])).entities[0];
    if (!entity) {
      throw nonRetryableFailure(FailureType.EntityInvalid, `entity ${entityId} not readable`);
    }
    const ctx = await catalogContext(catalog);
    // The entities it reads: what inherited and derived descriptions rest on, for the prompt.
    const neighbours = withNeighbours ? await loadNeighbours(catalog, [entity], ctx) : undefined;
    return { ledger, meta, ctx, entity, neighbours };
  }

  /** What every model call of an activity passes through: this worker's key environment and pacer, heartbeats while waiting. */
  const callOptions = (
    endpoint: EndpointConfig,
    signal: AbortSignal,
    onUsage: (t: TokenCount) => void,
    onKept?: (digest: string) => void,
  ): CallOptions => ({
    ...(onKept ? { onKept } : {}),
    endpoint,
    env,
    pacer,
    signal,
    onWait: () => Context.current().heartbeat(),
    // A request answered before, by any worker of the store, is not sent again (llm/client.ts requestDigest).
    answers: store.answers,
    onUsage: (t) => {
      onUsage(t);
      if (t.remembered) return;
      // What the answer's x-ratelimit headers said is left (the pacer keeps it under the provider key).
      const left = pacer.known(paceKey(endpoint));
      if (left?.remainingTokens != null) metrics.quotaRemaining(endpoint.id, 'tokens', left.remainingTokens);
      if (left?.remainingRequests != null) metrics.quotaRemaining(endpoint.id, 'requests', left.remainingRequests);
      // Across sweeps, per provider key and day: what the next plan subtracts from a declared budget.
      void store.usage
        .add(paceKey(endpoint), usageDay(), t.promptTokens + t.completionTokens, 1)
        .catch((e: unknown) => log.warn('could not record model usage', { error: String(e) }));
    },
  });

  /** Proposals of one entity as the ledger keeps them: one record per agent and entity, whoever made them. */
  const proposalsOf = (
    meta: { catalogName: string },
    agent: AgentName,
    entityId: string,
    endpoint: EndpointConfig,
    changes: ProposalChange[],
  ): Proposal[] =>
    changes.map((change) => ({
      id: proposalId(meta.catalogName, entityId, change),
      entityId,
      agent,
      change,
      evidence: [`model ${endpoint.id} (${endpoint.model}) on the schema and recorded lineage of ${entityId}`],
    }));

  return {
    /**
     * Plan a sweep's model work before any call: the calls and tokens its real prompts would take, against
     * what each endpoint has left (its declared budget less what ARGUS spent on that provider key today, and
     * its last long-window rate-limit headers), entity by entity in oldest-unreviewed-first order. With
     * `ledgerKey` (a sweep with fitBudget) the entities that fit are stored as the sweep's selection.
     * Returns the bounded plan. Input: the sweep's config, as its workflow parsed it.
     */
    async planSweep(input: PlanSweepInput): Promise<SweepPlan> {
      const cfg = configOf(input);
      const catalog = await deps.catalogs(cfg.catalog);
      const snap = await catalog.snapshot();
      // A sweep plans on what its change detection chose; `sweep plan` works it out against the memory itself.
      let only: string[] | undefined;
      let incremental: SweepPlan['incremental'];
      if (input.ledgerKey) only = await store.ledger(input.ledgerKey).selection();
      else {
        const { toJudge, counts, note, failSafe } = await previewChanges(store, catalog, snap.name, {
          judgment: judgmentSettingsOf(cfg),
          incremental: cfg.incremental,
          goneLimit: cfg.goneLimit,
          ...(deps.rulesVersion ? { rulesVersion: deps.rulesVersion } : {}),
        });
        only = toJudge;
        incremental = { ...counts, ...(note ? { note } : {}), ...(failSafe ? { failSafe } : {}) };
      }
      const { needs, order, notes } = await estimateNeeds(
        catalog,
        cfg,
        snap.name,
        () => Context.current().heartbeat(),
        only,
      );
      const audit = store.audit(store.auditKey(catalog.identity, snap.name));
      const ordered = await oldestUnreviewedFirst(order, audit);
      const rooms = await endpointRooms(cfg.endpoints, store.usage, pacer);
      const first = fitPlan(needs, ordered, rooms, notes);
      // The chosen entities swept alone make batches of their own: re-plan them, shrinking until they fit.
      const chosen = await refit(first.chosen, first.available.tokens, async (ids) => {
        const again = await estimateNeeds(catalog, cfg, snap.name, () => Context.current().heartbeat(), ids);
        return again.needs;
      });
      const { chosen: _all, ...plan } =
        chosen.length === first.chosen.length ? first : fitPlan(needs, ordered, rooms, notes, new Set(chosen));
      void _all;
      if (input.ledgerKey) await store.ledger(input.ledgerKey).writeSelection(chosen);
      if (!incremental) return plan;
      const changes =
        `Since the memory of this catalog: ${incremental.new} new, ${incremental.changed} changed, ` +
        `${incremental.unchanged} unchanged (${incremental.carriedOver} carried over), ${incremental.gone} gone; ` +
        `${incremental.judged} to judge.` +
        (incremental.note ? ` ${incremental.note}.` : '') +
        (incremental.failSafe ? ` Fail-safe: ${incremental.failSafe}.` : '');
      return { ...plan, incremental, text: `${changes}\n${plan.text}` };
    },

    /**
     * Split a page's model work into batches: entities a model call would help (an agent's), or the entities
     * whose proposals passed the gate (the review), grouped in order so each call stays within the sweep's
     * `modelBatch` limits and its answer within the endpoints' smallest `maxOutputTokens`. Returns entity ids
     * per batch (a page's ids: bounded by the page size); entities that need no call are only counted.
     * `provisional`: this worker has not yet seen enough answers of these models for the task to scale their
     * output reserve, so the batches are sized for the longest answers (the workflow sends a few, then asks again).
     */
    async planModelBatches(input: {
      ledgerKey: string;
      pageIndex: number;
      agent: AgentName | 'review';
      /** Review: the gate-passed proposal ids per entity. */
      passed?: Record<string, string[]>;
      maxEntities: number;
      promptTokens: number;
      outputTokens: number;
      /** The models of the sweep's endpoints: answers' output is planned as this worker has seen theirs take. */
      models?: string[];
      /** Entities already sent (a provisional plan's lead batches, workflows/lead-batches.ts): left out. */
      skip?: string[];
    }): Promise<{ batches: string[][]; skipped: number; provisional: boolean }> {
      const ledger = storeOf(deps).ledger(input.ledgerKey);
      const meta = await ledger.meta();
      const catalog = await deps.catalogs(meta.catalogRef);
      const ctx = await catalogContext(catalog);
      const skip = new Set(input.skip ?? []);
      // A later pass's entities this agent has nothing to judge again on are not planned (nor called).
      if (input.agent !== 'review')
        for (const id of await skippedOnPage(ledger, input.pageIndex, input.agent)) skip.add(id);
      const ids = (
        input.agent === 'review' ? Object.keys(input.passed ?? {}).sort() : await ledger.pageIds(input.pageIndex)
      ).filter((id) => !skip.has(id));
      const { entities } = await catalog.getEntities(ids);
      const describing = input.agent === 'description-drafter' || input.agent === 'review';
      const neighbours = describing ? await loadNeighbours(catalog, entities, ctx) : undefined;
      const byProposal = new Map(
        (input.agent === 'review' ? await ledger.proposals(input.pageIndex) : []).map((p) => [p.id, p]),
      );
      const wanted = entities.filter((e) =>
        input.agent === 'review'
          ? (input.passed?.[e.id]?.length ?? 0) > 0
          : needsModelCall(input.agent, e, ctx, neighbours),
      );
      const models = input.models ?? [];
      await adoptShared(models, input.agent);
      const scale = calibration.scale(models, input.agent);
      const batches = batchEntities(
        wanted,
        (e) =>
          scaleOutput(
            estimateEntityTokens(
              input.agent,
              e,
              ctx,
              neighbours,
              (input.passed?.[e.id] ?? []).flatMap((id) => (byProposal.has(id) ? [byProposal.get(id)!] : [])),
            ),
            scale,
          ),
        { maxEntities: input.maxEntities, promptTokens: input.promptTokens, outputTokens: input.outputTokens },
      );
      return {
        batches: batches.map((b) => b.map((e) => e.id)),
        skipped: ids.length - wanted.length,
        provisional: !calibration.known(models, input.agent),
      };
    },

    /**
     * One model-backed agent on a batch of entities, ONE call. Proposals of the entities answered go to the
     * ledger; the entities the answer lacks (or answered invalidly) come back in `missing`, for the workflow
     * to retry alone. Raises the provider failures as modelAgentOnEntity does.
     */
    async modelAgentOnBatch(input: {
      sweepId: string;
      ledgerKey: string;
      pageIndex: number;
      batch: number;
      entityIds: string[];
      agent: AgentName;
      endpoint: EndpointConfig;
      retired: string[];
    }): Promise<{ proposals: number; missing: string[] }> {
      refuseIfExhausted(input.sweepId, input.endpoint, input.retired);
      const ledger = storeOf(deps).ledger(input.ledgerKey);
      const meta = await ledger.meta();
      const catalog = await deps.catalogs(meta.catalogRef);
      const ctx = await catalogContext(catalog);
      const { entities } = await catalog.getEntities(input.entityIds);
      const neighbours =
        input.agent === 'description-drafter' ? await loadNeighbours(catalog, entities, ctx) : undefined;
      const usage = callLog(
        metrics,
        ledger,
        input.pageIndex,
        input.agent,
        input.endpoint.id,
        `batch-${input.batch}`,
        entities.length,
      );
      const r = await usage.around(() =>
        withProviderErrors(input.sweepId, input.endpoint, input.retired, fleet, countFailure, (signal) =>
          proposeBatchWithModel(
            input.agent,
            entities.map((entity) => ({ entity, ...(neighbours ? { neighbours } : {}) })),
            ctx,
            callOptions(input.endpoint, signal, usage.record, usage.kept),
          ),
        ),
      );
      if (usage.sent())
        await learn(input.endpoint.model, input.agent, usage.completionTokens(), r.reserved, r.cutShort === true);
      // One record for the batch (a retry of the activity replaces it): the entities it answered. An entity it
      // lacks is asked alone and recorded as `<agent>--<entity>`, so no proposal is ever in both (and the names
      // never meet: a single dash after the agent here, two there).
      const proposals = [...r.byEntity].flatMap(([entityId, changes]) =>
        proposalsOf(meta, input.agent, entityId, input.endpoint, changes),
      );
      const recorded = await unsettledProposals(ledger, input.pageIndex, proposals);
      await ledger.writeProposals(input.pageIndex, `${input.agent}-batch-${input.batch}`, recorded);
      countProposals(metrics, recorded);
      const count = proposals.length;
      // An entity the catalog could not give back is missing too: alone, it fails with its own error.
      const read = new Set(entities.map((e) => e.id));
      return { proposals: count, missing: [...r.missing, ...input.entityIds.filter((id) => !read.has(id))] };
    },

    /** The Arbiter's model review of a batch of entities' gate-approved proposals: ONE call, one verdict each. */
    async reviewBatchWithModel(input: {
      sweepId: string;
      ledgerKey: string;
      pageIndex: number;
      batch: number;
      /** Gate-passed proposal ids per entity of the batch. */
      passed: Record<string, string[]>;
      endpoint: EndpointConfig;
      retired: string[];
      /** The page's part under review (its outcomes and calls are recorded under the part's own tags). */
      part?: PagePart;
    }): Promise<{ approved: number; rejected: number; missing: string[] }> {
      refuseIfExhausted(input.sweepId, input.endpoint, input.retired);
      const ledger = storeOf(deps).ledger(input.ledgerKey);
      const meta = await ledger.meta();
      const catalog = await deps.catalogs(meta.catalogRef);
      const ctx = await catalogContext(catalog);
      const ids = Object.keys(input.passed);
      const { entities } = await catalog.getEntities(ids);
      const neighbours = await loadNeighbours(catalog, entities, ctx);
      const wanted = new Set(Object.values(input.passed).flat());
      const proposals = (await ledger.proposals(input.pageIndex)).filter((p) => wanted.has(p.id));
      const usage = callLog(
        metrics,
        ledger,
        input.pageIndex,
        'review',
        input.endpoint.id,
        `batch-${input.batch}`,
        entities.length,
        input.part,
      );
      const r = await usage.around(() =>
        withProviderErrors(input.sweepId, input.endpoint, input.retired, fleet, countFailure, (signal) =>
          reviewBatchWithModel({
            items: entities.map((entity) => ({ entity, neighbours })),
            ctx,
            proposals: proposals.map((p) => ({ id: p.id, entityId: p.entityId, change: p.change })),
            ...callOptions(input.endpoint, signal, usage.record, usage.kept),
          }),
        ),
      );
      const reserved = reviewOutputReserve(r.asked ?? proposals.length);
      if (usage.sent())
        await learn(input.endpoint.model, 'review', usage.completionTokens(), reserved, r.cutShort === true);
      // One record for the batch (a retry of the activity replaces it). An entity the answer lacked has no outcome
      // here: reviewed alone, it is recorded as `model-<entity>`, so no proposal is in both (no tag of one is the
      // other's).
      await ledger.putOutcomes(
        input.pageIndex,
        'model',
        partTag(input.part, `review-batch-${input.batch}`),
        r.outcomes,
      );
      metrics.verdicts('model', r.outcomes);
      const read = new Set(entities.map((e) => e.id));
      return {
        approved: r.outcomes.filter((o) => o.decision === 'approved').length,
        rejected: r.outcomes.filter((o) => o.decision === 'rejected').length,
        missing: [...r.missing, ...ids.filter((id) => !read.has(id))],
      };
    },

    /**
     * One model-backed agent on one entity. Raises BudgetExhausted (non-retryable, with the provider's
     * evidence), ProviderBurst (retryable, nextRetryDelay from the answer), and the other provider failures.
     */
    async modelAgentOnEntity(input: {
      sweepId: string;
      ledgerKey: string;
      pageIndex: number;
      entityId: string;
      agent: AgentName;
      endpoint: EndpointConfig;
      retired: string[];
    }): Promise<{ proposals: number }> {
      refuseIfExhausted(input.sweepId, input.endpoint, input.retired);
      // A later pass's entity this agent has nothing to judge again on: no call.
      const skip = await skippedOnPage(storeOf(deps).ledger(input.ledgerKey), input.pageIndex, input.agent);
      if (skip.has(input.entityId)) return { proposals: 0 };
      const describing = input.agent === 'description-drafter';
      const { ledger, meta, ctx, entity, neighbours } = await open(input.ledgerKey, input.entityId, describing);
      const usage = callLog(metrics, ledger, input.pageIndex, input.agent, input.endpoint.id, entity.id);
      const changes = await usage.around(() =>
        withProviderErrors(input.sweepId, input.endpoint, input.retired, fleet, countFailure, (signal) =>
          proposeWithModel(
            input.agent,
            entity,
            ctx,
            callOptions(input.endpoint, signal, usage.record, usage.kept),
            neighbours,
          ),
        ),
      );
      const proposals = proposalsOf(meta, input.agent, entity.id, input.endpoint, changes);
      const recorded = await unsettledProposals(ledger, input.pageIndex, proposals);
      await ledger.writeProposals(input.pageIndex, `${input.agent}--${input.entityId}`, recorded);
      countProposals(metrics, recorded);
      return { proposals: proposals.length };
    },

    /** The Arbiter's model review of one entity's gate-approved proposals: one call, one verdict each. */
    async reviewEntityWithModel(input: {
      sweepId: string;
      ledgerKey: string;
      pageIndex: number;
      entityId: string;
      proposalIds: string[];
      endpoint: EndpointConfig;
      retired: string[];
      part?: PagePart;
    }): Promise<{ approved: number; rejected: number }> {
      refuseIfExhausted(input.sweepId, input.endpoint, input.retired);
      const wanted = new Set(input.proposalIds);
      const { ledger, ctx, entity, neighbours } = await open(input.ledgerKey, input.entityId, true);
      const proposals = (await ledger.proposals(input.pageIndex)).filter((p) => wanted.has(p.id));
      const usage = callLog(metrics, ledger, input.pageIndex, 'review', input.endpoint.id, entity.id, 1, input.part);
      const outcomes = await usage.around(() =>
        withProviderErrors(input.sweepId, input.endpoint, input.retired, fleet, countFailure, (signal) =>
          reviewWithModel({
            entity,
            ctx,
            neighbours,
            proposals,
            ...callOptions(input.endpoint, signal, usage.record, usage.kept),
          }),
        ),
      );
      await ledger.putOutcomes(input.pageIndex, 'model', partTag(input.part, `model-${input.entityId}`), outcomes);
      metrics.verdicts('model', outcomes);
      return {
        approved: outcomes.filter((o) => o.decision === 'approved').length,
        rejected: outcomes.filter((o) => o.decision === 'rejected').length,
      };
    },
  };
}

export type ModelActivities = ReturnType<typeof createModelActivities>;

/**
 * The calls of one activity attempt, stored in the ledger when the attempt ends, however it ends. `entityId`
 * names the entity, or the batch (`batch-<n>`, with `entities` entities in the call).
 */
function callLog(
  metrics: SweepMetrics,
  ledger: SweepLedger,
  pageIndex: number,
  agent: ModelTask,
  endpoint: string,
  entityId: string,
  entities = 1,
  /** A review of a page's `pii` part: its records get their own names (they never replace the evidence part's). */
  part?: PagePart,
) {
  const calls: ModelCallRecord[] = [];
  return {
    record: (t: TokenCount) => {
      calls.push({ agent, endpoint, entityId, ...(entities > 1 ? { entities } : {}), ...t });
      if (!t.remembered) metrics.modelCall(endpoint, agent, t);
    },
    /** A batch entity's part of the last call's answer kept under `digest` (its undo forgets it). */
    kept: (digest: string) => {
      const last = calls[calls.length - 1];
      if (last) (last.kept ??= []).push(digest);
    },
    /** Completion tokens of the calls recorded so far. */
    completionTokens: () => calls.reduce((n, c) => n + c.completionTokens, 0),
    /** Whether a call was sent (not every answer came from the answer memory): only then is there usage to learn. */
    sent: () => calls.some((c) => !c.remembered),
    async around<T>(fn: () => Promise<T>): Promise<T> {
      try {
        return await fn();
      } finally {
        if (calls.length > 0) {
          const attempt = Context.current().info.attempt;
          // Never in place of the call's own outcome: a provider failure must reach the workflow as itself.
          await ledger
            .writeCalls(pageIndex, partTag(part, `${agent}--${entityId}--${endpoint}--${attempt}`), calls)
            .catch((e: unknown) => log.warn('could not record model calls', { entityId, error: String(e) }));
        }
      }
    },
  };
}
