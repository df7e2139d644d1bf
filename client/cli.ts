#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import { projectRoot } from '../activities/paths';
import { InputError } from './sweeps';
import { SweepFailedError } from './failures';
import { EXIT, EXIT_HELP, err } from './commands/output';
import { addDemoCommand } from './commands/demo';
import { addSweepCommand } from './commands/sweep';
import { addReportCommand } from './commands/report';
import { addUndoCommand } from './commands/undo';
import { addScheduleCommand } from './commands/schedule';
import { addReviewCommand } from './commands/review';
import { addFakeProviderCommand } from './commands/fake-provider';
import { addEvalCommand } from './commands/eval';

/** The version in ARGUS's package.json (source checkout or installed package alike). */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The `argus` program: its name, version and help, and each command of commands/ in the order help lists them. */
export function buildProgram(): Command {
  const program = new Command('argus')
    .description(
      'ARGUS keeps a data catalog honest: sweeps on Temporal with agents, an Arbiter and exactly-once writes.',
    )
    .version(packageVersion(), '-V, --version', 'print the ARGUS version')
    .showHelpAfterError()
    // Usage errors exit 2 (scripts rely on it); help exits 0.
    .exitOverride()
    .addHelpText(
      'after',
      `\n${EXIT_HELP}\n` +
        'Connection: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_* or a temporal.toml profile (TEMPORAL_PROFILE).\n' +
        'Every command has --help. Docs: docs/cli.md.',
    );

  addDemoCommand(program);
  addSweepCommand(program);
  addReportCommand(program);
  addUndoCommand(program);
  addScheduleCommand(program);
  addReviewCommand(program);
  addFakeProviderCommand(program);
  addEvalCommand(program);
  return program;
}

/** Exit code for an error that escaped a command. */
export function exitCodeFor(e: unknown): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (e instanceof InputError) return EXIT.usage;
  if (e instanceof SweepFailedError) return e.exitCode;
  return EXIT.failed;
}

if (require.main === module) {
  // `argus … | head`: a reader that stops early closes the pipe; that ends the output, not with a crash.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  buildProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      if (!(e instanceof CommanderError)) {
        const msg =
          e instanceof WorkflowNotFoundError
            ? `no workflow ${e.workflowId}${e.runId ? ` (run ${e.runId})` : ''}`
            : e instanceof ScheduleNotFoundError
              ? `no schedule ${e.scheduleId}`
              : ((e as Error).message ?? String(e));
        err(`argus: ${msg}`);
      }
      process.exitCode = exitCodeFor(e);
    });
}
