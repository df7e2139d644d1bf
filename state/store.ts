import * as os from 'node:os';
import type { CatalogIdentity } from '../catalog/adapter';
import type { Decision, EntityFailure, Outcome, Proposal, ProposalChange } from '../domain/proposal';
import type { CatalogRef } from '../domain/sweep';
import type { CatalogStats } from '../judgment/catalog-stats';
import type { MemoryBook } from './memory';

/** Which state store a worker uses: local files (the default) or PostgreSQL (`ARGUS_STATE_URL`). */
export type StoreKind = 'file' | 'postgres';

/**
 * A sweep's state that this worker cannot find: its ledger, or one of its pages. Raised instead of reading
 * "nothing", so a gate never reviews zero proposals and a write never skips a person's decision because the
 * activity ran where the state is not (another host, another state folder). Becomes a non-retryable failure.
 */
export class SweepStateMissing extends Error {
  override readonly name = 'SweepStateMissing';
  /** `where`: the place looked in; `store`: which state store this worker uses (never a URL or a secret). */
  constructor(what: string, where: string, store: StoreKind = 'file') {
    super(
      `${what} is missing: looked in ${where} on host ${os.hostname()}. ` +
        (store === 'file'
          ? 'This worker keeps sweep state in that local folder (ARGUS_STATE_URL is not set), and the folder does not ' +
            'hold this sweep: it was started by workers with another state folder, or with the PostgreSQL state store ' +
            '(give this worker the same ARGUS_STATE_URL as the others, or run every worker on one state folder).'
          : 'This worker keeps sweep state in PostgreSQL (ARGUS_STATE_URL), and that store does not hold this sweep: it ' +
            'was started by workers with another ARGUS_STATE_URL, or with the local file store (ARGUS_STATE_URL unset).'),
    );
  }
}

/** A state store that cannot be opened: out of reach, misnamed, or migrated by a newer ARGUS. */
export class StateStoreError extends Error {
  override name = 'StateStoreError';
}

/**
 * Where a sweep's state lives: its ledger (metadata, proposals, outcomes, write intents, writes, figures, model
 * calls), the audit trail of each catalog, and the report. Injected into every activity. Two kinds: local files
 * (the default, one host or one shared folder) and PostgreSQL (`ARGUS_STATE_URL`: any worker on any machine).
 */
export interface StateStore {
  readonly kind: StoreKind;
  /** Where it is, for people and error messages: a folder, or "PostgreSQL state store <id>" (never a URL). */
  readonly where: string;
  ledger(ledgerKey: string): SweepLedger;
  /** The key of a catalog's audit trail, kept in the sweep's metadata (`auditFile`). */
  auditKey(identity: CatalogIdentity, catalogName: string): string;
  audit(key: string): AuditTrail;
  /** The metadata of every run of a sweep id (one per first run id). */
  findSweepMetas(sweepId: string): Promise<SweepMeta[]>;
  /**
   * Run `fn` holding a lock on `key` for the whole fleet (PostgreSQL: an advisory lock, released by the
   * server if this worker dies). The file store serialises within this process only.
   */
  exclusive<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** Tokens and requests ARGUS spent per provider key and day (UTC), across sweeps: what a plan subtracts. */
  readonly usage: UsageBook;
  /** What batch answers took of their output reserve, per model and task (activities/model/calibration.ts). */
  readonly calibration: CalibrationBook;
  /** What earlier sweeps decided per catalog and entity, with the fingerprints it rests on (state/memory.ts). */
  readonly memory: MemoryBook;
  /** Model answers by their request's digest, for every worker of the store: a request answered once is not sent again. */
  readonly answers: AnswerBook;
  /** Model-call limits shared by every worker of the store (PostgreSQL); absent: each worker keeps its own. */
  readonly fleet?: FleetGate;
  close(): Promise<void>;
}

