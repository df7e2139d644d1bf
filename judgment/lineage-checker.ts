import type { CatalogEntity } from '../domain/catalog';
import type { LineageFlagChange } from '../domain/proposal';
import type { CatalogContext } from './catalog-context';
import { tablesReadBySql } from './sql/tables';

/**
 * Compare an entity's recorded lineage with the catalog and with its own SQL. Pure and deterministic.
 * `dangling_edge`: a recorded upstream id that is not in the catalog.
 * `unrecorded_read`: the SQL reads an existing entity that the recorded lineage omits.
 */
export function checkLineage(entity: CatalogEntity, ctx: CatalogContext): LineageFlagChange[] {
  const flags: LineageFlagChange[] = [];
  const recorded = new Set(entity.upstream);

  for (const upstream of recorded) {
    if (ctx.exists(upstream)) continue;
    flags.push({
      kind: 'lineage_flag',
      finding: 'dangling_edge',
      upstream,
      explanation: oneLine(`Recorded upstream ${upstream} is not an entity in the catalog.`),
    });
  }

  if (entity.sql === undefined) return flags;
  const flagged = new Set<string>();
  for (const name of tablesReadBySql(entity.sql)) {
    // A name that resolves to nothing is not flagged: the catalog may simply not cover that table
    // (an external source, a temp table), and "the SQL reads something unknown" is not a fact about
    // recorded lineage that a repair could act on.
    const id = ctx.resolve(name);
    if (id === undefined || id === entity.id || recorded.has(id) || flagged.has(id)) continue;
    flagged.add(id);
    flags.push({
      kind: 'lineage_flag',
      finding: 'unrecorded_read',
      upstream: id,
      explanation: oneLine(`The ${entity.kind}'s SQL reads ${name} (entity ${id}), which its recorded lineage omits.`),
    });
  }
  return flags;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 300 ? flat : `${flat.slice(0, 297)}...`;
}
