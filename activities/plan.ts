import type { IncrementalSummary } from '../domain/report';
import type { CatalogAdapter } from '../catalog/adapter';
import type { CatalogEntity } from '../domain/catalog';
import type { AgentName, Proposal } from '../domain/proposal';
import type { BatchProposalForReview, EntityEvidence } from '../domain/model-io';
import type { EndpointConfig, SweepConfig } from '../domain/sweep';
import { effectivePageSize } from '../domain/sweep';
import { proposalId } from '../domain/digest';
import { NO_MODEL_AGENTS } from '../judgment/agents';
import { mechanicalReview } from '../judgment/gate/mechanical-gate';
import { paceKey } from '../llm/client';
import { BATCH_SYSTEM_PROMPTS, SYSTEM_PROMPTS, userMessage } from '../llm/prompts';
import type { Pacer } from '../llm/pacer';
import { AGENT_TASK, batchEntities, estimateEntityTokens, needsModelCall } from './model/model-agents';
import { agentEvidence, batchReviewTask } from './model/model-review';
import { catalogContext } from './catalog-access';
import { loadNeighbours } from './neighbours';
import { usageDay, type AuditTrail, type UsageBook } from '../state/store';

/** What one endpoint has left for this sweep, and where the figure comes from. */
export interface EndpointRoom {
  endpointId: string;
  /** Tokens left (null: nothing known, taken as no limit). */
  remainingTokens: number | null;
  remainingRequests: number | null;
  /** `declared`: the endpoint's budget less what ARGUS spent today; `headers`: the provider's last rate-limit headers. */
  source: 'declared' | 'headers' | 'declared+headers' | 'unknown';
  spentTodayTokens: number;
}

export type PlanVerdict = 'fits' | 'partial' | 'does_not_fit';

/** A plan: bounded whatever the catalog's size (samples of ids, counts). */
export interface SweepPlan {
  verdict: PlanVerdict;
  entities: number;
  /** Entities the model work fits for, in the order they would be swept (oldest-unreviewed first). */
  fitting: number;
  deferred: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** Whole sweep (every entity), for comparison with what fits. */
  needed: { calls: number; tokens: number };
  available: { tokens: number | null; requests: number | null };
  endpoints: EndpointRoom[];
  order: string;
  firstFitting: string[];
  firstDeferred: string[];
  /** How the review was estimated (model agents' proposals are not known before they run). */
  notes: string[];
  /** One paragraph for people. */
  text: string;
  /** What changed since this catalog's memory was written (entity counts); the plan covers only what is judged. */
  incremental?: Pick<
    IncrementalSummary,
    'new' | 'changed' | 'unchanged' | 'gone' | 'carriedOver' | 'judged' | 'note' | 'failSafe'
  >;
}

const SAMPLE = 20;
/**
 * Headroom for what the estimate cannot know: the provider's tokenizer (ARGUS counts ~4 characters a token) and
 * how long the answers really are. An entity is taken only while its estimate times this still fits.
 */
export const PLAN_MARGIN = 1.1;
/**
 * Characters per token a plan counts: JSON evidence is punctuation-dense and runs nearer 3 characters a token on
 * common tokenizers than the 4 of English prose (what usage estimates use), so a plan errs on the side of "no".
 */
const PLAN_CHARS_PER_TOKEN = 3;
const planTokens = (text: string) => Math.ceil(text.length / PLAN_CHARS_PER_TOKEN);
/** A rate-limit window that resets sooner than this is paced, not planned against (a per-minute TPM window). */
const LONG_WINDOW_MS = 60 * 60 * 1000;

interface EntityNeed {
  id: string;
  prompt: number;
  output: number;
  calls: number;
}
const tokensOf = (n: EntityNeed) => n.prompt + n.output;

/** Tokens a batch of entities costs one task: the real messages it would send, plus the answers' reserve. */
function batchTokens(
  task: 'describe' | 'classify_pii' | 'check_lineage' | 'review',
  evidence: EntityEvidence[],
  proposals: BatchProposalForReview[],
  output: number,
  batched: boolean,
): { prompt: number; output: number } {
  const system = batched ? BATCH_SYSTEM_PROMPTS[task] : SYSTEM_PROMPTS[task];
  const user = userMessage(
    task === 'review'
      ? { argusTask: 'review', entities: evidence, proposals }
      : { argusTask: task, entities: evidence },
  );
  return { prompt: planTokens(system) + planTokens(user), output };
}