/**
 * What makes an endpoint's limits hold for a sweep rather than per worker process: its in-flight slots, the
 * knowledge that its quota is spent, and the last x-ratelimit figures its answers carried.
 */
export interface FleetGate {
  /** Take one of `size` slots of `key` for the whole fleet, waiting (and calling `onWait`) while all are taken. */
  acquireSlot(key: string, size: number, onWait: () => void, signal?: AbortSignal): Promise<() => Promise<void>>;
  /** Record that an endpoint's quota is spent for a sweep (first record wins), with the provider's evidence. */
  markExhausted(sweepId: string, endpointId: string, details: Record<string, unknown>): Promise<void>;
  exhausted(sweepId: string, endpointId: string): Promise<Record<string, unknown> | undefined>;
  /** The latest rate-limit budget any worker saw for a provider key, and storing a newer one. */
  pace(key: string): Promise<PaceBudget | undefined>;
  putPace(key: string, budget: PaceBudget): Promise<void>;
}

/** What a provider's x-ratelimit headers said remains, with absolute reset times (ms since the epoch). */
export interface PaceBudget {
  remainingTokens: number | null;
  remainingRequests: number | null;
  tokensResetAt: number | null;
  requestsResetAt: number | null;
}

export interface UsageBook {
  add(key: string, day: string, tokens: number, requests: number): Promise<void>;
  get(key: string, day: string): Promise<{ tokens: number; requests: number }>;
}

/** Today's date (UTC), the day a usage entry belongs to. */
export const usageDay = (t = Date.now()): string => new Date(t).toISOString().slice(0, 10);

/**
 * The output calibration shared by every worker of a store: per key (`model|task`) the last answers' ratios of
 * completion tokens to output reserve. Small and bounded (CALIBRATION_KEYS keys, each a short list).
 */
export interface CalibrationBook {
  /** The ratios stored for those of `keys` the book has. */
  load(keys: readonly string[]): Promise<Record<string, number[]>>;
  /** Replace the ratios of `key`. */
  save(key: string, ratios: readonly number[]): Promise<void>;
}

/**
 * A model's answer as the provider sent it (its message content, and whether it was cut off at max_tokens), kept
 * under the digest of the request that got it (llm/client.ts requestDigest): a request byte for byte the same is
 * answered from here instead of being sent again. Bounded (ANSWERS_KEPT, the least recently used go first). A sweep's
 * call records (ModelCallRecord.digest) name the answers it used, sent or remembered: undo of it forgets them.
 */
export interface RememberedAnswer {
  content: string;
  cutShort: boolean;
}

export interface AnswerBook {
  /** The answer kept for `digest` (and it counts as used now); undefined when none is kept. */
  recall(digest: string): Promise<RememberedAnswer | undefined>;
  /** Keep the answer a request got (replacing one kept before for the same digest). */
  keep(digest: string, answer: RememberedAnswer): Promise<void>;
  /** Forget these answers (argus undo of the sweep whose calls record them): their requests are sent again. */
  forget(digests: readonly string[]): Promise<void>;
}

/** Answers an AnswerBook keeps (a 100,000-entity model sweep makes ~35,000 calls); the least recently used go first. */
export const ANSWERS_KEPT = 200_000;
/** The longest answer content kept (a batch answer of 40 entities is ~10 KB); a longer one is simply not kept. */
export const ANSWER_MAX_CHARS = 256 * 1024;

/** Keys a CalibrationBook keeps: the least recently saved go first. */
export const CALIBRATION_KEYS = 256;

/**
 * Which review stage an outcome comes from, and so which one wins for a proposal: a later stage replaces an
 * earlier one (a person's decision replaces the Arbiter's; "awaiting a person" replaces the Arbiter's approval
 * until the person decides). Stored with the outcomes, never inferred from names.
 */
