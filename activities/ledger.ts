import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Outcome, Proposal, EntityFailure } from '../domain/proposal';
import type { CatalogRef } from '../domain/sweep';
import { readJson, safeName, writeFileAtomic } from './paths';
import type { AuditEntry } from './audit-log';
import type { CatalogStats } from '../judgment/catalog-stats';

export type WriteRecord = Extract<AuditEntry, { type: 'write' }>;

/**
 * A sweep's state that this worker cannot find: its ledger, or one of its pages. Raised instead of reading
 * "nothing", so a gate never reviews zero proposals and a write never skips a person's decision because the
 * activity ran where the state is not (another host, another state folder). Becomes a non-retryable failure.
 */
export class SweepStateMissing extends Error {
  override readonly name = 'SweepStateMissing';
  constructor(what: string, where: string) {
    super(
      `${what} is missing: looked in ${where} on host ${os.hostname()}. This worker's state folder does not hold ` +
        `this sweep — run a sweep's workers where its state is (one host, or one shared state folder).`,
    );
  }
}

/** One model call: who made it, on which endpoint and entity, and its tokens (`estimated`: no provider usage). */
export interface ModelCallRecord {
  agent: string;
  endpoint: string;
  entityId: string;
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

const PROPOSAL_PAGES_KEPT = 16;
const proposalCache = new Map<string, { signature: string; proposals: readonly Proposal[] }>();

/**
 * A sweep's claim-check store: proposals and outcomes of each page live here, keyed by page, so that
 * workflow histories carry counts and ids instead of payloads. Every file is written whole and atomically,
 * so an activity retry overwrites its own earlier attempt.
 */
export class SweepLedger {
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

  writeMeta(m: SweepMeta): Promise<void> {
    return writeFileAtomic(path.join(this.dir, 'meta.json'), JSON.stringify(m, null, 2));
  }
  async meta(): Promise<SweepMeta> {
    const m = await readJson<SweepMeta>(path.join(this.dir, 'meta.json'));
    if (!m) throw new SweepStateMissing('the sweep ledger', path.join(this.dir, 'meta.json'));
    return m;
  }

  writeProposals(n: number, agent: string, proposals: Proposal[]): Promise<void> {
    return writeFileAtomic(this.page(n, `proposals-${agent}.json`), JSON.stringify(proposals));
  }
  /**
   * A page's proposals, every agent's. The gate, the write and the report each read them: the parsed list is
   * kept for recent pages while the files are unchanged (same names, inodes, sizes and times). Callers must not
   * modify what they get.
   */
  async proposals(n: number): Promise<readonly Proposal[]> {
    const dir = path.dirname(this.page(n, 'x'));
    let files: string[];
    try {
      files = (await fs.readdir(dir)).filter((f) => f.startsWith('proposals-') && f.endsWith('.json')).sort();
    } catch (e) {
      throw this.missing(e, `page ${n} of the sweep`, dir);
    }
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

  /**
   * Outcomes are kept in one file per writer (`gate`, `model-<entity>`, `not-reviewed`, `human`), so parallel
   * reviewers never race on one file; reading merges them, later stages replacing earlier ones.
   */
  async putOutcomes(n: number, tag: string, outcomes: Outcome[]): Promise<void> {
    await writeFileAtomic(this.page(n, `outcomes-${safeName(tag)}.json`), JSON.stringify(outcomes));
  }
  async outcomes(n: number): Promise<Outcome[]> {
    const dir = path.dirname(this.page(n, 'x'));
    let files: string[];
    try {
      files = (await fs.readdir(dir)).filter((f) => f.startsWith('outcomes-') && f.endsWith('.json'));
    } catch (e) {
      throw this.missing(e, `page ${n} of the sweep`, dir);
    }
    const rank = (f: string) =>
      f === 'outcomes-gate.json' ? 0 : f.startsWith('outcomes-model-') ? 1 : f === 'outcomes-not-reviewed.json' ? 2 : 3;
    files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    const byId = new Map<string, Outcome>();
    for (const f of files)
      for (const o of (await readJson<Outcome[]>(path.join(dir, f))) ?? []) byId.set(o.proposalId, o);
    return [...byId.values()];
  }

  /**
   * The write-ahead record of a page's catalog write: the audit lines of every change it is about to make,
   * with before/after, stored before the catalog file is replaced. A retry (or undo) after a crash between the
   * replacement and the audit append finds here what landed without its audit line.
   */
  writeIntent(n: number, lines: string[]): Promise<void> {
    // The records come serialised: the same text then goes to the audit log (serialised once).
    return writeFileAtomic(this.page(n, 'write-intent.json'), `[${lines.join(',')}]`);
  }
  async intent(n: number): Promise<WriteRecord[]> {
    return (await readJson<WriteRecord[]>(this.page(n, 'write-intent.json'))) ?? [];
  }

  writeWrites(n: number, w: PageWrites): Promise<void> {
    return writeFileAtomic(this.page(n, 'writes.json'), JSON.stringify(w));
  }
  async writes(n: number): Promise<PageWrites | undefined> {
    return readJson<PageWrites>(this.page(n, 'writes.json'));
  }

  /** Coverage figures of one page's entities, before the page's writes and after them. */
  writeStats(n: number, when: 'before' | 'after', stats: CatalogStats): Promise<void> {
    return writeFileAtomic(this.page(n, `stats-${when}.json`), JSON.stringify(stats));
  }
  stats(n: number, when: 'before' | 'after'): Promise<CatalogStats | undefined> {
    return readJson<CatalogStats>(this.page(n, `stats-${when}.json`));
  }

  /** The ids a page holds, as read: the page's later activities take them from here, not from their input. */
  writePageIds(n: number, ids: string[]): Promise<void> {
    return writeFileAtomic(this.page(n, 'ids.json'), JSON.stringify(ids));
  }
  async pageIds(n: number): Promise<string[]> {
    const ids = await readJson<string[]>(this.page(n, 'ids.json'));
    if (ids === undefined) throw new SweepStateMissing(`the entity ids of page ${n}`, this.page(n, 'ids.json'));
    return ids;
  }

  /** A page folder that is not there is missing state; any other read error is itself. */
  private missing(e: unknown, what: string, where: string): Error {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? new SweepStateMissing(what, where) : (e as Error);
  }

  /**
   * The model calls one activity attempt made, with their tokens: one file per attempt, written whether the
   * attempt succeeded or not (a refused or malformed answer spent its prompt too).
   */
  writeCalls(n: number, tag: string, calls: ModelCallRecord[]): Promise<void> {
    return writeFileAtomic(this.page(n, `calls-${safeName(tag)}.json`), JSON.stringify(calls));
  }
  async calls(n: number): Promise<ModelCallRecord[]> {
    const dir = path.dirname(this.page(n, 'x'));
    const files = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.startsWith('calls-'));
    const out: ModelCallRecord[] = [];
    for (const f of files) out.push(...((await readJson<ModelCallRecord[]>(path.join(dir, f))) ?? []));
    return out;
  }

  writeFailures(n: number, stage: string, failures: EntityFailure[]): Promise<void> {
    return writeFileAtomic(this.page(n, `failures-${stage}.json`), JSON.stringify(failures));
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

  reportFile(): string {
    return path.join(this.dir, 'report.json');
  }
}