/**
 * The model work a sweep would do, page by page as the sweep reads them: for each model-backed agent the
 * batches `planModelBatches` would make of the entities a call would help, and for a model review the
 * batches of what the mechanical gate passes. Review proposals are those of the no-model agents (exact when
 * the agents are the rules; an estimate when the agents are the model's, whose proposals are not known yet).
 */
export async function estimateNeeds(
  catalog: CatalogAdapter,
  cfg: SweepConfig,
  catalogName: string,
  onPage: () => void,
  /** Only these entities, paged as a sweep of just them would be (a fitBudget sweep's selection). */
  only?: string[],
): Promise<{ needs: Map<string, EntityNeed>; order: string[]; notes: string[] }> {
  const snap = only ? { ids: only } : await catalog.snapshot();
  const ctx = await catalogContext(catalog);
  const pageSize = effectivePageSize(cfg.pageSize, snap.ids.length);
  const batch = cfg.modelBatch;
  const outputTokens = Math.min(...cfg.endpoints.map((e) => e.maxOutputTokens));
  const limits = { maxEntities: batch.entities, promptTokens: batch.promptTokens, outputTokens };
  const batched = batch.entities > 1;
  const needs = new Map<string, EntityNeed>(snap.ids.map((id) => [id, { id, prompt: 0, output: 0, calls: 0 }]));
  const notes: string[] = [];
  const modelAgents = cfg.agentBackend === 'model' ? cfg.agents : [];
  // A call's tokens are shared among its entities in proportion to what each adds to it.
  const share = (members: CatalogEntity[], weights: number[], t: { prompt: number; output: number }) => {
    const total = weights.reduce((a, b) => a + b, 0);
    members.forEach((e, i) => {
      const n = needs.get(e.id)!;
      const w = total > 0 ? weights[i]! / total : 1 / members.length;
      n.prompt += t.prompt * w;
      n.output += t.output * w;
      n.calls += 1 / members.length;
    });
  };
  for (let first = 0; first < snap.ids.length; first += pageSize) {
    onPage();
    const { entities } = await catalog.getEntities(snap.ids.slice(first, first + pageSize));
    const neighbours = await loadNeighbours(catalog, entities, ctx);
    for (const agent of modelAgents) {
      const task = AGENT_TASK[agent];
      const wanted = entities.filter((e) => needsModelCall(agent, e, ctx, neighbours));
      const cost = (e: CatalogEntity) => estimateEntityTokens(agent, e, ctx, neighbours);
      for (const members of batched ? batchEntities(wanted, cost, limits) : wanted.map((e) => [e])) {
        const evidence = members.map((e) => agentEvidence(task, e, ctx, neighbours));
        const output = members.reduce((n, e) => n + cost(e).output, 0);
        share(
          members,
          members.map((e) => cost(e).prompt + cost(e).output),
          batchTokens(task, evidence, [], output, batched),
        );
      }
    }
    if (cfg.review !== 'model') continue;
    // What the review would see: the no-model agents' proposals that pass the mechanical gate.
    const passed = new Map<string, Proposal[]>();
    for (const e of entities)
      for (const agent of cfg.agents as AgentName[])
        for (const found of NO_MODEL_AGENTS[agent](e, ctx, neighbours)) {
          const p: Proposal = {
            id: proposalId(catalogName, e.id, found.change),
            entityId: e.id,
            agent,
            change: found.change,
            evidence: [],
          };
          // A removal the gate approves is final: the model never reviews one.
          if (
            p.change.kind !== 'description_removal' &&
            mechanicalReview(p, e, ctx, neighbours).decision !== 'rejected'
          )
            passed.set(e.id, [...(passed.get(e.id) ?? []), p]);
        }
    const reviewed = entities.filter((e) => passed.has(e.id));
    const cost = (e: CatalogEntity) => estimateEntityTokens('review', e, ctx, neighbours, passed.get(e.id));
    for (const members of batched ? batchEntities(reviewed, cost, limits) : reviewed.map((e) => [e])) {
      const { task } = batchReviewTask(
        members.map((entity) => ({ entity, neighbours })),
        ctx,
        members.flatMap((e) => passed.get(e.id)!),
      );
      const output = members.reduce((n, e) => n + cost(e).output, 0);
      share(
        members,
        members.map((e) => cost(e).prompt + cost(e).output),
        batchTokens('review', task.entities, task.proposals, output, batched),
      );
    }
  }
  if (cfg.review === 'model')
    notes.push(
      cfg.agentBackend === 'model'
        ? "the review is estimated from the no-model agents' proposals (the model's are not known before it runs)"
        : 'the review is planned from the proposals the no-model agents make and the mechanical gate passes',
    );
  return { needs, order: snap.ids, notes };
}

