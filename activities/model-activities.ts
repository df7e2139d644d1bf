import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentName, Proposal } from '../domain/proposal';
import type { EndpointConfig } from '../domain/sweep';
import { FailureType } from '../domain/ids';
import { proposalId } from '../domain/digest';
import { BudgetExhaustedError, ProviderError } from '../llm/errors';
import { Pacer } from '../llm/pacer';
import type { SweepLedger, ModelCallRecord } from './ledger';
import { storeOf, type ActivityDeps } from './sweep-context';
import type { FleetGate } from './state-store';
import type { CallOptions, TokenCount } from '../llm/client';
import { catalogContext } from './catalog-access';
import { toApplicationFailure } from './failures';
import { proposeWithModel } from './model/model-agents';
import { reviewWithModel } from './model/model-review';
import { loadNeighbours } from './neighbours';

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
    throw ApplicationFailure.create({
      type: FailureType.BudgetExhausted,
      nonRetryable: true,
      message: `endpoint ${endpoint.id} is already retired for this sweep; no call made`,
      details: [known ?? { endpointId: endpoint.id, alreadyRetired: true }],
    });
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

async function withProviderErrors<T>(
  sweepId: string,
  endpoint: EndpointConfig,
  retired: string[],
  fleet: FleetGate | undefined,
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

/** Activities that call a model: one call per activity, so Temporal's retry policy is the only retry loop. */
export function createModelActivities(deps: ActivityDeps & { env?: NodeJS.ProcessEnv }) {
  const fleet = storeOf(deps).fleet;
  const pacer = new Pacer(fleet);
  const env = deps.env ?? process.env;

  /** The sweep's ledger and catalog, and the one entity a model call is about (EntityInvalid if unreadable). */
  async function open(ledgerKey: string, entityId: string, withNeighbours = false) {
    const ledger = storeOf(deps).ledger(ledgerKey);
    const meta = await ledger.meta();
    const catalog = await deps.catalogs(meta.catalogRef);
    const entity = (await catalog.getEntities([entityId])).entities[0];
    if (!entity) {
      throw ApplicationFailure.create({
        type: FailureType.EntityInvalid,
        nonRetryable: true,
        message: `entity ${entityId} not readable`,
      });
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
  ): CallOptions => ({
    endpoint,
    env,
    pacer,
    signal,
    onWait: () => Context.current().heartbeat(),
    onUsage,
  });

  return {
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
      const describing = input.agent === 'description-drafter';
      const { ledger, meta, ctx, entity, neighbours } = await open(input.ledgerKey, input.entityId, describing);
      const usage = callLog(ledger, input.pageIndex, input.agent, input.endpoint.id, entity.id);
      const changes = await usage.around(() =>
        withProviderErrors(input.sweepId, input.endpoint, input.retired, fleet, (signal) =>
          proposeWithModel(input.agent, entity, ctx, callOptions(input.endpoint, signal, usage.record), neighbours),
        ),
      );
      const proposals: Proposal[] = changes.map((change) => ({
        id: proposalId(meta.catalogName, entity.id, change),
        entityId: entity.id,
        agent: input.agent,
        change,
        evidence: [
          `model ${input.endpoint.id} (${input.endpoint.model}) on the schema and recorded lineage of ${entity.id}`,
        ],
      }));
      await ledger.writeProposals(input.pageIndex, `${input.agent}--${input.entityId}`, proposals);
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
    }): Promise<{ approved: number; rejected: number }> {
      refuseIfExhausted(input.sweepId, input.endpoint, input.retired);
      const wanted = new Set(input.proposalIds);
      const { ledger, ctx, entity, neighbours } = await open(input.ledgerKey, input.entityId, true);
      const proposals = (await ledger.proposals(input.pageIndex)).filter((p) => wanted.has(p.id));
      const usage = callLog(ledger, input.pageIndex, 'review', input.endpoint.id, entity.id);
      const outcomes = await usage.around(() =>
        withProviderErrors(input.sweepId, input.endpoint, input.retired, fleet, (signal) =>
          reviewWithModel({
            entity,
            ctx,
            neighbours,
            proposals,
            ...callOptions(input.endpoint, signal, usage.record),
          }),
        ),
      );
      await ledger.putOutcomes(input.pageIndex, 'model', `model-${input.entityId}`, outcomes);
      return {
        approved: outcomes.filter((o) => o.decision === 'approved').length,
        rejected: outcomes.filter((o) => o.decision === 'rejected').length,
      };
    },
  };
}

export type ModelActivities = ReturnType<typeof createModelActivities>;

/** The calls of one activity attempt, stored in the ledger when the attempt ends, however it ends. */
function callLog(ledger: SweepLedger, pageIndex: number, agent: string, endpoint: string, entityId: string) {
  const calls: ModelCallRecord[] = [];
  return {
    record: (t: TokenCount) => calls.push({ agent, endpoint, entityId, ...t }),
    async around<T>(fn: () => Promise<T>): Promise<T> {
      try {
        return await fn();
      } finally {
        if (calls.length > 0) {
          const attempt = Context.current().info.attempt;
          // Never in place of the call's own outcome: a provider failure must reach the workflow as itself.
          await ledger
            .writeCalls(pageIndex, `${agent}--${entityId}--${endpoint}--${attempt}`, calls)
            .catch((e: unknown) => log.warn('could not record model calls', { entityId, error: String(e) }));
        }
      }
    },
  };
}
