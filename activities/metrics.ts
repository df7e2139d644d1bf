import type { AgentName, Decision, Outcome, ProposalKind } from '../domain/proposal';
import type { CatalogRef } from '../domain/sweep';
import type { ProviderErrorKind } from '../llm/errors';
import type { ThrottleWindow } from '../llm/classify';
import { MetricRegistry } from './metrics-text';

/**
 * Where a verdict came from: the mechanical gate, a model, the model review that could not run (every endpoint
 * retired, or the call failed), the human review gate parking it for people, or a person.
 */
export type VerdictStage = 'gate' | 'model' | 'model_unavailable' | 'awaiting_people' | 'human';
/** What the write step did with an approved repair (catalog/adapter.ts's statuses). */
export type WriteResult = 'written' | 'already' | 'kept_human' | 'conflict' | 'failed';
/** Who a model call worked for: an agent, or the Arbiter's review. */
export type ModelTask = AgentName | 'review';
/** Why the sweep stops using an endpoint (workflows/rotation.ts). */
export type RetireReason = 'exhausted' | 'persistent_throttling';
export type CatalogKind = CatalogRef['kind'];

/**
 * What activities count, for operators. Every label is a value ARGUS or the operator chose from a short list —
 * endpoint ids (the sweep input's `id`), agent names, proposal kinds, outcomes, stages, catalog kinds — never an
 * entity, a column, a value, a URL or a secret. Counters only go up for the life of the worker process.
 */
export interface SweepMetrics {
  /** Entities a page loaded for judging (every pass counts its own). */
  entitiesJudged(catalogKind: CatalogKind, n: number): void;
  /** Proposals an agent put in the ledger. */
  proposals(agent: AgentName, kind: ProposalKind, n: number): void;
  /** Outcomes recorded at one stage. */
  verdicts(stage: VerdictStage, outcomes: readonly Pick<Outcome, 'decision'>[]): void;
  /** Approved repairs the write step handled, by what became of them. */
  writes(catalogKind: CatalogKind, result: WriteResult, n: number): void;
  /** One answered model call and the tokens it took. */
  modelCall(endpoint: string, task: ModelTask, tokens: { promptTokens: number; completionTokens: number }): void;
  /** A model call that failed, by the llm/ error kind. */
  modelCallFailed(endpoint: string, error: ProviderErrorKind): void;
  /** A provider answer saying the endpoint's budget is spent. */
  endpointExhausted(endpoint: string, window: ThrottleWindow): void;
  /** The first time this worker sees a sweep retire an endpoint. */
  endpointRetired(endpoint: string, reason: RetireReason): void;
  /** What the provider's last `x-ratelimit-remaining-*` header said is left. */
  quotaRemaining(endpoint: string, resource: 'tokens' | 'requests', value: number): void;
}

/** The default: counts nothing (a worker started without ARGUS_METRICS_PORT, unit tests). */
export const noMetrics: SweepMetrics = {
  entitiesJudged: () => undefined,
  proposals: () => undefined,
  verdicts: () => undefined,
  writes: () => undefined,
  modelCall: () => undefined,
  modelCallFailed: () => undefined,
  endpointExhausted: () => undefined,
  endpointRetired: () => undefined,
  quotaRemaining: () => undefined,
};

