// The review page's view of Temporal: which running sweeps hold proposals for people (the `pendingReviews`
// query of each, exactly what `argus review list` prints), and decisions sent through the sweep's `review`
// Update with the CLI's payload builder, so the sweep's own validator judges them as it judges the CLI's.
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { progressQuery, type PendingReview } from '../workflows/messages';
import type { ProposalChange } from '../domain/proposal';
import { pendingReviews, reviewDecisions, sendDecisions } from './review';
import type { CatalogText, ReviewDetails } from './review-details';
import {
  forgetDecision,
  NothingToForget,
  standingDecisions,
  type StandingDecision,
} from '../activities/forget-decision';
import type { StateStore } from '../state/store';

/** One proposal waiting for a person, with what the sweep's state adds when this server can read it. */
export interface InboxProposal extends PendingReview {
  /** What the agent relied on (absent: the sweep's state is not readable here). */
  evidence?: string[];
  change?: ProposalChange;
  /** The catalog's text now, where the proposal would write (absent: not readable here). */
  current?: CatalogText;
}

export interface InboxSweep {
  sweepId: string;
  /** The catalog's name (never its location or connection string). */
  catalog: string;
  /** The declared review mode: `mechanical` (the gate decided) or `model` (a model decided after the gate). */
  mode: string;
  /** The sweep's one review deadline (every parked proposal shares it). */
  deadline?: string;
  proposals: InboxProposal[];
  /** Why evidence or the catalog's text is missing, if it is. */
  note?: string;
  /** People's decisions that stand for their shape in the catalog's memory (absent: this server reads no state). */
  standing?: StandingDecisions;
}

/** The decisions a sweep section lists (the newest, at most MAX_STANDING), how many stand in all, or why none are read. */
export interface StandingDecisions {
  decisions: StandingDecision[];
  total: number;
  note?: string;
}

export interface Inbox {
  /** When it was read (ISO). */
  at: string;
  sweeps: InboxSweep[];
  /** Running sweeps whose queries did not answer (no worker, say): listed so nobody thinks they are empty. */
  unreachable: { sweepId: string; reason: string }[];
  /** Running sweeps beyond the listing limit, not queried. */
  notListed: number;
}

/** What a steward asks: one decision for exactly these proposal ids of one sweep. */
export interface DecisionRequest {
  sweepId: string;
  proposalIds: string[];
  decision: 'approved' | 'rejected';
  reviewer: string;
  note?: string;
}

/** What the sweep recorded: the ids it accepted, by whom, and how many still wait. */
export interface RecordedDecisions {
  sweepId: string;
  decision: DecisionRequest['decision'];
  reviewer: string;
  note?: string;
  proposalIds: string[];
  accepted: number;
  stillPending: number;
}

/** What a steward asks: take back a person's decision on `proposalId` in the memory of the catalog `sweepId` swept. */
export interface ForgetRequest {
  sweepId: string;
  proposalId: string;
  /** Who takes it back (recorded in the server's log). */
  by: string;
}

/** What was forgotten: whose decision, and the entities the next sweep judges afresh. */
export interface ForgottenDecision {
  sweepId: string;
  proposalId: string;
  catalog: string;
  by: string;
  /** Who made the decision (absent: the memory held only what was rejected on it). */
  reviewer?: string;
  forgotten: string[];
}

