import type { Command } from 'commander';
import { registerEvalCommand } from '../../eval/arbiter';

/**
 * `argus eval arbiter`: the harness lives with its case data in eval/ (it also runs on its own there), and
 * registers its own options.
 */
export function addEvalCommand(program: Command): void {
  registerEvalCommand(program);
}
