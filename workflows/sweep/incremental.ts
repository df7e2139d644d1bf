import { log, patched } from '@temporalio/workflow';
import { judgmentSettingsOf, passOfPage, type SweepConfig } from '../../domain/sweep';
import type { IncrementalSummary } from '../../domain/report';
import { catalogActivities, REPORT_OPTIONS } from '../activities';
import { failureOf } from '../failures';
import type { IncrementalCarry, Sweep, SweepCarry } from './state';

// Memory across sweeps, and the passes of one sweep: change detection before any judgment, the passes that judge
// again what this sweep's own writes changed (so that it reaches its fixed point), and what the sweep remembers.

/** Change detection before any judgment (patch incremental-v1): what is new or changed since the memory, and what is carried over. */
export async function detectChanges(cfg: SweepConfig, ledgerKey: string): Promise<IncrementalCarry> {
  const d = await catalogActivities.detectChanges.executeWithOptions(
    {
      ...REPORT_OPTIONS,
      summary: cfg.incremental ? 'detect what changed since the last sweep' : 'fingerprint the catalog (full sweep)',
    },
    [{ ledgerKey, ...detectInput(cfg) }],
  );
  return incrementalCarry(cfg, d);
}

/** The first pass's detection input, but the ledger: what openCatalog runs with the opening (open-detects-v1). */
export function detectInput(cfg: SweepConfig) {
  return {
    round: 0,
    incremental: cfg.incremental,
    goneLimit: cfg.goneLimit,
    judgment: judgmentSettingsOf(cfg),
  };
}

/** What the workflow carries of the first pass's detection. */
export function incrementalCarry(
  cfg: SweepConfig,
  d: Awaited<ReturnType<typeof catalogActivities.detectChanges>>,
): IncrementalCarry {
  return {
    summary: {
      new: d.new,
      changed: d.changed,
      unchanged: d.unchanged,
      gone: d.gone,
      carriedOver: d.carriedOver,
      judged: d.toJudge,
      incremental: cfg.incremental,
      ...(d.note ? { note: d.note } : {}),
      ...(d.failSafe ? { failSafe: d.failSafe } : {}),
    },
    rounds: [{ firstPage: 0, count: d.toJudge }],
    writtenAtRoundStart: 0,
    unsettled: 0,
  };
}

/** The pass a page belongs to: its number (`round`), first page and entity count, and the page's offset in it. */
export function passOf(state: SweepCarry, pageIndex: number) {
  const rounds = state.incremental?.rounds ?? [{ firstPage: 0, count: state.entityCount }];
  const round = passOfPage(
    rounds.map((r) => r.firstPage),
    pageIndex,
  );
  const r = rounds[round]!;
  return { round, firstPage: r.firstPage, offset: (pageIndex - r.firstPage) * state.pageSize, count: r.count };
}

/**
 * The next pass, when the one just finished wrote something: the entities whose fingerprint its writes changed
 * (and their readers) are judged again, so that one sweep reaches its fixed point. Returns whether one starts.
 */
