import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { SweepConfig } from '../../domain/sweep';
import type { EntityFailure } from '../../domain/proposal';
import type { DeferredEntities, IncrementalSummary, RetiredEndpoint } from '../../domain/report';
import { progressQuery, type PendingReview, type ReviewUpdateInput, type SweepProgress } from '../messages';
import { Rotation } from '../rotation';

/** State carried across continue-as-new: counts and ids only, never proposals or schemas. */
export interface SweepCarry {
  /**
   * What the execution's first argument holds: `config`, the SweepConfig the previous execution parsed; absent,
   * the raw SweepInput (carries written before the sweep parsed its input once per run).
   */
  input?: 'config';
  ledgerKey: string;
  catalogName: string;
  entityCount: number;
  pageSize: number;
  pageCount: number;
  nextPage: number;
  execution: number;
  failures: EntityFailure[];
  failuresDropped: number;
  retired: RetiredEndpoint[];
  /** Human review: what waits for people (bounded: at most MAX_PARKED), carried to the execution that waits. */
  review?: ReviewCarry;
  /** fitBudget: what the plan left for the next sweep (a count and the first ids). */
  deferred?: DeferredEntities;
  /** Memory across sweeps (patch incremental-v1): what change detection found and the passes run so far. */
  incremental?: IncrementalCarry;
  counts: {
    approved: number;
    rejected: number;
    notReviewed: number;
    written: number;
    entitiesDone: number;
    pagesDone: number;
  };
}

/** What change detection found, and the sweep's passes: each pass's first page and entity count (at most maxPasses). */
export interface IncrementalCarry {
  summary: Omit<IncrementalSummary, 'rounds' | 'rejudged' | 'crossPageRejudged' | 'unsettled'>;
  /** `crossPage`: of a later pass's `count`, the entities judged again for what they read of another's write. */
  rounds: { firstPage: number; count: number; crossPage?: number }[];
  /** Writes counted when the current pass started: a pass that wrote nothing ends the sweep's passes. */
  writtenAtRoundStart: number;
  unsettled: number;
}

/** A proposal parked for people, with their decision once it arrives. */
export type Parked = PendingReview & { decided?: ReviewUpdateInput['decisions'][number] };

/** The sweep's human review: one deadline, set when the first proposal is parked; counts for the report. */
export interface ReviewCarry {
  deadline?: string;
  parked: Parked[];
  waited: number;
  overflow: number;
  approved: number;
  rejected: number;
  expired: number;
  rounds: number;
}

const MAX_CARRIED_FAILURES = 200;

/**
 * What this execution hands the next when it continues as new, beside the parsed config (`input: 'config'` says
 * the first argument is one): its state, one execution on, and what waits for people (`review`).
 */
export function carryOn(state: SweepCarry, review: ReviewCarry | undefined): SweepCarry {
  return { ...state, input: 'config', execution: state.execution + 1, ...(review ? { review } : {}) };
}

/** The live progress (the `progress` query), going on from what the previous execution carried. */
export function startProgress(cfg: SweepConfig, carry: SweepCarry | undefined): SweepProgress {
  const progress: SweepProgress = {
    phase: 'opening',
    catalog: carry?.catalogName ?? '',
    mode: cfg.review,
    pagesDone: carry?.counts.pagesDone ?? 0,
    pageCount: carry?.pageCount ?? 0,
    entitiesRequested: carry?.entityCount ?? 0,
    entitiesDone: carry?.counts.entitiesDone ?? 0,
    approved: carry?.counts.approved ?? 0,
    rejected: carry?.counts.rejected ?? 0,
    notReviewed: carry?.counts.notReviewed ?? 0,
    written: carry?.counts.written ?? 0,
    failures: (carry?.failures.length ?? 0) + (carry?.failuresDropped ?? 0),
    retiredEndpoints: carry?.retired.map((r) => r.endpointId) ?? [],
    breakerTripped: false,
    execution: carry?.execution ?? 1,
    awaitingReview: 0,
  };
  setHandler(progressQuery, () => progress);
  return progress;
}

/**
 * One execution of a sweep once its catalog is open: the parsed config, the sweep's id, the state it carries on,
 * its live progress, the endpoint rotation (its retirements are the carried `retired`), and the tally of failures.
 */
export class Sweep {
  readonly rotation: Rotation;
  // Failures an activity returned are already in the ledger: only counted here.
  private ledgerFailures = 0;

  constructor(
    readonly cfg: SweepConfig,
    readonly sweepId: string,
    readonly state: SweepCarry,
    readonly progress: SweepProgress,
  ) {
    this.rotation = new Rotation(cfg.endpoints, state.retired);
  }

  /** Failures an activity reported (they are in the ledger already): counted for the progress query. */
  noteFailures(n: number): void {
    this.ledgerFailures += n;
    this.showFailures();
  }

  /** Failures of whole activities, known only to the workflow: carried (bounded) into the report. */
  addFailures(fs: EntityFailure[]): void {
    for (const f of fs) {
      if (this.state.failures.length < MAX_CARRIED_FAILURES) this.state.failures.push(f);
      else this.state.failuresDropped++;
    }
    this.showFailures();
  }

  showProgress(): void {
    const { cfg, state } = this;
    setCurrentDetails(
      `**Sweeping ${state.catalogName}** (${cfg.review} review): page ${state.counts.pagesDone}/${state.pageCount}, ` +
        `${state.counts.entitiesDone}/${state.entityCount} entities; ${state.counts.approved} approved, ` +
        `${state.counts.rejected} rejected, ${state.counts.notReviewed} not reviewed, ${state.counts.written} written`,
    );
  }

  private showFailures(): void {
    this.progress.failures = this.state.failures.length + this.state.failuresDropped + this.ledgerFailures;
  }
}

/** The entities of a page for a failure that hit all of them: their ids when known, else their positions. */
export function pageEntities(ids: string[], first: number, count: number): string[] {
  return ids.length > 0 ? ids : Array.from({ length: count }, (_, i) => `#${first + i}`);
}