export const OUTCOME_STAGES = ['gate', 'model', 'not-reviewed', 'awaiting', 'human'] as const;
export type OutcomeStage = (typeof OUTCOME_STAGES)[number];
export const stageRank = (s: OutcomeStage): number => OUTCOME_STAGES.indexOf(s);

/** One model call: who made it, on which endpoint and entity, and its tokens (`estimated`: no provider usage). */
export interface ModelCallRecord {
  agent: string;
  endpoint: string;
  /** The entity, or the batch (`batch-<n>`) of a call on several entities. */
  entityId: string;
  /** Entities a batched call covered (absent: one). */
  entities?: number;
  promptTokens: number;
  completionTokens: number;
  estimated: boolean;
  /** The request's digest (the key of its answer in the AnswerBook). */
  digest?: string;
  /** Answered from the AnswerBook: not sent, no tokens spent. */
  remembered?: boolean;
  /** The digests a batched call's answer was kept under, one per entity answered (activities/model/item-memory.ts). */
  kept?: string[];
}

export interface SweepMeta {
  sweepId: string;
  ledgerKey: string;
  catalogRef: CatalogRef;
  /** The catalog's identity key and where it is, for people (a file's absolute path). */
  catalogKey: string;
  catalogLabel: string;
  catalogName: string;
  auditFile: string;
  startedAt: string;
  /** Values the PII agent and the gate may sample per column (sweep input `sampleValues`); absent: none. */
  sampleRows?: number;
}

export interface PageWrites {
  written: string[];
  already: string[];
  keptHuman: string[];
  conflicts: { proposalId: string; note: string }[];
  /** Approved repairs the catalog refused (not the owner, a statement failed): the sweep is partial. */
  failed?: { proposalId: string; note: string }[];
  notes: Record<string, string>;
}

/**
 * A sweep's claim-check store: proposals and outcomes of each page live here, keyed by page, so that workflow
 * histories carry counts and ids instead of payloads. Every record is written whole, so an activity retry
 * overwrites its own earlier attempt. Two implementations: FileLedger (state/file/ledger.ts, a local
 * folder) and PgLedger (state/postgres/ledger.ts). A read of state that is not there raises SweepStateMissing, never "nothing".
 */
export interface SweepLedger {
  readonly ledgerKey: string;
  writeMeta(m: SweepMeta): Promise<void>;
  meta(): Promise<SweepMeta>;
  writeProposals(n: number, agent: string, proposals: Proposal[]): Promise<void>;
  /** Every agent's proposals of a page (callers must not modify what they get). */
  proposals(n: number): Promise<readonly Proposal[]>;
  /** One writer's outcomes (`tag`: gate, model-<entity>, human-<round>, …) at a stage; later stages win. */
  putOutcomes(n: number, stage: OutcomeStage, tag: string, outcomes: Outcome[]): Promise<void>;
  outcomes(n: number): Promise<Outcome[]>;
  /**
   * The write-ahead record of a page's catalog write (`round` 0: the sweep's own; later rounds: what people
   * approved afterwards): the audit lines of every change it is about to make, with before/after, stored before
   * the catalog changes. A retry (or undo) after a crash between the catalog write and the audit append finds
   * here what landed without its audit line. `intent` reads every round's.
   */
  writeIntent(n: number, lines: string[], round?: number): Promise<void>;
  intent(n: number): Promise<WriteRecord[]>;
  writeWrites(n: number, w: PageWrites, round?: number): Promise<void>;
  /** One round's writes (undefined: that round has not written yet). */
  writes(n: number, round?: number): Promise<PageWrites | undefined>;
  /** Every round's writes of a page, merged (undefined: no round wrote). */
  allWrites(n: number): Promise<PageWrites | undefined>;
  /** Coverage figures of one page's entities, before the page's writes and after them. */
  writeStats(n: number, when: 'before' | 'after', stats: CatalogStats): Promise<void>;
  stats(n: number, when: 'before' | 'after'): Promise<CatalogStats | undefined>;
  /** The ids a page holds, as read: the page's later activities take them from here, not from their input. */
  writePageIds(n: number, ids: string[]): Promise<void>;
  pageIds(n: number): Promise<string[]>;
  /** The model calls of one activity attempt, written whether the attempt succeeded or not. */
  writeCalls(n: number, tag: string, calls: ModelCallRecord[]): Promise<void>;
  calls(n: number): Promise<ModelCallRecord[]>;
  writeFailures(n: number, stage: string, failures: EntityFailure[]): Promise<void>;
  failures(n: number): Promise<EntityFailure[]>;
  pageNumbers(): Promise<number[]>;
  /** The entities a budget-fitted sweep chose (fitBudget), in sweep order; undefined: the whole catalog. */
  writeSelection(ids: string[]): Promise<void>;
  selection(): Promise<string[] | undefined>;
  /** A document of the sweep outside every page (the memory's fingerprints and pass selections), written whole. */
  writeDoc(name: string, value: unknown): Promise<void>;
  doc<T>(name: string): Promise<T | undefined>;
  /** A local file the report is assembled in; `publishReport` then stores it in the ledger. */
  reportFile(): string;
  publishReport(file: string): Promise<void>;
  /** Where people find the full report (the `reportFile` of the report). */
  reportLocation(): string;
}

