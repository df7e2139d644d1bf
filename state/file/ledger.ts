import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Outcome, Proposal, EntityFailure } from '../../domain/proposal';
import type { CatalogRef } from '../../domain/sweep';
import { readJson, safeName, writeFileAtomic } from '../../activities/paths';
import type { AuditEntry } from './audit-log';
import type { CatalogStats } from '../../judgment/catalog-stats';

export type WriteRecord = Extract<AuditEntry, { type: 'write' }>;

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

/** Which state store a worker uses: local files (the default) or PostgreSQL (`ARGUS_STATE_URL`). */
export type StoreKind = 'file' | 'postgres';

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

export type { CatalogStats };

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
 * overwrites its own earlier attempt. Two implementations: FileLedger (a local folder) and PgLedger
 * (activities/pg-state.ts). A read of state that is not there raises SweepStateMissing, never "nothing".
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

/** Every round's writes of a page as one. */
export function mergeWrites(rounds: PageWrites[]): PageWrites | undefined {
  if (rounds.length === 0) return undefined;
  const out: PageWrites = { written: [], already: [], keptHuman: [], conflicts: [], notes: {} };
  for (const w of rounds) {
    out.written.push(...w.written);
    out.already.push(...w.already);
    out.keptHuman.push(...w.keptHuman);
    out.conflicts.push(...w.conflicts);
    if (w.failed?.length) (out.failed ??= []).push(...w.failed);
    Object.assign(out.notes, w.notes);
  }
  return out;
}

/** The winning outcome of each proposal: the latest stage's (stored with the outcomes), then the writer's tag. */
export function mergeOutcomes(sets: { stage: OutcomeStage; tag: string; outcomes: Outcome[] }[]): Outcome[] {
  const sorted = [...sets].sort((a, b) => stageRank(a.stage) - stageRank(b.stage) || a.tag.localeCompare(b.tag));
  const byId = new Map<string, Outcome>();
  for (const s of sorted) for (const o of s.outcomes) byId.set(o.proposalId, o);
  return [...byId.values()];
}

const PROPOSAL_PAGES_KEPT = 16;
const proposalCache = new Map<string, { signature: string; proposals: readonly Proposal[] }>();
const roundSuffix = (round: number) => (round === 0 ? '' : `-r${round}`);
/** The round a `writes…` or `write-intent…` record belongs to, from its name; records merge in round order. */
export const roundOfName = (name: string): number => Number(/-r(\d+)(\.json)?$/.exec(name)?.[1] ?? 0);
export const byRound = (a: string, b: string): number => roundOfName(a) - roundOfName(b);

/** The file store's ledger: one folder per sweep run under `<state>/sweeps/`, each file written atomically. */
export class FileLedger implements SweepLedger {
  readonly dir: string;
  constructor(
    stateDir: string,
    readonly ledgerKey: string,
  ) {
    this.dir = path.join(stateDir, 'sweeps', safeName(ledgerKey));
  }

  private page(n: number, file: string): string {
    return path.join(this.dir, 'pages', String(n).padStart(6, '0'), file);
  }
  private pageDir(n: number): string {
    return path.dirname(this.page(n, 'x'));
  }

  writeMeta(m: SweepMeta): Promise<void> {
    return writeFileAtomic(path.join(this.dir, 'meta.json'), JSON.stringify(m, null, 2));
  }
  async meta(): Promise<SweepMeta> {
    const m = await readJson<SweepMeta>(path.join(this.dir, 'meta.json'));
    if (!m) throw new SweepStateMissing('the sweep ledger', path.join(this.dir, 'meta.json'));
    return m;
  }

  writeProposals(n: number, agent: string, proposals: Proposal[]): Promise<void> {
    return writeFileAtomic(this.page(n, `proposals-${safeName(agent)}.json`), JSON.stringify(proposals));
  }
  /**
   * The gate, the write and the report each read a page's proposals: the parsed list is kept for recent pages
   * while the files are unchanged (same names, inodes, sizes and times).
   */
  async proposals(n: number): Promise<readonly Proposal[]> {
    const dir = this.pageDir(n);
    const files = (await this.list(n)).filter((f) => f.startsWith('proposals-') && f.endsWith('.json')).sort();
    const stats = await Promise.all(files.map((f) => fs.stat(path.join(dir, f)).catch(() => undefined)));
    // A rewrite is a rename of a new file: its inode changes even where timestamps are coarse.
    const signature = files.map((f, i) => `${f}:${stats[i]?.ino}:${stats[i]?.size}:${stats[i]?.mtimeMs}`).join('|');
    const hit = proposalCache.get(dir);
    if (hit && hit.signature === signature) {
      proposalCache.delete(dir);
      proposalCache.set(dir, hit);
      return hit.proposals;
    }
    const out: Proposal[] = [];
    for (const f of files) out.push(...((await readJson<Proposal[]>(path.join(dir, f))) ?? []));
    proposalCache.set(dir, { signature, proposals: out });
    if (proposalCache.size > PROPOSAL_PAGES_KEPT) proposalCache.delete(proposalCache.keys().next().value!);
    return out;
  }

