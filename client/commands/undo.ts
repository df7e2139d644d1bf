import type { Command } from 'commander';
import { undoSweep } from '../../activities/undo';
import { defaultStateDir } from '../../activities/paths';
import { openStateStore } from '../../state/open';

/** `argus undo <sweep-id>`: one sweep's writes taken back from its audit trail. */
export function addUndoCommand(program: Command): void {
  program
    .command('undo <sweep-id>')
    .description(
      "Undo one sweep's writes using the audit log (values changed since are left alone and listed). Reads the " +
        'PostgreSQL state store when ARGUS_STATE_URL is set, else the state folder.',
    )
    .option('--state-dir <dir>', 'ARGUS state folder', defaultStateDir())
    .option('--json', 'print JSON')
    .action(async (id: string, o: { stateDir: string; json?: boolean }) => {
      // The sweep's audit trail is where its workers kept state: PostgreSQL when ARGUS_STATE_URL is set.
      const store = await openStateStore({
        stateDir: o.stateDir,
        stateUrl: process.env.ARGUS_STATE_URL,
        stateSchema: process.env.ARGUS_STATE_SCHEMA,
      });
      let res;
      try {
        res = await undoSweep(store, id, { stateDir: o.stateDir });
      } finally {
        await store.close();
      }
      if (o.json) process.stdout.write(JSON.stringify(res, null, 2) + '\n');
      else
        for (const r of res) {
          process.stdout.write(
            `Undid ${r.undone} writes of ${r.sweepId} in ${r.catalog}${r.alreadyUndone ? ` (${r.alreadyUndone} already undone)` : ''}` +
              (r.answersForgotten ? `; forgot the ${r.answersForgotten} model answers it used` : '') +
              '\n',
          );
          for (const cf of r.conflicts) process.stdout.write(`  left alone: ${cf.proposalId}: ${cf.note}\n`);
        }
    });
}
