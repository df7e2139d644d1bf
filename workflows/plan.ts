import { setCurrentDetails } from '@temporalio/workflow';
import type { SweepPlan } from '../activities/plan';
import { parseSweepInput } from '../domain/sweep';
import { planActivities, REPORT_OPTIONS } from './activities';
import { invalidInput } from './failures';

/**
 * `argus sweep plan`: what a sweep with this input would spend on its models, before any call, and whether
 * that fits what its endpoints have left. Invalid input fails at once, non-retryable, naming the fields.
 * Makes no model call and writes nothing. Returns the plan (bounded: counts and samples of ids).
 */
export async function planSweepWorkflow(raw: unknown): Promise<SweepPlan> {
  const parsed = parseSweepInput(raw);
  if (!parsed.ok) throw invalidInput('sweep input', parsed);
  const plan = await planActivities.planSweep.executeWithOptions(
    { ...REPORT_OPTIONS, summary: 'plan the model work' },
    [{ config: parsed.value }],
  );
  setCurrentDetails(`**Plan: ${plan.verdict.replace(/_/g, ' ')}**\n\n${plan.text}`);
  return plan;
}