export async function nextPass(sweep: Sweep): Promise<boolean> {
  const { cfg, state } = sweep;
  const inc = state.incremental;
  // A budget-fitted sweep spends what its plan covered, one pass: what its writes changed waits for the next sweep.
  if (!inc || cfg.dryRun || cfg.fitBudget || state.counts.written === inc.writtenAtRoundStart) return false;
  const round = inc.rounds.length;
  // The model the sweep's review or agents need is gone (every endpoint retired): a pass could only leave its
  // proposals not reviewed. None starts, and no detection is paid for: the next sweep judges what the writes changed.
  const modelGone =
    (cfg.review === 'model' || cfg.agentBackend === 'model') &&
    cfg.endpoints.length > 0 &&
    cfg.endpoints.every((e) => state.retired.some((r) => r.endpointId === e.id));
  if (modelGone && patched('no-pass-without-model-v1')) {
    const note = "every endpoint was retired: what this sweep's writes changed is judged by the next sweep";
    inc.summary.note = inc.summary.note ? `${inc.summary.note}; ${note}` : note;
    inc.writtenAtRoundStart = state.counts.written;
    return false;
  }
  // The pass just finished: its pages' PII readings after their evidence writes count (pageFixedPoint).
  const passPages: [number, number] = [inc.rounds[round - 1]!.firstPage, state.pageCount];
  let d: Awaited<ReturnType<typeof catalogActivities.detectChanges>>;
  try {
    d = await catalogActivities.detectChanges.executeWithOptions(
      { ...REPORT_OPTIONS, summary: `pass ${round + 1}: what this sweep's writes changed` },
      [{ ledgerKey: state.ledgerKey, round, ...(patched('page-fixed-point-v1') ? { passPages } : {}) }],
    );
  } catch (err) {
    // The writes stand: a later pass is what the sweep could not start, and the next sweep judges what they changed.
    if (!patched('pass-detection-failure-v1')) throw err;
    const f = failureOf(err);
    const note = `what this sweep's writes changed could not be detected (${f.message.slice(0, 300)}): the next sweep judges it`;
    inc.summary.note = inc.summary.note ? `${inc.summary.note}; ${note}` : note;
    inc.writtenAtRoundStart = state.counts.written;
    return false;
  }
  inc.writtenAtRoundStart = state.counts.written;
  if (d.toJudge === 0) return false;
  // At most `maxPasses` passes (default 3): what the last one's writes changed is counted as unsettled and
  // judged by the next sweep (a description inherited onto a view makes its column a PII candidate).
  if (round >= cfg.maxPasses) {
    inc.unsettled = d.toJudge;
    return false;
  }
  inc.rounds.push({ firstPage: state.pageCount, count: d.toJudge, ...(d.crossPage ? { crossPage: d.crossPage } : {}) });
  state.pageCount += Math.ceil(d.toJudge / state.pageSize);
  sweep.progress.pageCount = state.pageCount;
  return true;
}

/**
 * Writes after the last pass (what people approved, or a budget-fitted sweep's one pass): what they changed is
 * not judged again in this sweep but by the next one, and the report counts it as unsettled.
 */
export async function countUnsettled(sweep: Sweep): Promise<void> {
  const { cfg, state } = sweep;
  const inc = state.incremental;
  if (!inc || cfg.dryRun || state.counts.written <= inc.writtenAtRoundStart) return;
  try {
    const d = await catalogActivities.detectChanges.executeWithOptions(
      { ...REPORT_OPTIONS, summary: 'what the writes after the last pass changed (judged by the next sweep)' },
      [{ ledgerKey: state.ledgerKey, round: inc.rounds.length }],
    );
    inc.unsettled = d.toJudge;
  } catch (err) {
    log.warn('could not count what the last writes changed', { error: failureOf(err).message });
  }
}

/**
 * Remember what this sweep decided (the memory the next sweep starts from; a dry run remembers nothing) and
 * return the report's account of it. A memory that cannot be saved leaves the sweep's work standing: only the next
 * sweep loses the shortcut, and the note says so.
 */
export async function remember(
  sweep: Sweep,
): Promise<{ incremental: IncrementalSummary; inReport?: RememberInput } | undefined> {
  const { cfg, state, sweepId } = sweep;
  const inc = state.incremental;
  if (!inc) return undefined;
  const incremental: IncrementalSummary = {
    ...inc.summary,
    rounds: inc.rounds.length,
    rejudged: inc.rounds.slice(1).reduce((n, r) => n + r.count, 0),
    crossPageRejudged: inc.rounds.slice(1).reduce((n, r) => n + (r.crossPage ?? 0), 0),
    unsettled: inc.unsettled,
  };
  const input: RememberInput = {
    ledgerKey: state.ledgerKey,
    sweepId,
    roundFirstPages: inc.rounds.map((r) => r.firstPage),
    failedEntities: state.failures.map((f) => f.entity),
    dryRun: cfg.dryRun,
  };
  // The report's activity remembers first (one step fewer, what every sweep pays): patch remember-in-report-v1.
  if (patched('remember-in-report-v1')) return { incremental, inReport: input };
  try {
    await catalogActivities.rememberSweep.executeWithOptions(
      { ...REPORT_OPTIONS, summary: cfg.dryRun ? 'dry run: remember nothing' : 'remember what this sweep decided' },
      [input],
    );
  } catch (err) {
    const f = failureOf(err);
    incremental.note = `${incremental.note ? `${incremental.note}; ` : ''}the memory could not be saved (${f.message.slice(0, 300)}): the next sweep judges these entities again`;
  }
  return { incremental };
}

/** What rememberSweep takes: the sweep's ledger, its passes and the entities whole activities failed. */
export interface RememberInput {
  ledgerKey: string;
  sweepId: string;
  roundFirstPages: number[];
  failedEntities: string[];
  dryRun: boolean;
}
