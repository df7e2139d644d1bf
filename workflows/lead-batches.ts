/**
 * How many batches a provisional plan sends before the rest is planned again. OutputCalibration needs
 * MIN_ANSWERS (3) answers of a model and task before it scales their reserve: three batches teach it.
 */
export const LEAD_BATCHES = 3;

/** Batches of one page's model work as planModelBatches returns them. */
export interface BatchPlan<T> {
  batches: T[][];
  /**
   * Planned on the whole output reserve, because the worker that planned it had seen too few answers of the
   * sweep's models for this task to know how much of the reserve they take.
   */
  provisional?: boolean;
}

/**
 * Send a page's planned batches, numbered from 0 (a batch's number names its call in the usage record). A
 * provisional plan sends only its first LEAD_BATCHES batches, then plans the rest again (`replan`, given what
 * was sent), on what their answers taught the worker's calibration: on a fresh worker a page's batches are
 * otherwise all sized for the longest answers, about twice as many calls as needed. When the new plan cannot be
 * made (`replan` gives null), the first plan's remaining batches are sent as they were. Pure: used by the
 * workflows (through batchesThenAlone in workflows/batches.ts) and by the bench's in-process loop.
 */
export async function sendPlannedBatches<T>(
  plan: BatchPlan<T>,
  replan: ((sent: T[]) => Promise<BatchPlan<T> | null>) | null,
  send: (batches: { items: T[]; batch: number }[]) => Promise<void>,
): Promise<void> {
  const numbered = (batches: T[][], from: number) => batches.map((items, i) => ({ items, batch: from + i }));
  if (!replan || !plan.provisional || plan.batches.length <= LEAD_BATCHES) return send(numbered(plan.batches, 0));
  const lead = plan.batches.slice(0, LEAD_BATCHES);
  await send(numbered(lead, 0));
  const again = await replan(lead.flat());
  await send(numbered(again ? again.batches : plan.batches.slice(LEAD_BATCHES), LEAD_BATCHES));
}
