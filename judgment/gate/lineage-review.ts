import type { CatalogEntity } from '../../domain/catalog';
import type { LineageFlagChange } from '../../domain/proposal';
import type { CatalogContext } from '../catalog-context';
import { tablesReadBySql } from '../sql/tables';
import { approve, q, reject, type GateVerdict } from './verdict';

/**
 * A lineage flag: a dangling edge is confirmed when the recorded upstream is not in the catalog; an unrecorded
 * read when the entity's SQL reads an existing entity its lineage omits.
 */
export function reviewLineageFlag(change: LineageFlagChange, entity: CatalogEntity, ctx: CatalogContext): GateVerdict {
  const up = change.upstream;
  const recorded = entity.upstream.includes(up);
  if (change.finding === 'dangling_edge') {
    if (!recorded) return reject('lineage:not-recorded', `${q(up)} is not in the recorded upstream of ${q(entity.id)}`);
    if (ctx.exists(up))
      return reject(
        'lineage:upstream-exists',
        `recorded upstream ${q(up)} exists in the catalog, so the edge is not dangling`,
      );
    return approve('lineage:dangling-confirmed', `recorded upstream ${q(up)} is not an entity in the catalog`);
  }
  if (up === entity.id) return reject('lineage:self', `${q(entity.id)} cannot be its own upstream`);
  if (!ctx.exists(up)) return reject('lineage:unknown-upstream', `${q(up)} is not an entity id in the catalog`);
  if (recorded)
    return reject('lineage:already-recorded', `${q(up)} is already in the recorded upstream of ${q(entity.id)}`);
  if (entity.sql === undefined) return reject('lineage:no-sql', `${q(entity.id)} has no SQL to read ${q(up)} from`);
  const reads = tablesReadBySql(entity.sql);
  const match = reads.find((name) => ctx.resolve(name) === up);
  if (match === undefined) return reject('lineage:not-read', `the SQL of ${q(entity.id)} does not read ${q(up)}`);
  return approve(
    'lineage:unrecorded-read-confirmed',
    `the SQL of ${q(entity.id)} reads ${q(match)} (${q(up)}), which its lineage omits`,
  );
}
