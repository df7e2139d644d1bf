import { parseSweepInput, type SweepConfig } from '../../domain/sweep';
import { invalidInput } from '../failures';
import type { SweepCarry } from './state';

/**
 * The sweep's config, parsed once per run. A fresh start hands the raw SweepInput, parsed here: invalid input fails
 * the sweep at once with InvalidSweepInput naming the fields. So does an execution continued as new by an ARGUS
 * from before parse-once (its carry says nothing of its input). An execution this code continued as new hands the
 * config its predecessor parsed (`carry.input === 'config'`), taken as it is.
 */
export function sweepConfigOf(input: unknown, carry: SweepCarry | undefined): SweepConfig {
  if (carry?.input === 'config') return input as SweepConfig;
  const parsed = parseSweepInput(input);
  if (!parsed.ok) throw invalidInput('sweep input', parsed);
  return parsed.value;
}
