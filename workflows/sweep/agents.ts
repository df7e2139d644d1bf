import { patched, type ActivityOptions } from '@temporalio/workflow';
import type { AgentName, EntityFailure } from '../../domain/proposal';
import { catalogActivities, modelActivities, modelActivityOptions, CATALOG_OPTIONS } from '../activities';
import { batchesThenAlone } from '../batches';
import { failureOf } from '../failures';
import type { RotationOutcome } from '../rotation';
import { pageEntities, type Sweep } from './state';

/**
 * The agents of a sweep, page by page: the rules (one activity per page and agent) or the model (batches of
 * entities per call, an entity a batch answer lacks asked alone, on the sweep's endpoint rotation). A failure
 * becomes the page's (or the entity's) named failure; the page goes on.
 */
export class Agents {
  private readonly models: ReturnType<typeof modelActivities>;
  private readonly modelOptions: ActivityOptions;

  constructor(private readonly sweep: Sweep) {
    this.models = modelActivities(sweep.cfg);
    this.modelOptions = modelActivityOptions(sweep.cfg);
  }

  /**
   * Run the sweep's agents on a page (`ids`: its entities when the history carries them; `first`, `loaded`: its
   * place in the pass and entity count; `skip`: agents with nothing to judge on it). A later pass re-judges what
   * this sweep's writes changed: descriptions, tags and recorded lineage, never SQL or which entities exist; a
   * lineage repair only brings the recorded upstream in line with what the checker found, so the lineage checker
   * is not asked again. Returns how many proposals the page's agents recorded for review, when every agent said
   * (rules agents that all finished); undefined otherwise.
   */
  async run(
    pageIndex: number,
    round: number,
    ids: string[],
    first: number,
    loaded: number,
    skip: AgentName[] = [],
  ): Promise<number | undefined> {
    const { cfg, state } = this.sweep;
    let recorded: number | undefined = 0;
    const agents = cfg.agents.filter((a) => !(round > 0 && a === 'lineage-checker') && !skip.includes(a));
    const agentRuns = agents.map(async (agent: AgentName) => {
      if (cfg.agentBackend === 'model') return this.runModelAgent(pageIndex, ids, agent);
      try {
        const r = await catalogActivities.runAgent.executeWithOptions(
          {
            ...CATALOG_OPTIONS,
            // Sampling values reads every table of the page (for dbt, a dbt process each): more time, heartbeats.
            ...(cfg.sampleValues && agent === 'pii-classifier' ? { startToCloseTimeout: '30 minutes' } : {}),
            summary: `page ${pageIndex}: ${agent} on ${loaded} entities`,
          },
          [{ ledgerKey: state.ledgerKey, pageIndex, ...(ids.length > 0 ? { ids } : {}), agent }],
        );
        this.sweep.noteFailures(r.failureCount ?? r.failures.length);
        // A result recorded before `recorded` existed says nothing of what it left for review.
        recorded = recorded === undefined || r.recorded === undefined ? undefined : recorded + r.recorded;
      } catch (err) {
        recorded = undefined;
        const f = failureOf(err);
        this.sweep.addFailures(pageEntities(ids, first, loaded).map((entity) => ({ entity, stage: agent, ...f })));
      }
    });
    // Model agents propose no description removals (judgment/description-drafter.ts): the rules drafter's run beside
    // them, one activity per page, no model call.
    if (cfg.agentBackend === 'model' && agents.includes('description-drafter') && patched('model-removals-v1'))
      agentRuns.push(this.runRemovals(pageIndex, ids, first, loaded));
    await Promise.all(agentRuns);
    return cfg.agentBackend === 'model' ? undefined : recorded;
  }

  private async runRemovals(pageIndex: number, ids: string[], first: number, loaded: number): Promise<void> {
    const { state } = this.sweep;
    try {
      const r = await catalogActivities.runAgent.executeWithOptions(
        { ...CATALOG_OPTIONS, summary: `page ${pageIndex}: description removals on ${loaded} entities` },
        [
          {
            ledgerKey: state.ledgerKey,
            pageIndex,
            ...(ids.length > 0 ? { ids } : {}),
            agent: 'description-drafter',
            removalsOnly: true,
          },
        ],
      );
      this.sweep.noteFailures(r.failureCount ?? r.failures.length);
    } catch (err) {
      const f = failureOf(err);
      this.sweep.addFailures(
        pageEntities(ids, first, loaded).map((entity) => ({ entity, stage: 'description-drafter' as const, ...f })),
      );
    }
  }

  /**
   * A model-backed agent: batches of entities per call (an entity a batch answer lacks is asked alone), or one
   * activity per entity and agent; rotating endpoints; the breaker stops all calls.
   */
  private async runModelAgent(pageIndex: number, ids: string[], agent: AgentName): Promise<void> {
    const { cfg, state, sweepId, rotation, progress } = this.sweep;
    const step = (summary: string) => ({ ...this.modelOptions, summary });
    await batchesThenAlone({
      entities: ids,
      maxEntities: cfg.modelBatch.entities,
      concurrency: cfg.modelConcurrency,
      plan: (skip) =>
        this.models.planModelBatches.executeWithOptions(
          { ...CATALOG_OPTIONS, summary: `page ${pageIndex}: batch ${agent}${skip.length ? ' (the rest)' : ''}` },
          [
            {
              ledgerKey: state.ledgerKey,
              pageIndex,
              agent,
              maxEntities: cfg.modelBatch.entities,
              promptTokens: cfg.modelBatch.promptTokens,
              outputTokens: Math.min(...cfg.endpoints.map((e) => e.maxOutputTokens)),
              models: cfg.endpoints.map((e) => e.model),
              ...(skip.length ? { skip } : {}),
            },
          ],
        ),
      planFailed: (err) => {
        const f = failureOf(err);
        this.sweep.addFailures(ids.map((entity) => ({ entity, stage: agent, ...f })));
      },
      batch: async (entityIds, batch) => {
        const r = await rotation.run((endpoint, retired) =>
          this.models.modelAgentOnBatch.executeWithOptions(
            step(`${agent} on ${entityIds.length} entities via ${endpoint.id}`),
            [{ sweepId, ledgerKey: state.ledgerKey, pageIndex, batch, entityIds, agent, endpoint, retired }],
          ),
        );
        if (r.ok) return r.value.missing;
        this.sweep.addFailures(entityIds.map((entity) => rotationFailure(entity, agent, r)));
        return [];
      },
      alone: async (entityId) => {
        const r = await rotation.run((endpoint, retired) =>
          this.models.modelAgentOnEntity.executeWithOptions(step(`${agent} on ${entityId} via ${endpoint.id}`), [
            { sweepId, ledgerKey: state.ledgerKey, pageIndex, entityId, agent, endpoint, retired },
          ]),
        );
        if (!r.ok) this.sweep.addFailures([rotationFailure(entityId, agent, r)]);
      },
    });
    progress.retiredEndpoints = rotation.retiredIds();
    progress.breakerTripped = rotation.breakerTripped;
  }
}

/** An entity's failure when every endpoint failed it: the breaker (budgets spent) or the last endpoint's error. */
function rotationFailure(
  entity: string,
  stage: AgentName,
  r: Extract<RotationOutcome<unknown>, { ok: false }>,
): EntityFailure {
  return r.breaker
    ? { entity, stage, category: 'model_budget_exhausted', retryable: true, message: r.message.slice(0, 1000) }
    : { entity, stage, category: r.category, retryable: r.retryable, message: r.message };
}