  /** One file per writer, so parallel reviewers never race on one file; the stage is stored inside it. */
  async putOutcomes(n: number, stage: OutcomeStage, tag: string, outcomes: Outcome[]): Promise<void> {
    await writeFileAtomic(this.page(n, `outcomes-${safeName(tag)}.json`), JSON.stringify({ stage, tag, outcomes }));
  }
  async outcomes(n: number): Promise<Outcome[]> {
    const dir = this.pageDir(n);
    const files = (await this.list(n)).filter((f) => f.startsWith('outcomes-') && f.endsWith('.json'));
    const sets: { stage: OutcomeStage; tag: string; outcomes: Outcome[] }[] = [];
    for (const f of files) {
      const doc = await readJson<{ stage: OutcomeStage; tag: string; outcomes: Outcome[] }>(path.join(dir, f));
      if (doc) sets.push(doc);
    }
    return mergeOutcomes(sets);
  }

  writeIntent(n: number, lines: string[], round = 0): Promise<void> {
    // The records come serialised: the same text then goes to the audit log (serialised once).
    return writeFileAtomic(this.page(n, `write-intent${roundSuffix(round)}.json`), `[${lines.join(',')}]`);
  }
  async intent(n: number): Promise<WriteRecord[]> {
    const files = (await this.list(n).catch(() => [] as string[])).filter((f) => f.startsWith('write-intent'));
    const out: WriteRecord[] = [];
    for (const f of files.sort(byRound))
      out.push(...((await readJson<WriteRecord[]>(path.join(this.pageDir(n), f))) ?? []));
    return out;
  }

  writeWrites(n: number, w: PageWrites, round = 0): Promise<void> {
    return writeFileAtomic(this.page(n, `writes${roundSuffix(round)}.json`), JSON.stringify(w));
  }
  writes(n: number, round = 0): Promise<PageWrites | undefined> {
    return readJson<PageWrites>(this.page(n, `writes${roundSuffix(round)}.json`));
  }
  async allWrites(n: number): Promise<PageWrites | undefined> {
    const files = (await this.list(n)).filter((f) => /^writes(-r\d+)?\.json$/.test(f)).sort(byRound);
    const rounds: PageWrites[] = [];
    for (const f of files) {
      const w = await readJson<PageWrites>(path.join(this.pageDir(n), f));
      if (w) rounds.push(w);
    }
    return mergeWrites(rounds);
  }

  writeStats(n: number, when: 'before' | 'after', stats: CatalogStats): Promise<void> {
    return writeFileAtomic(this.page(n, `stats-${when}.json`), JSON.stringify(stats));
  }
  stats(n: number, when: 'before' | 'after'): Promise<CatalogStats | undefined> {
    return readJson<CatalogStats>(this.page(n, `stats-${when}.json`));
  }

  writePageIds(n: number, ids: string[]): Promise<void> {
    return writeFileAtomic(this.page(n, 'ids.json'), JSON.stringify(ids));
  }
  async pageIds(n: number): Promise<string[]> {
    const ids = await readJson<string[]>(this.page(n, 'ids.json'));
    if (ids === undefined) throw new SweepStateMissing(`the entity ids of page ${n}`, this.page(n, 'ids.json'));
    return ids;
  }

  /** The files of a page folder; a folder that is not there is missing state, any other error is itself. */
  private async list(n: number): Promise<string[]> {
    const dir = this.pageDir(n);
    try {
      return await fs.readdir(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SweepStateMissing(`page ${n} of the sweep`, dir);
      throw e;
    }
  }

  writeCalls(n: number, tag: string, calls: ModelCallRecord[]): Promise<void> {
    return writeFileAtomic(this.page(n, `calls-${safeName(tag)}.json`), JSON.stringify(calls));
  }
  async calls(n: number): Promise<ModelCallRecord[]> {
    const files = (await this.list(n).catch(() => [] as string[])).filter((f) => f.startsWith('calls-'));
    const out: ModelCallRecord[] = [];
    for (const f of files) out.push(...((await readJson<ModelCallRecord[]>(path.join(this.pageDir(n), f))) ?? []));
    return out;
  }

  writeFailures(n: number, stage: string, failures: EntityFailure[]): Promise<void> {
    return writeFileAtomic(this.page(n, `failures-${safeName(stage)}.json`), JSON.stringify(failures));
  }
  async failures(n: number): Promise<EntityFailure[]> {
    const files = (await this.list(n).catch(() => [] as string[])).filter((f) => f.startsWith('failures-'));
    const out: EntityFailure[] = [];
    for (const f of files.sort()) out.push(...((await readJson<EntityFailure[]>(path.join(this.pageDir(n), f))) ?? []));
    return out;
  }

  async pageNumbers(): Promise<number[]> {
    try {
      return (await fs.readdir(path.join(this.dir, 'pages')))
        .map(Number)
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
    } catch {
      return [];
    }
  }

  writeSelection(ids: string[]): Promise<void> {
    return writeFileAtomic(path.join(this.dir, 'selection.json'), JSON.stringify(ids));
  }
  selection(): Promise<string[] | undefined> {
    return readJson<string[]>(path.join(this.dir, 'selection.json'));
  }

  writeDoc(name: string, value: unknown): Promise<void> {
    return writeFileAtomic(path.join(this.dir, 'docs', `${safeName(name)}.json`), JSON.stringify(value));
  }
  doc<T>(name: string): Promise<T | undefined> {
    return readJson<T>(path.join(this.dir, 'docs', `${safeName(name)}.json`));
  }

  reportFile(): string {
    return path.join(this.dir, 'report.json');
  }
  publishReport(): Promise<void> {
    return Promise.resolve(); // assembled in place
  }
  reportLocation(): string {
    return this.reportFile();
  }
}
