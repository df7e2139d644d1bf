import { OutputCalibration } from '../../activities/model/calibration';

// Batches planned on what answers really take of their reserve, learned per model and task, never below the
// floor, and back to the whole reserve after an answer cut off at max_tokens.

describe('OutputCalibration', () => {
  test('the whole reserve until enough answers are known, for every model a batch may go to', () => {
    const c = new OutputCalibration();
    expect(c.scale(['m'], 'describe')).toBe(1);
    for (let i = 1; i < OutputCalibration.MIN_ANSWERS; i++) c.record('m', 'describe', 40, 100, false);
    expect(c.scale(['m'], 'describe')).toBe(1);
    c.record('m', 'describe', 40, 100, false);
    expect(c.scale(['m'], 'describe')).toBeCloseTo(0.4 * OutputCalibration.MARGIN);
    // Another task, or a second model not seen yet: nothing known, the whole reserve.
    expect(c.scale(['m'], 'review')).toBe(1);
    expect(c.scale(['m', 'other'], 'describe')).toBe(1);
    expect(c.scale([], 'describe')).toBe(1);
    expect(c.known(['m'], 'describe')).toBe(true);
    expect(c.known(['m', 'other'], 'describe')).toBe(false);
    expect(c.known(['m'], 'review')).toBe(false);
    expect(c.known([], 'describe')).toBe(false);
  });

  test('a high percentile of recent answers, not their mean: two wordy answers in ten set the scale', () => {
    const c = new OutputCalibration();
    for (let i = 0; i < 9; i++) c.record('m', 't', 20, 100, false);
    c.record('m', 't', 60, 100, false);
    expect(c.scale(['m'], 't')).toBeCloseTo(0.2 * OutputCalibration.MARGIN);
    c.record('m', 't', 60, 100, false);
    expect(c.scale(['m'], 't')).toBeCloseTo(0.6 * OutputCalibration.MARGIN);
    // Only the RECENT last answers count.
    for (let i = 0; i < OutputCalibration.RECENT; i++) c.record('m', 't', 30, 100, false);
    expect(c.scale(['m'], 't')).toBeCloseTo(0.3 * OutputCalibration.MARGIN);
  });

  test('never below the floor, never above the whole reserve; the largest of the models wins', () => {
    const c = new OutputCalibration();
    for (let i = 0; i < 5; i++) {
      c.record('terse', 't', 1, 100, false);
      c.record('wordy', 't', 300, 100, false);
      c.record('mid', 't', 40, 100, false);
    }
    expect(c.scale(['terse'], 't')).toBe(OutputCalibration.FLOOR);
    expect(c.scale(['wordy'], 't')).toBe(1);
    expect(c.scale(['terse', 'mid'], 't')).toBeCloseTo(0.4 * OutputCalibration.MARGIN);
  });

  test('an answer cut off at max_tokens puts the whole reserve back', () => {
    const c = new OutputCalibration();
    for (let i = 0; i < 20; i++) c.record('m', 't', 20, 100, false);
    expect(c.scale(['m'], 't')).toBeLessThan(1);
    for (let i = 0; i < 3; i++) c.record('m', 't', 90, 100, true);
    expect(c.scale(['m'], 't')).toBe(1);
  });

  test('nothing is learnt from a batch with no reserve, and the keys it keeps are bounded', () => {
    const c = new OutputCalibration();
    for (let i = 0; i < 5; i++) c.record('m', 't', 50, 0, false);
    expect(c.scale(['m'], 't')).toBe(1);
    for (let k = 0; k < OutputCalibration.MAX_KEYS + 10; k++)
      for (let i = 0; i < 3; i++) c.record(`m${k}`, 't', 50, 100, false);
    // The oldest keys are forgotten (back to the whole reserve), the newest kept.
    expect(c.scale(['m0'], 't')).toBe(1);
    expect(c.scale([`m${OutputCalibration.MAX_KEYS + 9}`], 't')).toBeCloseTo(0.5 * OutputCalibration.MARGIN);
  });
});

describe('sharing the calibration (the state store)', () => {
  test('ratios read back as learnt; adopted only where this worker knows fewer, and never what is not a ratio', () => {
    const learnt = new OutputCalibration();
    for (const used of [30, 40, 50]) learnt.record('m', 'describe', used, 100, false);
    expect(learnt.ratios('m', 'describe')).toEqual([0.3, 0.4, 0.5]);
    expect(learnt.ratios('m', 'review')).toEqual([]);

    const fresh = new OutputCalibration();
    fresh.adopt('m', 'describe', learnt.ratios('m', 'describe'));
    expect(fresh.known(['m'], 'describe')).toBe(true);
    expect(fresh.scale(['m'], 'describe')).toBeCloseTo(learnt.scale(['m'], 'describe'));

    // A worker that knows more keeps its own.
    for (let i = 0; i < 5; i++) fresh.record('m', 'describe', 20, 100, false);
    fresh.adopt('m', 'describe', [0.9, 0.9, 0.9]);
    expect(fresh.ratios('m', 'describe')).toHaveLength(8);

    // A stored list spoiled by hand: only finite, non-negative numbers count, at most RECENT of them.
    const other = new OutputCalibration();
    other.adopt('m', 't', [0.5, 'x', null, -1, Number.NaN, 0.25]);
    expect(other.ratios('m', 't')).toEqual([0.5, 0.25]);
    other.adopt(
      'm',
      'u',
      Array.from({ length: OutputCalibration.RECENT + 10 }, (_, i) => i / 100),
    );
    expect(other.ratios('m', 'u')).toHaveLength(OutputCalibration.RECENT);
    expect(other.ratios('m', 'u')[0]).toBe(0.1);
  });
});
