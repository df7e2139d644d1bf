import { setCurrentDetails, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { HumanReviewSummary, IncrementalSummary, SweepReport } from '../../domain/report';
import { reportActivities, REPORT_OPTIONS } from '../activities';
import { SA_KEYS } from '../messages';
import type { Sweep } from './state';
import type { RememberInput } from './incremental';

/**
 * The sweep's report, built by `finalizeSweep` from the ledger and what only the workflow knows (failures of whole
 * activities, retired endpoints, the passes, the wait for people), and its verdict said where people look: the
 * `ArgusPartial` search attribute, the memo (persisted with the run) and the live details.
 */
export async function finishReport(
  sweep: Sweep,
  told: { incremental?: IncrementalSummary; humanReview?: HumanReviewSummary; remember?: RememberInput },
): Promise<SweepReport> {
  const { cfg, state, sweepId, progress } = sweep;
  const breakerTripped = sweep.rotation.breakerTripped && (cfg.review === 'model' || cfg.agentBackend === 'model');
  progress.breakerTripped = breakerTripped;
  const report = await reportActivities.finalizeSweep.executeWithOptions(
    { ...REPORT_OPTIONS, summary: 'build the sweep report' },
    [
      {
        ledgerKey: state.ledgerKey,
        sweepId,
        mode: cfg.review,
        dryRun: cfg.dryRun,
        requested: state.entityCount,
        workflowFailures: state.failures,
        workflowFailuresDropped: state.failuresDropped,
        retired: state.retired,
        breakerTripped,
        executions: state.execution,
        extraPartialReasons: [],
        ...(state.deferred ? { deferred: state.deferred } : {}),
        ...(told.incremental && state.incremental
          ? { incremental: told.incremental, roundFirstPages: state.incremental.rounds.map((r) => r.firstPage) }
          : {}),
        ...(told.humanReview ? { humanReview: told.humanReview } : {}),
        ...(told.remember ? { remember: told.remember } : {}),
      },
    ],
  );
  upsertSearchAttributes([{ key: SA_KEYS.partial, value: report.partial }]);
  upsertMemo({ summary: memoOf(report, sweepId) });
  progress.phase = 'done';
  setCurrentDetails(detailsOf(report, sweepId));
  return report;
}

/** The verdict persisted with the run (unlike the live details): readable in the Web UI after every worker stopped. */
function memoOf(report: SweepReport, sweepId: string) {
  return {
    verdict: report.partial ? 'PARTIAL' : 'COMPLETE',
    reason: report.partial
      ? report.partialReasons.join('; ').slice(0, 1500)
      : report.deferred
        ? `everything it chose to do was done; ${report.deferred.count} entities deferred to the next sweep to fit the model budget`
        : 'everything asked was done',
    ...(report.deferred ? { deferred: report.deferred.count } : {}),
    ...(report.incremental
      ? {
          incremental: {
            new: report.incremental.new,
            changed: report.incremental.changed,
            unchanged: report.incremental.unchanged,
            gone: report.incremental.gone,
            carriedOver: report.incremental.carriedOver,
            rounds: report.incremental.rounds,
            ...(report.incremental.failSafe ? { failSafe: report.incremental.failSafe.slice(0, 500) } : {}),
          },
        }
      : {}),
    fullReport: `argus report ${sweepId} --format html --out report.html (or the file ${report.reportFile})`,
    reportFile: report.reportFile,
    partial: report.partial,
    partialReasons: report.partialReasons.slice(0, 5).map((r) => r.slice(0, 600)),
    entities: report.entities,
    outcomes: report.outcomes,
    written: report.written,
    coverage: { before: report.coverage.descriptionsBefore, after: report.coverage.descriptionsAfter },
    piiGovernance: report.piiGovernance.ratio,
    ...(report.humanReview
      ? {
          humanReview: {
            waited: report.humanReview.waited,
            approved: report.humanReview.approved,
            rejected: report.humanReview.rejected,
            expired: report.humanReview.expired,
            waitedMs: report.humanReview.waitedMs,
          },
        }
      : {}),
    // Totals only (bounded): the per-agent and per-endpoint split is in the report.
    ...(report.modelUsage && report.modelUsage.calls > 0
      ? {
          modelUsage: {
            calls: report.modelUsage.calls,
            promptTokens: report.modelUsage.promptTokens,
            completionTokens: report.modelUsage.completionTokens,
            estimatedCalls: report.modelUsage.estimatedCalls,
          },
        }
      : {}),
  };
}

/** The verdict in the Web UI's details: partial or complete and why, the counts, and where the full report is. */
function detailsOf(report: SweepReport, sweepId: string): string {
  return (
    `${report.partial ? '**PARTIAL** — ' + report.partialReasons.join('; ') : '**Complete**'}` +
    (report.deferred ? ` — ${report.deferred.count} entities deferred to the next sweep (model budget)` : '') +
    '\n\n' +
    (report.catalogNotes?.length ? `Catalog: ${report.catalogNotes.join(' ').slice(0, 800)}\n\n` : '') +
    `${report.entities.processed}/${report.entities.requested} entities processed; approved ${report.outcomes.approved}, ` +
    `rejected ${report.outcomes.rejected}, not reviewed ${report.outcomes.not_reviewed}; written ${report.written}.\n\n` +
    (report.incremental
      ? `Since the last sweep: ${report.incremental.new} new, ${report.incremental.changed} changed, ` +
        `${report.incremental.unchanged} unchanged (${report.incremental.carriedOver} carried over), ${report.incremental.gone} gone.\n\n`
      : '') +
    `Full report: \`argus report ${sweepId} --format html --out report.html\` (file: ${report.reportFile}). ` +
    "The same verdict is kept in this run's memo (summary), readable after the worker stops."
  );
}
