import {
  ApplicationFailure,
  patched,
  setCurrentDetails,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { effectivePageSize, type SweepConfig } from '../../domain/sweep';
import { catalogActivities, planActivities, REPORT_OPTIONS } from '../activities';
import { failureOf } from '../failures';
import { SA_KEYS, type SweepProgress } from '../messages';
import { detectChanges, detectInput, incrementalCarry } from './incremental';
import type { SweepCarry } from './state';

/**
 * The sweep's first step, in its first execution: open the catalog, detect what changed since the memory (patch
 * incremental-v1), fit a `fitBudget` sweep to what its endpoints have left, and size the pages. A catalog that
 * cannot be opened fails the sweep at once, non-retryable, with the root cause. Returns the state to carry on.
 */
export async function openSweep(cfg: SweepConfig, sweepId: string, progress: SweepProgress): Promise<SweepCarry> {
  const ledgerKey = `${sweepId}@${workflowInfo().firstExecutionRunId}`;
  let opened: Awaited<ReturnType<typeof catalogActivities.openCatalog>>;
  // Change detection in the same step as the opening (patch open-detects-v1): one step fewer for every sweep.
  const detectInOpen = patched('open-detects-v1');
  try {
    const args = {
      sweepId,
      ledgerKey,
      catalog: cfg.catalog,
      ...(cfg.sampleValues ? { sampleRows: cfg.sampleValues.rows } : {}),
    };
    // With detection, the first pass's timeouts: it fingerprints the whole catalog.
    opened = detectInOpen
      ? await catalogActivities.openCatalog.executeWithOptions(
          { ...REPORT_OPTIONS, summary: 'open the catalog and detect what changed since the last sweep' },
          [{ ...args, detect: detectInput(cfg) }],
        )
      : await catalogActivities.openCatalog(args);
  } catch (err) {
    // The sweep cannot start: fail with the root cause itself (say, "catalog file not found: /x"), not the
    // activity wrapper, so the CLI, `sweep status` and the Web UI all show what a person can act on.
    const f = failureOf(err);
    const message = `cannot open the catalog: ${f.message}`;
    setCurrentDetails(`**FAILED** — ${message}`);
    if (patched('failure-memo-v1'))
      upsertMemo({ summary: { verdict: 'FAILED', failure: f.category, reason: message.slice(0, 2000) } });
    throw ApplicationFailure.create({ type: f.category, message, nonRetryable: true });
  }
  const state: SweepCarry = {
    ledgerKey,
    catalogName: opened.catalogName,
    entityCount: 0,
    pageSize: 0,
    pageCount: 0,
    nextPage: 0,
    execution: 1,
    failures: [],
    failuresDropped: 0,
    retired: [],
    counts: { approved: 0, rejected: 0, notReviewed: 0, written: 0, entitiesDone: 0, pagesDone: 0 },
  };
  /** The entities this sweep judges, in pages of the size asked for (else a tenth of them, within [100, 1000]). */
  const judge = (count: number) => {
    state.entityCount = count;
    state.pageSize = effectivePageSize(cfg.pageSize, count);
    state.pageCount = Math.ceil(count / state.pageSize);
  };
  judge(opened.entityCount);
  if (patched('incremental-v1')) {
    state.incremental = opened.detected ? incrementalCarry(cfg, opened.detected) : await detectChanges(cfg, ledgerKey);
    judge(state.incremental.summary.judged);
  }
  if (cfg.fitBudget) {
    // Plan before any call; sweep what fits (the plan stores the choice as the sweep's selection).
    const plan = await planActivities.planSweep.executeWithOptions(
      { ...REPORT_OPTIONS, summary: 'fit the sweep to its model budget' },
      [{ config: cfg, ledgerKey }],
    );
    judge(plan.fitting);
    if (state.incremental) state.incremental.rounds = [{ firstPage: 0, count: plan.fitting }];
    if (plan.deferred > 0)
      state.deferred = { count: plan.deferred, first: plan.firstDeferred, verdict: plan.verdict, plan: plan.text };
  }
  progress.catalog = state.catalogName;
  progress.pageCount = state.pageCount;
  progress.entitiesRequested = state.entityCount;
  upsertSearchAttributes([
    { key: SA_KEYS.catalog, value: state.catalogName },
    { key: SA_KEYS.mode, value: cfg.review },
  ]);
  return state;
}
