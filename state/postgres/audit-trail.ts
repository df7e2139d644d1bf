import { auditPageKey, type AppliedBy, type AuditEntry, type AuditTrail, type WriteRecord } from '../store';
import { storeFault } from '../fault-points';
import { inTransaction, type PgConnection } from './connection';

const APPEND_ROWS = 2000;

/** A catalog's audit trail in PostgreSQL: lines plus the applied index, changed together in one transaction. */
export class PgAuditTrail implements AuditTrail {
  private readonly s: string;
  constructor(
    private readonly store: PgConnection,
    readonly key: string,
  ) {
    this.s = store.schema;
  }

  async append(entries: (AuditEntry | string)[]): Promise<void> {
    if (entries.length === 0) return;
    await inTransaction(this.store.pool, async (c) => {
      for (let i = 0; i < entries.length; i += APPEND_ROWS) {
        const slice = entries.slice(i, i + APPEND_ROWS);
        const parsed = slice.map((e) => (typeof e === 'string' ? (JSON.parse(e) as AuditEntry) : e));
        const lines = slice.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
        await c.query(
          `insert into ${this.s}.audit (audit_key, kind, proposal_id, line)
           select $1, k, p, l from unnest($2::text[], $3::text[], $4::text[]) as u(k, p, l)`,
          [this.key, parsed.map((e) => e.type), parsed.map((e) => ('proposalId' in e ? e.proposalId : null)), lines],
        );
        const writes = parsed.filter((e): e is WriteRecord => e.type === 'write');
        if (writes.length)
          await c.query(
            `insert into ${this.s}.applied (audit_key, proposal_id, sweep_id, ledger_key)
             select $1, p, s, l from unnest($2::text[], $3::text[], $4::text[]) as u(p, s, l)
             on conflict (audit_key, proposal_id) do update set sweep_id = excluded.sweep_id, ledger_key = excluded.ledger_key`,
            [
              this.key,
              writes.map((w) => w.proposalId),
              writes.map((w) => w.sweepId),
              writes.map((w) => w.ledgerKey ?? null),
            ],
          );
        const undone = parsed.flatMap((e) => (e.type === 'undo' ? [e.proposalId] : []));
        if (undone.length)
          await c.query(`delete from ${this.s}.applied where audit_key = $1 and proposal_id = any($2::text[])`, [
            this.key,
            undone,
          ]);
        const pages = parsed.flatMap((e) => (e.type === 'page' ? [auditPageKey(e.ledgerKey, e.page, e.round)] : []));
        if (pages.length)
          await c.query(
            `insert into ${this.s}.pages_logged (audit_key, page_key) select $1, unnest($2::text[]) on conflict do nothing`,
            [this.key, pages],
          );
      }
      // Inserted, not committed: a worker killed here leaves nothing (the server rolls the transaction back).
      storeFault('audit-append');
    });
  }

  async readAll(): Promise<AuditEntry[]> {
    const { rows } = await this.store.pool.query<{ line: string }>(
      `select line from ${this.s}.audit where audit_key = $1 order by seq`,
      [this.key],
    );
    return rows.map((r) => JSON.parse(r.line) as AuditEntry);
  }

  async applied(ids?: readonly string[]): Promise<Map<string, AppliedBy>> {
    const { rows } = await this.store.pool.query<{ proposal_id: string; sweep_id: string; ledger_key: string | null }>(
      `select proposal_id, sweep_id, ledger_key from ${this.s}.applied where audit_key = $1` +
        (ids ? ' and proposal_id = any($2::text[])' : ''),
      ids ? [this.key, ids] : [this.key],
    );
    return new Map(
      rows.map((r) => [r.proposal_id, { sweepId: r.sweep_id, ...(r.ledger_key ? { ledgerKey: r.ledger_key } : {}) }]),
    );
  }

  async lastReviewed(): Promise<Map<string, string>> {
    const { rows } = await this.store.pool.query<{ entity: string; at: string }>(
      `select line::jsonb ->> 'entityId' as entity, max(line::jsonb ->> 'time') as at
         from ${this.s}.audit where audit_key = $1 and kind = 'decision' group by 1`,
      [this.key],
    );
    return new Map(rows.map((r) => [r.entity, r.at]));
  }

  async pageLogged(ledgerKey: string, page: number, round = 0): Promise<boolean> {
    const { rowCount } = await this.store.pool.query(
      `select 1 from ${this.s}.pages_logged where audit_key = $1 and page_key = $2`,
      [this.key, auditPageKey(ledgerKey, page, round)],
    );
    return (rowCount ?? 0) > 0;
  }
}
