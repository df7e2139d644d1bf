import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { ModelActivities } from '../activities/model-activities';
import type { SweepPlan } from '../activities/plan';
import { parseSweepInput } from '../domain/sweep';
import { REPORT_OPTIONS } from './activities';
import { invalidInput } from './failures';

const { planSweep } = proxyActivities<ModelActivities>(REPORT_OPTIONS);

/**
 * `argus sweep plan`: what a sweep with this input would spend on its models, before any call, and whether
 * that fits what its endpoints have left. Invalid input fails at once, non-retryable, naming the fields.
 * Makes no model call and writes nothing. Returns the plan (bounded: counts and samples of ids).
 */
export async function planSweepWorkflow(raw: unknown): Promise<SweepPlan> {
  const parsed = parseSweepInput(raw);
  if (!parsed.ok) throw invalidInput('sweep input', parsed);
  const plan = await planSweep.executeWithOptions({ ...REPORT_OPTIONS, summary: 'plan the model work' }, [
    { sweep: raw },
  ]);
  setCurrentDetails(`**Plan: ${plan.verdict.replace(/_/g, ' ')}**\n\n${plan.text}`);
  return plan;
}
