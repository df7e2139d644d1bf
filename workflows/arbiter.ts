import { patched, setCurrentDetails, upsertMemo } from '@temporalio/workflow';
import { parseArbiterInput, type ArbiterInput, type ArbiterResult } from '../domain/arbiter';
import type { Outcome } from '../domain/proposal';
import {
  catalogActivities,
  modelActivities,
  modelActivityOptions,
  reviewPlanActivities,
  CATALOG_OPTIONS,
} from './activities';
import { Rotation, type RotationOutcome } from './rotation';
import { batchesThenAlone } from './batches';
import type { BatchPlan } from './lead-batches';
import { invalidInput } from './failures';

/**
 * Reviews one page of proposals. The mechanical gate runs first in both modes and is the whole review in
 * mechanical mode. In model mode what the gate approves goes to the model, several entities per call (an
 * entity a batch answer lacks is reviewed alone); a model
 * lost mid-run leaves those proposals `not_reviewed` ("model budget exhausted"), never approved and never
 * sent back to the gate. Outcomes go to the sweep ledger; the result carries counts. Input: ArbiterInput
 * (domain/arbiter.ts), parsed once; an invalid one fails at once with non-retryable `InvalidSweepInput`.
 */
export async function arbiterWorkflow(given: ArbiterInput): Promise<ArbiterResult> {
  const parsed = parseArbiterInput(given);
  if (!parsed.ok) throw invalidInput('arbiter input', parsed);
  const input = parsed.value;
  const what = `page ${input.pageIndex}${input.part === 'pii' ? "'s PII tags" : input.part === 'lineage' ? "'s lineage flags" : ''}`;
  const gateInput = {
    ledgerKey: input.ledgerKey,
    pageIndex: input.pageIndex,
    mode: input.mode,
    ...(input.part ? { part: input.part } : {}),
  };
  const batchLimits = input.modelBatch
    ? {
        maxEntities: input.modelBatch.entities,
        promptTokens: input.modelBatch.promptTokens,
        outputTokens: Math.min(...input.endpoints.map((e) => e.maxOutputTokens)),
        models: input.endpoints.map((e) => e.model),
      }
    : undefined;
  // In model mode with batches the gate also plans the review's first batches: one step, not two (since patch
  // `arbiter-gate-plans-v1`; a workflow started before it plans in a step of its own).
  const gatePlans =
    input.mode === 'model' &&
    batchLimits !== undefined &&
    batchLimits.maxEntities > 1 &&
    patched('arbiter-gate-plans-v1');
  setCurrentDetails(`Reviewing ${what} (${input.mode} review): mechanical gate`);
  let firstPlan: BatchPlan<string> | undefined;
  let gate: { approved: number; rejected: number; passed: Record<string, string[]> };
  if (gatePlans) {
    const planned = await reviewPlanActivities.reviewPageAndPlanBatches.executeWithOptions(
      { ...CATALOG_OPTIONS, summary: `${what}: mechanical gate, then the model review's batches` },
      [{ gate: gateInput, plan: batchLimits }],
    );
    firstPlan = planned.plan;
    gate = planned;
  } else
    gate = await catalogActivities.reviewPageMechanically.executeWithOptions(
      { ...CATALOG_OPTIONS, summary: `${what}: mechanical gate` },
      [gateInput],
    );
  const rotation = new Rotation(input.endpoints, [...input.retired]);
  const result: ArbiterResult = {
    approved: gate.approved,
    rejected: gate.rejected,
    notReviewed: 0,
    retired: rotation.retired,
  };
  const entities = Object.keys(gate.passed).sort();
  if (input.mode === 'model' && entities.length > 0) {
    const modelCfg = {
      endpoints: input.endpoints,
      throttleAttemptsBeforeRotation: input.throttleAttemptsBeforeRotation,
    };
    const models = modelActivities(modelCfg);
    const modelOptions = modelActivityOptions(modelCfg);
    const unreviewed: Outcome[] = [];
    let done = 0;
    // Proposals every endpoint failed to review: not reviewed, with why (the breaker's message or the error).
    const notReviewed = (proposalIds: string[], r: Extract<RotationOutcome<unknown>, { ok: false }>) => {
      const reason = r.breaker ? rotation.breakerMessage() : `model review failed (${r.category}): ${r.message}`;
      for (const proposalId of proposalIds)
        unreviewed.push({ proposalId, decision: 'not_reviewed', reason: reason.slice(0, 1000), reviewer: 'none' });
    };
    const showProgress = () =>
      setCurrentDetails(
        `${what}: model review ${done}/${entities.length} entities${rotation.breakerTripped ? ' — breaker open' : ''}`,
      );
    await batchesThenAlone({
      entities,
      maxEntities: input.modelBatch?.entities ?? 1,
      concurrency: input.modelConcurrency,
      plan: (skip) => {
        // The gate's plan serves the first ask; what is planned again (the rest, after lead batches) is asked.
        const made = firstPlan;
        firstPlan = undefined;
        if (made && skip.length === 0) return Promise.resolve(made);
        return models.planModelBatches.executeWithOptions(
          {
            ...CATALOG_OPTIONS,
            summary: `page ${input.pageIndex}: batch the model review${skip.length ? ' (the rest)' : ''}`,
          },
          [
            {
              ledgerKey: input.ledgerKey,
              pageIndex: input.pageIndex,
              agent: 'review',
              passed: gate.passed,
              ...batchLimits!,
              ...(skip.length ? { skip } : {}),
            },
          ],
        );
      },
      batch: async (ids, batch) => {
        const passed = Object.fromEntries(ids.map((id) => [id, gate.passed[id] ?? []]));
        const count = ids.reduce((n, id) => n + (gate.passed[id]?.length ?? 0), 0);
        const r = await rotation.run((endpoint, retired) =>
          models.reviewBatchWithModel.executeWithOptions(
            { ...modelOptions, summary: `review ${count} proposals of ${ids.length} entities on ${endpoint.id}` },
            [
              {
                sweepId: input.sweepId,
                ledgerKey: input.ledgerKey,
                pageIndex: input.pageIndex,
                batch,
                passed,
                endpoint,
                retired,
                ...(input.part ? { part: input.part } : {}),
              },
            ],
          ),
        );
        let missing: string[] = [];
        if (r.ok) {
          result.approved += r.value.approved;
          result.rejected += r.value.rejected;
          missing = r.value.missing;
          done += ids.length - missing.length;
        } else {
          notReviewed(
            ids.flatMap((id) => gate.passed[id] ?? []),
            r,
          );
          done += ids.length;
        }
        showProgress();
        // What a batch answer lacked is reviewed alone, one call per entity.
        return missing;
      },
      alone: async (entityId) => {
        const proposalIds = gate.passed[entityId] ?? [];
        const r = await rotation.run((endpoint, retired) =>
          models.reviewEntityWithModel.executeWithOptions(
            { ...modelOptions, summary: `review ${proposalIds.length} proposals of ${entityId} on ${endpoint.id}` },
            [
              {
                sweepId: input.sweepId,
                ledgerKey: input.ledgerKey,
                pageIndex: input.pageIndex,
                entityId,
                proposalIds,
                endpoint,
                retired,
                ...(input.part ? { part: input.part } : {}),
              },
            ],
          ),
        );
        if (r.ok) {
          result.approved += r.value.approved;
          result.rejected += r.value.rejected;
        } else notReviewed(proposalIds, r);
        done++;
        showProgress();
      },
    });
    if (unreviewed.length) {
      await catalogActivities.recordOutcomes({
        ledgerKey: input.ledgerKey,
        pageIndex: input.pageIndex,
        tag: input.part === 'pii' || input.part === 'lineage' ? `${input.part}-not-reviewed` : 'not-reviewed',
        outcomes: unreviewed,
      });
      result.notReviewed += unreviewed.length;
    }
  }
  // What this page's review lost, said where a person looks (the details and the persisted memo), bounded.
  const newlyRetired = result.retired.filter((r) => !input.retired.some((x) => x.endpointId === r.endpointId));
  const retiredLines = result.retired.map(
    (r) =>
      `- endpoint **${r.endpointId}** retired: ${r.reason.slice(0, 200)}` +
      (r.providerMessage ? ` — provider said: "${r.providerMessage.slice(0, 300)}"` : '') +
      (input.retired.some((x) => x.endpointId === r.endpointId) ? ' (before this page)' : ''),
  );
  const verdict =
    result.notReviewed > 0
      ? `**PARTIAL** — ${result.notReviewed} proposals not reviewed (never written)`
      : '**Complete**';
  setCurrentDetails(
    `${verdict}\n\n${what[0]!.toUpperCase()}${what.slice(1)}: ${result.approved} approved, ${result.rejected} rejected, ` +
      `${result.notReviewed} not reviewed` +
      (retiredLines.length ? `\n\n${retiredLines.slice(0, 8).join('\n')}` : ''),
  );
  if (patched('arbiter-memo-v1')) {
    upsertMemo({
      summary: {
        partial: result.notReviewed > 0,
        page: input.pageIndex,
        ...(input.part === 'pii' || input.part === 'lineage' ? { part: input.part } : {}),
        approved: result.approved,
        rejected: result.rejected,
        notReviewed: result.notReviewed,
        retiredEndpoints: result.retired.slice(0, 8).map((r) => ({
          endpointId: r.endpointId,
          reason: r.reason.slice(0, 200),
          providerMessage: r.providerMessage.slice(0, 300),
          retiredHere: newlyRetired.includes(r),
        })),
      },
    });
  }
  return result;
}
