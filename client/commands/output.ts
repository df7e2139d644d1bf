// How a command answers: its result on stdout, everything else on stderr, and an exit code scripts rely on.
import type { SweepReport } from '../../domain/report';

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2, partial: 3 } as const;

export const EXIT_HELP =
  `Exit codes: ${EXIT.ok} complete, ${EXIT.partial} partial (the report says why), ${EXIT.failed} failed, ` +
  `${EXIT.usage} bad usage or input.`;

/** The exit code of a command that printed a sweep's report: partial or complete. */
export const exitFor = (r: SweepReport): number => (r.partial ? EXIT.partial : EXIT.ok);

export function err(msg: string): void {
  process.stderr.write(msg + '\n');
}

export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}
