import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Outcome, Proposal, EntityFailure } from '../../domain/proposal';
import type { CatalogStats } from '../../judgment/catalog-stats';
import {
  SweepStateMissing,
  type ModelCallRecord,
  type OutcomeStage,
  type PageWrites,
  type SweepLedger,
  type SweepMeta,
  type WriteRecord,
} from '../store';
import { byRound, mergeOutcomes, mergeWrites } from '../ledger-merge';
import { safeName } from '../safe-name';
import { isTempName, readJson, removeLeftovers, tempFilesOf, writeFileAtomic } from './fs';

const PROPOSAL_PAGES_KEPT = 16;
const proposalCache = new Map<string, { signature: string; proposals: readonly Proposal[] }>();
const roundSuffix = (round: number) => (round === 0 ? '' : `-r${round}`);

/**
 * The finished records of one kind among a page folder's files: `<prefix><name>.json` exactly. A killed write leaves
 * its temporary file (`<record>.json.<pid>.<random>.tmp`, fs.ts) behind; it is never read as a record, whatever its
 * prefix.
 */
export function recordsNamed(files: readonly string[], prefix: string): string[] {
  return files.filter((f) => f.startsWith(prefix) && f.endsWith('.json'));
}

/** The file store's ledger: one folder per sweep run under `<state>/sweeps/`, each file written atomically. */
export class FileLedger implements SweepLedger {
  readonly dir: string;
  constructor(
    stateDir: string,
    readonly ledgerKey: string,
  ) {
    this.dir = path.join(stateDir, 'sweeps', safeName(ledgerKey));
  }

  /** Every record of the ledger is written whole, through this: its fault point is the ledger's. */
  private put(file: string, data: string): Promise<void> {
    return writeFileAtomic(file, data, 'ledger-write');
  }

  private page(n: number, file: string): string {
    return path.join(this.dir, 'pages', String(n).padStart(6, '0'), file);
  }
  private pageDir(n: number): string {
    return path.dirname(this.page(n, 'x'));
  }

  writeMeta(m: SweepMeta): Promise<void> {
    return this.put(path.join(this.dir, 'meta.json'), JSON.stringify(m, null, 2));
  }
  async meta(): Promise<SweepMeta> {
    const m = await readJson<SweepMeta>(path.join(this.dir, 'meta.json'));
    if (!m) throw new SweepStateMissing('the sweep ledger', path.join(this.dir, 'meta.json'));
    return m;
  }

  writeProposals(n: number, agent: string, proposals: Proposal[]): Promise<void> {
    return this.put(this.page(n, `proposals-${safeName(agent)}.json`), JSON.stringify(proposals));
  }
  /**
   * The gate, the write and the report each read a page's proposals: the parsed list is kept for recent pages
   * while the files are unchanged (same names, inodes, sizes and times).
   */
  async proposals(n: number): Promise<readonly Proposal[]> {
    const dir = this.pageDir(n);
    const files = recordsNamed(await this.list(n), 'proposals-').sort();
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
    await this.put(this.page(n, `outcomes-${safeName(tag)}.json`), JSON.stringify({ stage, tag, outcomes }));
  }
  async outcomes(n: number): Promise<Outcome[]> {
    const dir = this.pageDir(n);
    const files = recordsNamed(await this.list(n), 'outcomes-');
    const sets: { stage: OutcomeStage; tag: string; outcomes: Outcome[] }[] = [];
    for (const f of files) {
      const doc = await readJson<{ stage: OutcomeStage; tag: string; outcomes: Outcome[] }>(path.join(dir, f));
      if (doc) sets.push(doc);
    }
    return mergeOutcomes(sets);
  }

  writeIntent(n: number, lines: string[], round = 0): Promise<void> {
    // The records come serialised: the same text then goes to the audit log (serialised once).
    return this.put(this.page(n, `write-intent${roundSuffix(round)}.json`), `[${lines.join(',')}]`);
  }
  async intent(n: number): Promise<WriteRecord[]> {
    const files = recordsNamed(await this.list(n).catch(() => [] as string[]), 'write-intent');
    const out: WriteRecord[] = [];
    for (const f of files.sort(byRound))
      out.push(...((await readJson<WriteRecord[]>(path.join(this.pageDir(n), f))) ?? []));
    return out;
  }

