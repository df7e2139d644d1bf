import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EntityFailure, Outcome, Proposal } from '../../domain/proposal';
import type { CatalogStats } from '../../judgment/catalog-stats';
import {
  stageRank,
  OUTCOME_STAGES,
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
import { storeFault } from '../fault-points';
import type { PgConnection } from './connection';

const PROPOSAL_PAGES_KEPT = 16;

/** A sweep's ledger in PostgreSQL: the sweep's metadata row, its page documents, outcomes and report. */
export class PgLedger implements SweepLedger {
  private readonly t: { docs: string; outcomes: string; sweeps: string; reports: string };
  private static cache = new Map<string, { signature: string; proposals: readonly Proposal[] }>();
  constructor(
    private readonly store: PgConnection,
    readonly ledgerKey: string,
  ) {
    const s = store.schema;
    this.t = { docs: `${s}.page_docs`, outcomes: `${s}.outcomes`, sweeps: `${s}.sweeps`, reports: `${s}.reports` };
  }
  private get pool() {
    return this.store.pool;
  }
  private missing(what: string): SweepStateMissing {
    return new SweepStateMissing(what, `${this.store.where}, sweep run ${this.ledgerKey}`, 'postgres');
  }

  private async put(n: number, name: string, body: string): Promise<void> {
    await this.pool.query(
      `insert into ${this.t.docs} (ledger_key, page, name, body) values ($1, $2, $3, $4)
       on conflict (ledger_key, page, name) do update set body = excluded.body`,
      [this.ledgerKey, n, name, body],
    );
    // Stored: a worker killed here never hears so, and its retry writes the same record again.
    storeFault('ledger-write');
  }
  private async get<T>(n: number, name: string): Promise<T | undefined> {
    const { rows } = await this.pool.query<{ body: string }>(
      `select body from ${this.t.docs} where ledger_key = $1 and page = $2 and name = $3`,
      [this.ledgerKey, n, name],
    );
    return rows[0] ? (JSON.parse(rows[0].body) as T) : undefined;
  }
  /** Documents of a page whose names start with `prefix`, in name order. */
  private async list<T>(n: number, prefix: string): Promise<{ name: string; value: T }[]> {
    const { rows } = await this.pool.query<{ name: string; body: string }>(
      `select name, body from ${this.t.docs} where ledger_key = $1 and page = $2 and starts_with(name, $3) order by name`,
      [this.ledgerKey, n, prefix],
    );
    return rows.map((r) => ({ name: r.name, value: JSON.parse(r.body) as T }));
  }
  /** A page exists once its ids are stored (loadCatalogPage); a page that does not is missing state. */
  private async requirePage(n: number): Promise<void> {
    const { rowCount } = await this.pool.query(
      `select 1 from ${this.t.docs} where ledger_key = $1 and page = $2 and name = 'ids'`,
      [this.ledgerKey, n],
    );
    if (!rowCount) throw this.missing(`page ${n} of the sweep`);
  }

  async writeMeta(m: SweepMeta): Promise<void> {
    await this.pool.query(
      `insert into ${this.t.sweeps} (ledger_key, sweep_id, meta) values ($1, $2, $3)
       on conflict (ledger_key) do update set meta = excluded.meta`,
      [this.ledgerKey, m.sweepId, JSON.stringify(m)],
    );
  }
  async meta(): Promise<SweepMeta> {
    const { rows } = await this.pool.query<{ meta: SweepMeta }>(
      `select meta from ${this.t.sweeps} where ledger_key = $1`,
      [this.ledgerKey],
    );
    if (!rows[0]) throw this.missing('the sweep ledger');
    return rows[0].meta;
  }

  writeProposals(n: number, agent: string, proposals: Proposal[]): Promise<void> {
    return this.put(n, `proposals-${agent}`, JSON.stringify(proposals));
  }
  /** Parsed once per page while its rows are unchanged (a row's xmin changes with every update). */
  async proposals(n: number): Promise<readonly Proposal[]> {
    const { rows } = await this.pool.query<{ name: string; v: string }>(
      `select name, xmin::text as v from ${this.t.docs}
        where ledger_key = $1 and page = $2 and (name = 'ids' or starts_with(name, 'proposals-')) order by name`,
      [this.ledgerKey, n],
    );
    if (!rows.some((r) => r.name === 'ids')) throw this.missing(`page ${n} of the sweep`);
    const signature = rows.map((r) => `${r.name}:${r.v}`).join('|');
    const key = `${this.store.id}\u0000${this.ledgerKey}\u0000${n}`;
    const hit = PgLedger.cache.get(key);
    if (hit && hit.signature === signature) return hit.proposals;
    const out: Proposal[] = [];
    for (const d of await this.list<Proposal[]>(n, 'proposals-')) out.push(...d.value);
    PgLedger.cache.set(key, { signature, proposals: out });
    if (PgLedger.cache.size > PROPOSAL_PAGES_KEPT) PgLedger.cache.delete(PgLedger.cache.keys().next().value!);
    return out;
  }

  async putOutcomes(n: number, stage: OutcomeStage, tag: string, outcomes: Outcome[]): Promise<void> {
    await this.pool.query(
      `insert into ${this.t.outcomes} (ledger_key, page, tag, stage, body) values ($1, $2, $3, $4, $5)
       on conflict (ledger_key, page, tag) do update set stage = excluded.stage, body = excluded.body`,
      [this.ledgerKey, n, tag, stageRank(stage), JSON.stringify(outcomes)],
    );
  }
  async outcomes(n: number): Promise<Outcome[]> {
    const [, { rows }] = await Promise.all([
      this.requirePage(n),
      this.pool.query<{ tag: string; stage: number; body: string }>(
        `select tag, stage, body from ${this.t.outcomes} where ledger_key = $1 and page = $2`,
        [this.ledgerKey, n],
      ),
    ]);
    return mergeOutcomes(
      rows.map((r) => ({ stage: OUTCOME_STAGES[r.stage]!, tag: r.tag, outcomes: JSON.parse(r.body) as Outcome[] })),
    );
  }

  writeIntent(n: number, lines: string[], round = 0): Promise<void> {
    return this.put(n, `write-intent${round === 0 ? '' : `-r${round}`}`, `[${lines.join(',')}]`);
  }
  async intent(n: number): Promise<WriteRecord[]> {
    return (await this.list<WriteRecord[]>(n, 'write-intent'))
      .sort((a, b) => byRound(a.name, b.name))
      .flatMap((d) => d.value);
  }
  writeWrites(n: number, w: PageWrites, round = 0): Promise<void> {
    return this.put(n, `writes${round === 0 ? '' : `-r${round}`}`, JSON.stringify(w));
  }
  writes(n: number, round = 0): Promise<PageWrites | undefined> {
    return this.get<PageWrites>(n, `writes${round === 0 ? '' : `-r${round}`}`);
  }
  async allWrites(n: number): Promise<PageWrites | undefined> {
    return mergeWrites(
      (await this.list<PageWrites>(n, 'writes')).sort((a, b) => byRound(a.name, b.name)).map((d) => d.value),
    );
  }
  writeStats(n: number, when: 'before' | 'after', stats: CatalogStats): Promise<void> {
    return this.put(n, `stats-${when}`, JSON.stringify(stats));
  }
  stats(n: number, when: 'before' | 'after'): Promise<CatalogStats | undefined> {
    return this.get<CatalogStats>(n, `stats-${when}`);
  }
  writePageIds(n: number, ids: string[]): Promise<void> {
    return this.put(n, 'ids', JSON.stringify(ids));
  }
  async pageIds(n: number): Promise<string[]> {
    const ids = await this.get<string[]>(n, 'ids');
    if (ids === undefined) throw this.missing(`the entity ids of page ${n}`);
    return ids;
  }
  writeCalls(n: number, tag: string, calls: ModelCallRecord[]): Promise<void> {
    return this.put(n, `calls-${tag}`, JSON.stringify(calls));
  }
  async calls(n: number): Promise<ModelCallRecord[]> {
    return (await this.list<ModelCallRecord[]>(n, 'calls-')).flatMap((d) => d.value);
  }
  writeFailures(n: number, stage: string, failures: EntityFailure[]): Promise<void> {
    return this.put(n, `failures-${stage}`, JSON.stringify(failures));
  }
  async failures(n: number): Promise<EntityFailure[]> {
    return (await this.list<EntityFailure[]>(n, 'failures-')).flatMap((d) => d.value);
  }
  // The sweep's own documents (the selection) are kept on page -1, outside every page.
  writeSelection(ids: string[]): Promise<void> {
    return this.put(-1, 'selection', JSON.stringify(ids));
  }
  selection(): Promise<string[] | undefined> {
    return this.get<string[]>(-1, 'selection');
  }
  writeDoc(name: string, value: unknown): Promise<void> {
    return this.put(-1, `doc:${name}`, JSON.stringify(value));
  }
  doc<T>(name: string): Promise<T | undefined> {
    return this.get<T>(-1, `doc:${name}`);
  }
  async pageNumbers(): Promise<number[]> {
    const { rows } = await this.pool.query<{ page: number }>(
      `select distinct page from ${this.t.docs} where ledger_key = $1 and page >= 0 order by page`,
      [this.ledgerKey],
    );
    return rows.map((r) => r.page);
  }

  reportFile(): string {
    return path.join(os.tmpdir(), reportFileName(this.ledgerKey, process.pid));
  }
  async publishReport(file: string): Promise<void> {
    try {
      await this.pool.query(
        `insert into ${this.t.reports} (ledger_key, body) values ($1, $2)
         on conflict (ledger_key) do update set body = excluded.body, created_at = now()`,
        [this.ledgerKey, await fsp.readFile(file, 'utf8')],
      );
    } finally {
      await fsp.rm(file, { force: true });
      await removeReportLeftovers(this.ledgerKey);
    }
  }
  reportLocation(): string {
    return `${this.store.where}, table ${this.t.reports}, ledger_key '${this.ledgerKey}'`;
  }
}

const reportFileName = (ledgerKey: string, pid: number) => `argus-report-${safeName(ledgerKey)}-${pid}.json`;

/**
 * What report attempts of this sweep run killed on this host left in the temporary folder: their report files
 * (never published) and those files' own temporary files. Removed once the report is published: an attempt still
 * running then has been superseded by the one that published.
 */
async function removeReportLeftovers(ledgerKey: string): Promise<void> {
  const dir = os.tmpdir();
  const head = `argus-report-${safeName(ledgerKey)}-`;
  for (const name of await fsp.readdir(dir).catch(() => [] as string[]))
    if (name.startsWith(head) && /^\d+\.json(\.\d+\.[0-9a-z]+(\.[a-z]+)?\.tmp)?$/.test(name.slice(head.length)))
      await fsp.rm(path.join(dir, name), { force: true });
}
