import { LEAD_BATCHES, sendPlannedBatches, type BatchPlan } from '../../workflows/lead-batches';

// A plan sized for the longest answers (a fresh worker's) sends a few batches, then plans the rest again.

const batchesOf = (n: number, size = 2): string[][] =>
  Array.from({ length: n }, (_, b) => Array.from({ length: size }, (_, i) => `e${b * size + i}`));

async function record(plan: BatchPlan<string>, replan: ((sent: string[]) => Promise<BatchPlan<string> | null>) | null) {
  const sends: { items: string[]; batch: number }[][] = [];
  await sendPlannedBatches(plan, replan, async (batches) => void sends.push(batches));
  return sends;
}

describe('sendPlannedBatches', () => {
  test('a provisional plan sends its lead batches, then what the new plan makes of the rest, numbered on', async () => {
    const plan = { batches: batchesOf(6), provisional: true };
    const asked: string[][] = [];
    const sends = await record(plan, async (sent) => {
      asked.push(sent);
      return { batches: [['e6', 'e7', 'e8', 'e9', 'e10', 'e11']] };
    });
    expect(asked).toEqual([plan.batches.slice(0, LEAD_BATCHES).flat()]);
    expect(sends).toEqual([
      plan.batches.slice(0, LEAD_BATCHES).map((items, batch) => ({ items, batch })),
      [{ items: ['e6', 'e7', 'e8', 'e9', 'e10', 'e11'], batch: LEAD_BATCHES }],
    ]);
  });

  test('a calibrated plan, a small one, or no replan (an older workflow): every batch at once', async () => {
    const replan = jest.fn(async () => ({ batches: [] as string[][] }));
    for (const plan of [
      { batches: batchesOf(6), provisional: false },
      { batches: batchesOf(LEAD_BATCHES), provisional: true },
    ]) {
      const sends = await record(plan, replan);
      expect(sends).toEqual([plan.batches.map((items, batch) => ({ items, batch }))]);
    }
    expect(replan).not.toHaveBeenCalled();
    const plan = { batches: batchesOf(6), provisional: true };
    expect(await record(plan, null)).toEqual([plan.batches.map((items, batch) => ({ items, batch }))]);
  });

  test('when the rest cannot be planned again, the first plan sends its remaining batches as they were', async () => {
    const plan = { batches: batchesOf(5), provisional: true };
    const sends = await record(plan, async () => null);
    expect(sends.flat()).toEqual(plan.batches.map((items, batch) => ({ items, batch })));
  });
});