/** What each endpoint has left: its declared budget less ARGUS's spending today, and its last long-window headers. */
export async function endpointRooms(
  endpoints: EndpointConfig[],
  usage: UsageBook,
  pacer: Pacer,
): Promise<EndpointRoom[]> {
  const now = Date.now();
  const out: EndpointRoom[] = [];
  for (const e of endpoints) {
    const key = paceKey(e);
    const spent = await usage.get(key, usageDay(now));
    let tokens: number | null = null;
    let requests: number | null = null;
    const sources: string[] = [];
    if (e.budget?.tokensPerDay !== undefined || e.budget?.requestsPerDay !== undefined) {
      if (e.budget.tokensPerDay !== undefined) tokens = Math.max(0, e.budget.tokensPerDay - spent.tokens);
      if (e.budget.requestsPerDay !== undefined) requests = Math.max(0, e.budget.requestsPerDay - spent.requests);
      sources.push('declared');
    }
    await pacer.sync(key, now);
    const h = pacer.known(key);
    if (h) {
      const long = (reset: number | null) => reset !== null && reset - now > LONG_WINDOW_MS;
      if (h.remainingTokens !== null && long(h.tokensResetAt)) {
        tokens = tokens === null ? h.remainingTokens : Math.min(tokens, h.remainingTokens);
        sources.push('headers');
      }
      if (h.remainingRequests !== null && long(h.requestsResetAt)) {
        requests = requests === null ? h.remainingRequests : Math.min(requests, h.remainingRequests);
        if (!sources.includes('headers')) sources.push('headers');
      }
    }
    out.push({
      endpointId: e.id,
      remainingTokens: tokens,
      remainingRequests: requests,
      source: (sources.join('+') || 'unknown') as EndpointRoom['source'],
      spentTodayTokens: spent.tokens,
    });
  }
  return out;
}

/**
 * Entities in the order a budget-limited sweep takes them: never reviewed first (in catalog order), then the
 * longest since their last review.
 */
export async function oldestUnreviewedFirst(ids: string[], audit: AuditTrail): Promise<string[]> {
  const last = await audit.lastReviewed();
  const pos = new Map(ids.map((id, i) => [id, i]));
  return [...ids].sort((a, b) => {
    const ta = last.get(a);
    const tb = last.get(b);
    if (ta === undefined && tb === undefined) return pos.get(a)! - pos.get(b)!;
    if (ta === undefined) return -1;
    if (tb === undefined) return 1;
    return ta.localeCompare(tb) || pos.get(a)! - pos.get(b)!;
  });
}

