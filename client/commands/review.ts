import type { Command } from 'commander';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { pendingReviews, renderPendingTable, reviewDecisions, sendDecisions, type ReviewDecision } from '../review';
import { addReviewServeCommand } from '../review-server';
import { newStewardToken } from '../review-stewards';
import { withClient } from '../connect';
import { InputError } from '../sweeps';
import { EXIT, err, out } from './output';
import { forgetDecision } from '../../activities/forget-decision';
import { defaultStateDir } from '../../activities/paths';
import { openStateStore } from '../../state/open';

async function reviewDecide(
  sweepId: string,
  ids: string[],
  decision: ReviewDecision,
  o: { reviewer: string; comment?: string; all?: boolean; json?: boolean },
): Promise<void> {
  if (o.all && ids.length) throw new InputError('give proposal ids or --all, not both');
  await withClient(async (c) => {
    const chosen = o.all ? (await pendingReviews(c.client, sweepId)).map((p) => p.proposalId) : ids;
    if (o.all && chosen.length === 0) {
      out(o.json ? JSON.stringify({ accepted: 0, stillPending: 0 }) : 'No proposal is waiting for review.');
      return;
    }
    const input = reviewDecisions(chosen, decision, o.reviewer, { comment: o.comment });
    let res;
    try {
      res = await sendDecisions(c.client, sweepId, input);
    } catch (e) {
      if (e instanceof WorkflowUpdateFailedError)
        throw new InputError(`the sweep refused the decisions: ${e.cause?.message ?? e.message}`);
      throw e;
    }
    if (o.json) out(JSON.stringify(res));
    else
      out(
        `${decision.replace('_', ' ')}: ${input.decisions.length} proposal(s) by ${o.reviewer}; ` +
          `the sweep accepted ${res.accepted}, ${res.stillPending} still pending.`,
      );
  });
}

/** `argus review list|approve|reject|serve|steward-token`: human review of running sweeps. */
export function addReviewCommand(program: Command): void {
  const review = program
    .command('review')
    .description('Human review of a running sweep: list what waits for a person, approve or reject it.');
  review
    .command('list <sweep-id>')
    .description('List the proposals waiting for a human decision (the pendingReviews query).')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      await withClient(async (c) => {
        const rows = await pendingReviews(c.client, id);
        out(o.json ? JSON.stringify(rows, null, 2) : renderPendingTable(rows));
      });
    });
  const decide = (name: 'approve' | 'reject') => {
    const cmd = review
      .command(`${name} <sweep-id> [proposal-ids...]`)
      .description(
        `${name === 'approve' ? 'Approve' : 'Reject'} proposals (the review update; several ids or --all in one update).`,
      )
      .requiredOption('--reviewer <name>', 'who decides (kept in the audit trail)')
      .option('--comment <text>', 'why')
      .option('--all', 'every proposal pending now')
      .option('--json', 'print JSON {accepted, stillPending}');
    if (name === 'reject') cmd.option('--needs-changes', 'record the decision as needs_changes rather than rejected');
    cmd.addHelpText(
      'after',
      `\nExit codes: ${EXIT.ok} accepted, ${EXIT.usage} refused (unknown or already decided ids, bad input), ${EXIT.failed} error.`,
    );
    cmd.action(
      async (
        id: string,
        ids: string[],
        o: { reviewer: string; comment?: string; all?: boolean; json?: boolean; needsChanges?: boolean },
      ) => reviewDecide(id, ids, name === 'approve' ? 'approved' : o.needsChanges ? 'needs_changes' : 'rejected', o),
    );
  };
  decide('approve');
  decide('reject');
  addReviewServeCommand(review);
  review
    .command('forget <proposal-id>')
    .description(
      "Take back a person's decision on a proposal: its entity, and every entity a tag was rejected on for the same " +
        'shape, are judged afresh by the next sweep. Reads the PostgreSQL state store when ARGUS_STATE_URL is set, ' +
        'else the state folder.',
    )
    .requiredOption('--sweep <sweep-id>', 'a sweep of the catalog (the one whose report names the decision)')
    .option('--state-dir <dir>', 'ARGUS state folder', defaultStateDir())
    .option('--json', 'print JSON {proposalId, catalog, forgotten}')
    .action(async (proposalId: string, o: { sweep: string; stateDir: string; json?: boolean }) => {
      const store = await openStateStore({
        stateDir: o.stateDir,
        stateUrl: process.env.ARGUS_STATE_URL,
        stateSchema: process.env.ARGUS_STATE_SCHEMA,
      });
      try {
        const r = await forgetDecision(store, o.sweep, proposalId);
        out(
          o.json
            ? JSON.stringify(r)
            : `Forgot the decision on ${r.proposalId} in ${r.catalog}: ${r.forgotten.length} entities are judged afresh ` +
                `next sweep (${r.forgotten.slice(0, 5).join(', ')}${r.forgotten.length > 5 ? ', …' : ''})`,
        );
      } catch (e) {
        err(`argus review forget: ${(e as Error).message}`);
        process.exitCode = EXIT.usage;
      } finally {
        await store.close();
      }
    });
  review
    .command('steward-token <name>')
    .description(
      'Make a steward a token of their own: prints it once, and the line to add to the stewards file (--stewards).',
    )
    .option('--json', 'print JSON {name, token, line}')
    .addHelpText(
      'after',
      '\nThe token is shown only now; the file keeps its SHA-256 digest. Give the token to the steward, add the line to ' +
        'the stewards file, and restart `argus review serve` (it reads the file at start). A name is one word of ' +
        'letters, digits and . _ @ + - (e.g. dana@example.org); decisions record it as human:<name>.',
    )
    .action((name: string, o: { json?: boolean }) => {
      const { token, line } = newStewardToken(name);
      if (o.json) return out(JSON.stringify({ name, token, line }));
      // The token on stderr, the line on stdout: `argus review steward-token dana >> stewards.txt` shows the token
      // to whoever runs it and keeps only the digest.
      err(`Token for ${name} (shown only this once: give it to ${name}, who types it on the review page):\n  ${token}`);
      err('Add this line (printed on stdout) to the stewards file, then restart `argus review serve`:');
      out(line);
    });
}
