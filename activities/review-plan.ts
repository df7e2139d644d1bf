import type { SweepActivities } from './sweep-activities';
import type { ModelActivities } from './model-activities';

type GateInput = Parameters<SweepActivities['reviewPageMechanically']>[0];
type PlanInput = Parameters<ModelActivities['planModelBatches']>[0];
type Gate = Awaited<ReturnType<SweepActivities['reviewPageMechanically']>>;
type Plan = Awaited<ReturnType<ModelActivities['planModelBatches']>>;

/**
 * The Arbiter's first step in model mode, in one activity: the mechanical gate over a page's part, then the plan
 * of the model review's batches over what the gate passed (none when it passed nothing). One activity, not two:
 * each step of a workflow costs a round trip to the server, paid by every part of every page.
 */
export function createReviewPlanActivities(
  sweep: Pick<SweepActivities, 'reviewPageMechanically'>,
  model: Pick<ModelActivities, 'planModelBatches'>,
) {
  return {
    async reviewPageAndPlanBatches(input: {
      gate: GateInput;
      /** The review's batch limits; the gate's `passed` and the page come from the gate. */
      plan: Omit<PlanInput, 'ledgerKey' | 'pageIndex' | 'agent' | 'passed' | 'skip'>;
    }): Promise<Gate & { plan?: Plan }> {
      const gate = await sweep.reviewPageMechanically(input.gate);
      if (Object.keys(gate.passed).length === 0) return gate;
      const plan = await model.planModelBatches({
        ...input.plan,
        ledgerKey: input.gate.ledgerKey,
        pageIndex: input.gate.pageIndex,
        agent: 'review',
        passed: gate.passed,
      });
      return { ...gate, plan };
    },
  };
}

export type ReviewPlanActivities = ReturnType<typeof createReviewPlanActivities>;
