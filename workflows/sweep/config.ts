import { parseSweepInput, type SweepConfig } from '../../domain/sweep';
import { invalidInput } from '../failures';

/** The sweep's input, parsed: invalid input fails the sweep at once with InvalidSweepInput naming the fields. */
export function sweepConfigOf(input: unknown): SweepConfig {
  const parsed = parseSweepInput(input);
  if (!parsed.ok) throw invalidInput('sweep input', parsed);
  return parsed.value;
}
