import { patched, setCurrentDetails, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { HumanReviewSummary, IncrementalSummary, SweepReport } from '../../domain/report';
import { reportActivities, REPORT_OPTIONS } from '../activities';
import { failureOf } from '../failures';
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
  let report: SweepReport;
  try {
    report = await reportActivities.finalizeSweep.executeWithOptions(
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
  } catch (err) {
    // The repairs are written and audited: a report that cannot be built (its ledger unreadable, its store gone)
    // ends the sweep partial with what the workflow itself counted, never FAILED.
    if (!patched('report-fallback-v1')) throw err;
    report = countedReport(sweep, told, failureOf(err).message);
  }
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
    ...(report.notRecorded?.length ? { notRecorded: report.notRecorded.slice(0, 3).map((r) => r.slice(0, 600)) } : {}),
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
    (report.notRecorded?.length ? `Not recorded: ${report.notRecorded.join('; ').slice(0, 800)}\n\n` : '') +
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

/**
 * The report when `finalizeSweep` could not build one: the counts the workflow kept (outcomes, writes, entities)
 * and what it knows (failures of whole activities, retired endpoints, the passes), partial, saying the figures,
 * the proposals and the memory are missing and why. The repairs it counts are written and audited.
 */
function countedReport(
  sweep: Sweep,
  told: { incremental?: IncrementalSummary; humanReview?: HumanReviewSummary },
  why: string,
): SweepReport {
  const { cfg, state, sweepId } = sweep;
  const c = state.counts;
  const zero = () => ({ proposed: 0, approved: 0, rejected: 0, not_reviewed: 0, written: 0 });
  const failed = new Set(state.failures.map((f) => f.entity)).size;
  const incremental = told.incremental
    ? {
        ...told.incremental,
        note:
          (told.incremental.note ? `${told.incremental.note}; ` : '') +
          'the memory was not written: the next sweep judges in full',
      }
    : undefined;
  return {
    reportVersion: 1,
    sweepId,
    catalog: state.catalogName,
    mode: cfg.review,
    dryRun: cfg.dryRun,
    startedAt: workflowInfo().startTime.toISOString(),
    finishedAt: new Date().toISOString(),
    partial: true,
    partialReasons: [
      `the report could not be built (${why.slice(0, 400)}): the counts below are the workflow's own; the coverage ` +
        'and PII figures, the proposals and the failures of single entities are not known, and the memory was not ' +
        'written (the next sweep judges in full). The repairs counted as written are in the catalog and the audit log',
    ],
    notRecorded: ['the report (figures, proposals, entity failures)', 'the memory'],
    entities: { requested: state.entityCount, processed: Math.max(0, state.entityCount - failed), failed },
    outcomes: { approved: c.approved, rejected: c.rejected, not_reviewed: c.notReviewed },
    byKind: { description: zero(), pii_tag: zero(), lineage_flag: zero() },
    written: c.written,
    alreadyApplied: 0,
    keptHumanText: 0,
    writesFailed: 0,
    coverage: {
      descriptionsBefore: 0,
      descriptionsAfter: 0,
      describedBefore: 0,
      describedAfter: 0,
      describable: 0,
      sources: { human: 0, inherited: 0, derived: 0, model: 0 },
      restatementsNotCounted: 0,
    },
    piiGovernance: { tagged: 0, piiLooking: 0, ratio: 0, taggedBefore: 0 },
    failures: state.failures.slice(0, 500),
    failuresTruncated: Math.max(0, state.failures.length - 500) + state.failuresDropped,
    endpoints: { retired: state.retired, breakerTripped: sweep.rotation.breakerTripped },
    modelUsage: {
      calls: 0,
      promptTokens: 0,
      completionTokens: 0,
      estimatedCalls: 0,
      perEntity: { calls: 0, promptTokens: 0, completionTokens: 0 },
      byAgent: {},
      byEndpoint: {},
    },
    ...(told.humanReview ? { humanReview: told.humanReview } : {}),
    ...(state.deferred ? { deferred: state.deferred } : {}),
    ...(incremental ? { incremental } : {}),
    proposals: [],
    proposalsTruncated: 0,
    reportFile: '(not written)',
    executions: state.execution,
  };
}