/** The audit trail of one catalog: append-only lines, the applied-proposal index, which pages are fully logged. */
export interface AuditTrail {
  /** Append entries; an entry may come already serialised (one JSON line without its newline). */
  append(entries: (AuditEntry | string)[]): Promise<void>;
  readAll(): Promise<AuditEntry[]>;
  /**
   * Proposal ids currently applied (written and not undone), with the sweep and run that wrote each; `ids`:
   * only among these (a store may still return more).
   */
  applied(ids?: readonly string[]): Promise<Map<string, AppliedBy>>;
  /** Whether a page's write step (round `round`) logged all its lines (its `page` line is in the trail). */
  pageLogged(ledgerKey: string, page: number, round?: number): Promise<boolean>;
  /** When each entity was last reviewed (its latest decision line's time, ISO), for oldest-unreviewed-first. */
  lastReviewed(): Promise<Map<string, string>>;
}

/** One line of the append-only audit log. `write` lines carry before/after so a sweep can be undone. */
export type AuditEntry =
  | {
      type: 'decision';
      time: string;
      sweepId: string;
      proposalId: string;
      entityId: string;
      change: ProposalChange;
      evidence: string[];
      outcome: Decision;
      reason: string;
      reviewer: string;
    }
  | {
      type: 'write';
      time: string;
      sweepId: string;
      /** The run that wrote it (`<sweep id>@<first run id>`); absent on lines older than this field. */
      ledgerKey?: string;
      proposalId: string;
      entityId: string;
      change: ProposalChange;
      reviewer: string;
      before: unknown;
      after: unknown;
    }
  | { type: 'undo'; time: string; sweepId: string; proposalId: string; entityId: string; undoneBy: string }
  /**
   * Ends a page's lines: everything the page's write step logs comes before it, so a retry that finds it knows
   * the page is fully logged, and one that does not logs what is missing.
   */
  | {
      type: 'page';
      time: string;
      sweepId: string;
      ledgerKey: string;
      page: number;
      /** 0 or absent: the sweep's own write of the page; later: a write of what people approved afterwards. */
      round?: number;
      decisions: number;
      writes: number;
    };

/** Who wrote an applied proposal. */
export interface AppliedBy {
  sweepId: string;
  ledgerKey?: string;
}

export type WriteRecord = Extract<AuditEntry, { type: 'write' }>;

/** The key of a page's `page` line in an audit trail (round 0: the sweep's own write of the page). */
export const auditPageKey = (ledgerKey: string, page: number, round = 0): string =>
  round === 0 ? `${ledgerKey}#${page}` : `${ledgerKey}#${page}.r${round}`;