/** Take entities in order while their needs fit what the endpoints have left, and say what that means. */
export function fitPlan(
  needs: Map<string, EntityNeed>,
  order: string[],
  rooms: EndpointRoom[],
  notes: string[],
  /** At most these (a prefix of the order that `refit` found to fit when swept alone). */
  cap?: Set<string>,
): SweepPlan & { chosen: string[] } {
  const sum = (xs: (number | null)[]) => (xs.some((x) => x === null) ? null : xs.reduce<number>((a, b) => a + b!, 0));
  const tokensLeft = rooms.length ? sum(rooms.map((r) => r.remainingTokens)) : null;
  const requestsLeft = rooms.length ? sum(rooms.map((r) => r.remainingRequests)) : null;
  let tokens = 0;
  let prompt = 0;
  let output = 0;
  let calls = 0;
  const chosen: string[] = [];
  let stopped = false;
  for (const id of order) {
    const n = needs.get(id)!;
    const fits =
      !stopped &&
      (!cap || cap.has(id)) &&
      (tokensLeft === null || (tokens + tokensOf(n)) * PLAN_MARGIN <= tokensLeft) &&
      (requestsLeft === null || Math.ceil(calls + n.calls) <= requestsLeft);
    // In order, without skipping: a later, smaller entity never jumps the queue of an older one.
    if (!fits) {
      stopped = true;
      continue;
    }
    tokens += tokensOf(n);
    prompt += n.prompt;
    output += n.output;
    calls += n.calls;
    chosen.push(id);
  }
  const all = [...needs.values()];
  const neededTokens = Math.round(all.reduce((a, n) => a + tokensOf(n), 0));
  const neededCalls = Math.ceil(all.reduce((a, n) => a + n.calls, 0));
  const verdict: PlanVerdict = chosen.length === order.length ? 'fits' : chosen.length > 0 ? 'partial' : 'does_not_fit';
  const chosenSet = new Set(chosen);
  const deferred = order.filter((id) => !chosenSet.has(id));
  const fmt = (x: number | null) => (x === null ? 'no known limit' : `${Math.round(x).toLocaleString('en-US')} tokens`);
  const text =
    (verdict === 'fits'
      ? `Fits: ${order.length} entities need about ${neededCalls} model calls and ${neededTokens.toLocaleString('en-US')} tokens; the endpoints have ${fmt(tokensLeft)} left.`
      : verdict === 'partial'
        ? `Fits on ${chosen.length} of ${order.length} entities (oldest-unreviewed first): the whole sweep needs about ${neededCalls} calls and ${neededTokens.toLocaleString('en-US')} tokens, the endpoints have ${fmt(tokensLeft)} left.`
        : `Does not fit: the first entity alone needs more than the endpoints have left (${fmt(tokensLeft)}); the whole sweep needs about ${neededCalls} calls and ${neededTokens.toLocaleString('en-US')} tokens.`) +
    ` ${rooms.map((r) => `${r.endpointId}: ${fmt(r.remainingTokens)} (${r.source}; ${r.spentTodayTokens.toLocaleString('en-US')} spent today)`).join('; ')}.` +
    (notes.length ? ` Note: ${notes.join('; ')}.` : '');
  return {
    verdict,
    entities: order.length,
    fitting: chosen.length,
    deferred: deferred.length,
    calls: Math.ceil(calls),
    promptTokens: Math.round(prompt),
    // The answers' reserve: what the model may write back, estimated per item (activities/model/model-agents.ts).
    completionTokens: Math.round(output),
    needed: { calls: neededCalls, tokens: neededTokens },
    available: { tokens: tokensLeft, requests: requestsLeft },
    endpoints: rooms,
    order: 'oldest-unreviewed first (never reviewed first, in catalog order)',
    firstFitting: chosen.slice(0, SAMPLE),
    firstDeferred: deferred.slice(0, SAMPLE),
    notes,
    text,
    chosen,
  };
}

/**
 * What a chosen subset really costs: swept alone, its entities form batches of their own (each call carrying
 * the instructions), which the shares of the whole-catalog plan undercount. Re-plan the subset and shrink it
 * from the end until its own estimate, with the margin, fits what is left.
 */
export async function refit(
  chosen: string[],
  left: number | null,
  replan: (ids: string[]) => Promise<Map<string, EntityNeed>>,
): Promise<string[]> {
  if (left === null || chosen.length === 0) return chosen;
  let ids = chosen;
  for (let round = 0; round < 8 && ids.length > 0; round++) {
    const needs = await replan(ids);
    const total = [...needs.values()].reduce((a, n) => a + tokensOf(n), 0) * PLAN_MARGIN;
    if (total <= left) return ids;
    ids = ids.slice(0, Math.min(ids.length - 1, Math.floor((ids.length * left) / total)));
  }
  return ids;
}