/** ARGUS's own series (`argus_*`), kept in memory and rendered in the Prometheus text format. */
export class ArgusMetrics implements SweepMetrics {
  private readonly registry = new MetricRegistry();
  private readonly judged = this.registry.counter(
    'argus_entities_judged_total',
    'Entities loaded for judging (each pass of a sweep counts its own).',
    ['catalog_kind'],
  );
  private readonly proposed = this.registry.counter(
    'argus_proposals_total',
    'Proposals the agents recorded, by agent and proposal kind.',
    ['agent', 'kind'],
  );
  private readonly verdictCount = this.registry.counter(
    'argus_verdicts_total',
    'Review outcomes recorded, by outcome and the stage that recorded them.',
    ['outcome', 'stage'],
  );
  private readonly written = this.registry.counter(
    'argus_writes_total',
    'Approved repairs the write step handled, by catalog kind and result.',
    ['catalog_kind', 'result'],
  );
  private readonly calls = this.registry.counter(
    'argus_model_calls_total',
    'Answered model calls, by endpoint id and the agent (or review) they served.',
    ['endpoint', 'agent'],
  );
  private readonly tokens = this.registry.counter(
    'argus_model_tokens_total',
    'Tokens of answered model calls (the provider usage, else an estimate), by endpoint id, agent and type.',
    ['endpoint', 'agent', 'type'],
  );
  private readonly failures = this.registry.counter(
    'argus_model_call_failures_total',
    'Model calls that failed, by endpoint id and error kind.',
    ['endpoint', 'error'],
  );
  private readonly exhausted = this.registry.counter(
    'argus_endpoint_exhausted_total',
    'Provider answers saying an endpoint budget is spent, by endpoint id and quota window.',
    ['endpoint', 'window'],
  );
  private readonly retired = this.registry.counter(
    'argus_endpoints_retired_total',
    'Endpoints retired for a sweep (first seen by this worker), by endpoint id and reason.',
    ['endpoint', 'reason'],
  );
  private readonly quota = this.registry.gauge(
    'argus_model_quota_remaining',
    'What the last x-ratelimit-remaining-* header of an endpoint said is left, by endpoint id and resource.',
    ['endpoint', 'resource'],
  );

  entitiesJudged(catalogKind: CatalogKind, n: number): void {
    this.judged.inc({ catalog_kind: catalogKind }, n);
  }

  proposals(agent: AgentName, kind: ProposalKind, n: number): void {
    this.proposed.inc({ agent, kind }, n);
  }

  verdicts(stage: VerdictStage, outcomes: readonly Pick<Outcome, 'decision'>[]): void {
    const by = new Map<Decision, number>();
    for (const o of outcomes) by.set(o.decision, (by.get(o.decision) ?? 0) + 1);
    for (const [outcome, n] of by) this.verdictCount.inc({ outcome, stage }, n);
  }

  writes(catalogKind: CatalogKind, result: WriteResult, n: number): void {
    this.written.inc({ catalog_kind: catalogKind, result }, n);
  }

  modelCall(endpoint: string, task: ModelTask, t: { promptTokens: number; completionTokens: number }): void {
    this.calls.inc({ endpoint, agent: task });
    this.tokens.inc({ endpoint, agent: task, type: 'prompt' }, t.promptTokens);
    this.tokens.inc({ endpoint, agent: task, type: 'completion' }, t.completionTokens);
  }

  modelCallFailed(endpoint: string, error: ProviderErrorKind): void {
    this.failures.inc({ endpoint, error });
  }

  endpointExhausted(endpoint: string, window: ThrottleWindow): void {
    this.exhausted.inc({ endpoint, window });
  }

  endpointRetired(endpoint: string, reason: RetireReason): void {
    this.retired.inc({ endpoint, reason });
  }

  quotaRemaining(endpoint: string, resource: 'tokens' | 'requests', value: number): void {
    this.quota.set({ endpoint, resource }, value);
  }

  /** Every `argus_*` family in the Prometheus text exposition format. */
  render(): string {
    return this.registry.render();
  }
}

/** Sum groups of proposals by kind, for `SweepMetrics.proposals`. */
export function countProposals(
  metrics: SweepMetrics,
  proposals: readonly { agent: AgentName; change: { kind: ProposalKind } }[],
): void {
  const by = new Map<string, { agent: AgentName; kind: ProposalKind; n: number }>();
  for (const p of proposals) {
    const key = `${p.agent}\u0000${p.change.kind}`;
    const g = by.get(key) ?? { agent: p.agent, kind: p.change.kind, n: 0 };
    g.n++;
    by.set(key, g);
  }
  for (const g of by.values()) metrics.proposals(g.agent, g.kind, g.n);
}