/** A refused request: its HTTP status and a message for the person (nothing was changed). */
export class ReviewRefusal extends Error {
  override name = 'ReviewRefusal';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** What the review server needs: the proposals waiting now, a way to decide some, and (with state) to forget one. */
export interface ReviewBackend {
  inbox(): Promise<Inbox>;
  decide(req: DecisionRequest): Promise<RecordedDecisions>;
  /** Absent: this server reads no state store, and the page offers no Forget. */
  forget?(req: ForgetRequest): Promise<ForgottenDecision>;
}

/** Task queue names the listing's visibility filter takes as they are (no quote to escape). */
export const TASK_QUEUE_NAME = /^[\w.\-/:@]+$/;
/** At most this many running sweeps are queried per page load (each costs two queries). */
const MAX_SWEEPS = 100;
/** A sweep whose worker is gone never answers a query: give up on it after this long. */
const QUERY_TIMEOUT_MS = 10_000;
/** Queries in flight at once. */
const QUERY_LANES = 8;
/** The sweep's own limit on parked proposals; a request naming more is not one the page made. */
const MAX_IDS = 500;
const MAX_NOTE = 2000;
const MAX_REVIEWER = 200;
/** Standing decisions listed per sweep section: the newest; the rest are counted (and `argus review forget` takes any). */
export const MAX_STANDING = 50;

async function inLanes<T, R>(items: T[], lanes: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/**
 * The review page's backend on a Temporal client; `details` adds evidence and catalog text when given, `state` (the
 * workers' state store) the decisions that stand for their shape in each sweep's catalog memory, and Forget.
 */
export function temporalReviewBackend(opts: {
  client: Client;
  details?: ReviewDetails;
  state?: StateStore;
  /** Where a state store's own errors go (the page says only that its memory could not be read). */
  log?: (line: string) => void;
  /** Only sweeps on this task queue. */
  taskQueue?: string;
  queryTimeoutMs?: number;
  now?: () => Date;
}): ReviewBackend {
  const { client } = opts;
  const now = () => opts.now?.() ?? new Date();
  const timeoutMs = opts.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  const timed = <T>(fn: () => Promise<T>) => client.withDeadline(Date.now() + timeoutMs, fn);
  if (opts.taskQueue !== undefined && !TASK_QUEUE_NAME.test(opts.taskQueue))
    throw new Error(`task queue ${JSON.stringify(opts.taskQueue)} has characters a visibility filter cannot hold`);
  const query =
    `WorkflowType = 'sweepWorkflow' AND ExecutionStatus = 'Running'` +
    (opts.taskQueue ? ` AND TaskQueue = '${opts.taskQueue}'` : '');

  async function runningSweeps(): Promise<{ ids: string[]; notListed: number }> {
    const ids = new Set<string>();
    let notListed = 0;
    for await (const run of client.workflow.list({ query })) {
      if (ids.has(run.workflowId)) continue;
      if (ids.size >= MAX_SWEEPS) notListed++;
      else ids.add(run.workflowId);
    }
    return { ids: [...ids].sort(), notListed };
  }

  async function readSweep(sweepId: string): Promise<InboxSweep | { sweepId: string; reason: string } | undefined> {
    let pending: PendingReview[];
    let progress: { catalog: string; mode: string };
    try {
      [pending, progress] = await timed(() =>
        Promise.all([pendingReviews(client, sweepId), client.workflow.getHandle(sweepId).query(progressQuery)]),
      );
    } catch (e) {
      const msg = (e as Error).message ?? String(e);
      const reason = /deadline|timed? ?out|cancel/i.test(msg)
        ? `did not answer within ${timeoutMs / 1000} s (is a worker running on its task queue?)`
        : `could not be queried: ${msg.slice(0, 200)}`;
      return { sweepId, reason };
    }
    if (pending.length === 0) return undefined;
    const sweep: InboxSweep = {
      sweepId,
      catalog: progress.catalog,
      mode: progress.mode,
      ...(pending[0]?.deadline ? { deadline: pending[0].deadline } : {}),
      proposals: pending.map((p) => ({ ...p })),
    };
    if (opts.details) {
      const d = await opts.details.of(sweepId, pending);
      for (const p of sweep.proposals) {
        const x = d.byId.get(p.proposalId);
        if (!x) continue;
        p.evidence = x.evidence;
        p.change = x.change;
        if (x.current) p.current = x.current;
      }
      if (d.note) sweep.note = d.note;
    } else {
      sweep.note = 'evidence and the catalog text are not read by this server';
    }
    if (opts.state) sweep.standing = await standingOf(opts.state, sweepId, opts.log);
    return sweep;
  }

  return {
    ...(opts.state ? { forget: (req: ForgetRequest) => forget(opts.state!, req) } : {}),
    async inbox() {
      const at = now().toISOString();
      const { ids, notListed } = await runningSweeps();
      const read = await inLanes(ids, QUERY_LANES, readSweep);
      const sweeps: InboxSweep[] = [];
      const unreachable: Inbox['unreachable'] = [];
      for (const r of read) {
        if (!r) continue;
        if ('reason' in r) unreachable.push(r);
        else sweeps.push(r);
      }
      // The most urgent first: the nearest deadline.
      sweeps.sort((a, b) => (a.deadline ?? '').localeCompare(b.deadline ?? '') || a.sweepId.localeCompare(b.sweepId));
      return { at, sweeps, unreachable, notListed };
    },

    async decide(req) {
      const ids = [...new Set(req.proposalIds)];
      if (ids.length === 0) throw new ReviewRefusal(400, 'choose at least one proposal: nothing was sent');
      if (ids.length > MAX_IDS || ids.some((id) => id.length === 0 || id.length > 300))
        throw new ReviewRefusal(400, `at most ${MAX_IDS} proposal ids of at most 300 characters: nothing was sent`);
      const reviewer = req.reviewer.trim();
      if (!reviewer || reviewer.length > MAX_REVIEWER)
        throw new ReviewRefusal(400, `name the person deciding (1 to ${MAX_REVIEWER} characters): nothing was sent`);
      const note = req.note?.trim() || undefined;
      if (note && note.length > MAX_NOTE)
        throw new ReviewRefusal(400, `the note is longer than ${MAX_NOTE} characters: nothing was sent`);

      const handle = client.workflow.getHandle(req.sweepId);
      let status: string;
      try {
        status = (await timed(() => handle.describe())).status.name;
      } catch (e) {
        if (e instanceof WorkflowNotFoundError)
          throw new ReviewRefusal(404, `there is no sweep ${req.sweepId}: nothing was changed`);
        throw e;
      }
      if (status !== 'RUNNING')
        throw new ReviewRefusal(
          409,
          `sweep ${req.sweepId} has finished (${status.toLowerCase()}) and takes no more decisions: nothing was changed`,
        );
      const pending = await timed(() => pendingReviews(client, req.sweepId));
      const deadline = pending[0]?.deadline;
      if (deadline && Date.parse(deadline) <= now().getTime())
        throw new ReviewRefusal(
          409,
          `the review deadline of ${req.sweepId} passed at ${deadline}: the sweep is read-only, nothing was changed`,
        );
      const input = reviewDecisions(ids, req.decision, reviewer, { ...(note ? { comment: note } : {}), now: now() });
      try {
        const res = await sendDecisions(client, req.sweepId, input);
        return {
          sweepId: req.sweepId,
          decision: req.decision,
          reviewer,
          ...(note ? { note } : {}),
          proposalIds: ids,
          accepted: res.accepted,
          stillPending: res.stillPending,
        };
      } catch (e) {
        // The sweep's validator refuses the whole update (unknown or decided ids, a bad payload): nothing changed.
        if (e instanceof WorkflowUpdateFailedError)
          throw new ReviewRefusal(
            409,
            `the sweep refused the decisions: ${e.cause?.message ?? e.message}. Nothing was changed`,
          );
        if (e instanceof WorkflowNotFoundError)
          throw new ReviewRefusal(409, `sweep ${req.sweepId} has finished and takes no more decisions`);
        throw e;
      }
    },
  };
}

/** A sweep's standing decisions for its section: the PII tags' (what a shape rests on), newest first. */
async function standingOf(
  state: StateStore,
  sweepId: string,
  log?: (line: string) => void,
): Promise<StandingDecisions> {
  try {
    const { decisions } = await standingDecisions(state, sweepId);
    const shaped = decisions.filter((d) => d.shape !== undefined || d.byShape.length > 0);
    return { decisions: shaped.slice(0, MAX_STANDING), total: shaped.length };
  } catch (e) {
    if (!(e instanceof NothingToForget)) log?.(`[review] standing decisions of ${sweepId}: ${(e as Error).message}`);
    // The page lists the proposals all the same; a store's own error message stays out of it.
    return {
      decisions: [],
      total: 0,
      note:
        e instanceof NothingToForget
          ? e.message
          : "the decisions that stand in the catalog's memory could not be read by this server",
    };
  }
}

async function forget(state: StateStore, req: ForgetRequest): Promise<ForgottenDecision> {
  const by = req.by.trim();
  if (!by || by.length > MAX_REVIEWER)
    throw new ReviewRefusal(400, `name the person forgetting (1 to ${MAX_REVIEWER} characters): nothing was changed`);
  if (!req.sweepId || req.sweepId.length > 300 || !req.proposalId || req.proposalId.length > 300)
    throw new ReviewRefusal(400, 'a sweep id and a proposal id of at most 300 characters: nothing was changed');
  try {
    const r = await forgetDecision(state, req.sweepId, req.proposalId);
    return { sweepId: req.sweepId, by, ...r };
  } catch (e) {
    if (e instanceof NothingToForget)
      throw new ReviewRefusal(e.missing === 'memory' ? 409 : 404, `${e.message}: nothing was changed`);
    throw e;
  }
}