  writeWrites(n: number, w: PageWrites, round = 0): Promise<void> {
    return this.put(this.page(n, `writes${roundSuffix(round)}.json`), JSON.stringify(w));
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
    return this.put(this.page(n, `stats-${when}.json`), JSON.stringify(stats));
  }
  stats(n: number, when: 'before' | 'after'): Promise<CatalogStats | undefined> {
    return readJson<CatalogStats>(this.page(n, `stats-${when}.json`));
  }

  writePageIds(n: number, ids: string[]): Promise<void> {
    return this.put(this.page(n, 'ids.json'), JSON.stringify(ids));
  }
  async pageIds(n: number): Promise<string[]> {
    const ids = await readJson<string[]>(this.page(n, 'ids.json'));
    if (ids === undefined) throw new SweepStateMissing(`the entity ids of page ${n}`, this.page(n, 'ids.json'));
    return ids;
  }

  /**
   * The files of a page folder; a folder that is not there is missing state, any other error is itself. A killed
   * write's temporary file is in the listing (each reader takes only its records, recordsNamed) and is removed
   * once it is old enough to be surely a leftover.
   */
  private async list(n: number): Promise<string[]> {
    const dir = this.pageDir(n);
    let files: string[];
    try {
      files = await fs.readdir(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SweepStateMissing(`page ${n} of the sweep`, dir);
      throw e;
    }
    if (files.some(isTempName)) await removeLeftovers(dir, files);
    return files;
  }

  writeCalls(n: number, tag: string, calls: ModelCallRecord[]): Promise<void> {
    return this.put(this.page(n, `calls-${safeName(tag)}.json`), JSON.stringify(calls));
  }
  async calls(n: number): Promise<ModelCallRecord[]> {
    const files = recordsNamed(await this.list(n).catch(() => [] as string[]), 'calls-');
    const out: ModelCallRecord[] = [];
    for (const f of files) out.push(...((await readJson<ModelCallRecord[]>(path.join(this.pageDir(n), f))) ?? []));
    return out;
  }

  writeFailures(n: number, stage: string, failures: EntityFailure[]): Promise<void> {
    return this.put(this.page(n, `failures-${safeName(stage)}.json`), JSON.stringify(failures));
  }
  async failures(n: number): Promise<EntityFailure[]> {
    const files = recordsNamed(await this.list(n).catch(() => [] as string[]), 'failures-');
    const out: EntityFailure[] = [];
    for (const f of files.sort()) out.push(...((await readJson<EntityFailure[]>(path.join(this.pageDir(n), f))) ?? []));
    return out;
  }

  async pageNumbers(): Promise<number[]> {
    try {
      // Page folders only (six or more digits): nothing else in `pages/` is a page.
      return (await fs.readdir(path.join(this.dir, 'pages')))
        .filter((name) => /^\d{6,}$/.test(name))
        .map(Number)
        .sort((a, b) => a - b);
    } catch {
      return [];
    }
  }

  writeSelection(ids: string[]): Promise<void> {
    return this.put(path.join(this.dir, 'selection.json'), JSON.stringify(ids));
  }
  selection(): Promise<string[] | undefined> {
    return readJson<string[]>(path.join(this.dir, 'selection.json'));
  }

  writeDoc(name: string, value: unknown): Promise<void> {
    return this.put(path.join(this.dir, 'docs', `${safeName(name)}.json`), JSON.stringify(value));
  }
  doc<T>(name: string): Promise<T | undefined> {
    return readJson<T>(path.join(this.dir, 'docs', `${safeName(name)}.json`));
  }

  reportFile(): string {
    return path.join(this.dir, 'report.json');
  }
  /**
   * The report is assembled in place; what an attempt killed while assembling it left beside it (its spool, its
   * unrenamed file) goes now: an attempt still running beside this one has been superseded by it.
   */
  async publishReport(): Promise<void> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    for (const f of tempFilesOf('report.json', names)) await fs.rm(path.join(this.dir, f), { force: true });
  }
  reportLocation(): string {
    return this.reportFile();
  }
}
