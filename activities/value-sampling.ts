import { log } from '@temporalio/activity';
import type { CatalogAdapter } from '../catalog/adapter';
import type { CatalogEntity } from '../domain/catalog';
import { valueEvidence, type ValueEvidence } from '../judgment/pii/value-patterns';

/**
 * Sample some columns of one entity in this process and keep only what the patterns say (counts and a
 * pattern name): the values are dropped here and never reach Temporal, the ledger, the report or a log.
 * A catalog that holds no data, or a sample the database refuses, gives no evidence; it never fails the page.
 */
export async function sampledEvidence(
  catalog: CatalogAdapter,
  entity: CatalogEntity,
  columns: string[],
  rows: number,
): Promise<Map<string, ValueEvidence>> {
  const out = new Map<string, ValueEvidence>();
  if (catalog.sampleColumnValues === undefined || columns.length === 0) return out;
  let values: Map<string, (string | null)[]>;
  try {
    values = await catalog.sampleColumnValues(entity.id, columns, rows);
  } catch (err) {
    // The error's class and code only: a database message may quote data.
    const e = err as { name?: string; code?: string };
    log.warn('value sampling refused; no value evidence for this entity', {
      entity: entity.id,
      error: e.name ?? 'Error',
      ...(e.code ? { code: e.code } : {}),
    });
    return out;
  }
  for (const [column, sample] of values) {
    const ev = valueEvidence(sample);
    if (ev !== undefined) out.set(column, ev);
  }
  return out;
}
