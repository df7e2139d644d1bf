/**
 * How much of its output reserve a model's batch answers really take, per model and task, learned from the
 * answers this worker has received. estimateEntityTokens reserves for the longest answer an entity could get (45
 * tokens per undescribed column, a finding per upstream…); most answers take far less, and a batch planned on the
 * reserve alone is cut at a third of what max_tokens would hold. Once a few answers have come, batches are planned
 * on a high percentile of what answers took of their reserve, with a margin; an answer cut off at max_tokens
 * counts as taking more than all of it (so the scale goes back to 1), and what it lacked is asked alone. Kept in
 * this worker's memory (bounded: MAX_KEYS keys of RECENT ratios) and shared through the state store's
 * CalibrationBook, so a restarted worker, or another of the fleet, starts where the last answers left it.
 */
export class OutputCalibration {
  static readonly RECENT = 32;
  static readonly MAX_KEYS = 256;
  /** Answers seen before the reserve is scaled at all. */
  static readonly MIN_ANSWERS = 3;
  /** The scale never goes below this share of the reserve, nor above the whole of it. */
  static readonly FLOOR = 0.25;
  static readonly MARGIN = 1.25;
  private readonly seen = new Map<string, number[]>();

  /** The key of a model and task, in memory and in the state store's CalibrationBook. */
  static key(model: string, task: string): string {
    return `${model}|${task}`;
  }

  /** The ratios known of a model and task, oldest first (a copy; empty when none). */
  ratios(model: string, task: string): number[] {
    return [...(this.seen.get(OutputCalibration.key(model, task)) ?? [])];
  }

  /**
   * Take ratios learnt elsewhere (the state store: an earlier run, another worker) for a model and task this
   * worker knows fewer answers of; what is not a ratio is ignored, and at most RECENT are kept.
   */
  adopt(model: string, task: string, ratios: readonly unknown[]): void {
    const valid = ratios.filter((r): r is number => typeof r === 'number' && Number.isFinite(r) && r >= 0);
    const key = OutputCalibration.key(model, task);
    if (valid.length <= (this.seen.get(key)?.length ?? 0)) return;
    this.put(key, valid);
  }

  /** One batch answer: the completion tokens it took of the output tokens reserved for what it was asked. */
  record(model: string, task: string, used: number, reserved: number, cutShort: boolean): void {
    if (!(reserved > 0) || !(used >= 0)) return;
    const key = OutputCalibration.key(model, task);
    const ratio = cutShort ? Math.max(1.5, used / reserved) : used / reserved;
    this.put(key, [...(this.seen.get(key) ?? []), ratio]);
  }

  /** A key's ratios, its last RECENT, made the most recent key; beyond MAX_KEYS the least recent key goes. */
  private put(key: string, ratios: number[]): void {
    this.seen.delete(key);
    this.seen.set(key, ratios.slice(-OutputCalibration.RECENT));
    if (this.seen.size > OutputCalibration.MAX_KEYS) this.seen.delete(this.seen.keys().next().value!);
  }

  /** Whether MIN_ANSWERS answers are known of `task` for every one of `models` (none: never known). */
  known(models: readonly string[], task: string): boolean {
    return (
      models.length > 0 &&
      models.every((m) => (this.seen.get(OutputCalibration.key(m, task))?.length ?? 0) >= OutputCalibration.MIN_ANSWERS)
    );
  }

  /**
   * The share of its reserve an entity is planned at for `task` on any of `models` (a batch may go to any of the
   * sweep's endpoints: the largest of theirs). 1 until MIN_ANSWERS answers are known for every model.
   */
  scale(models: readonly string[], task: string): number {
    if (!this.known(models, task)) return 1;
    let scale = 0;
    for (const model of models) {
      const sorted = [...this.seen.get(OutputCalibration.key(model, task))!].sort((a, b) => a - b);
      const p90 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)]!;
      scale = Math.max(scale, p90 * OutputCalibration.MARGIN);
    }
    return Math.min(1, Math.max(OutputCalibration.FLOOR, scale));
  }
}

/** An entity's batch cost with its output reserve planned at `scale` (OutputCalibration.scale). */
export function scaleOutput(
  cost: { prompt: number; output: number },
  scale: number,
): { prompt: number; output: number } {
  return { prompt: cost.prompt, output: Math.ceil(cost.output * scale) };
}
