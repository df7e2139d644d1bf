import type { CatalogEntity } from '../domain/catalog';
import { digest64, stableJson } from '../domain/digest';
import type { CatalogContext } from './catalog-context';
import { tablesReadBySql } from './sql/tables';

/**
 * An entity's own fingerprint when its catalog has no cheaper one: a digest of everything judgment reads of it
 * (columns, types, keys, descriptions and their sources, tags, exceptions, lineage, SQL), in a stable form.
 */
export function entityFingerprint(e: CatalogEntity): string {
  return digest64(stableJson(e));
}

/**
 * What an entity's evidence reads of the rest of the catalog: the entities its lineage and SQL name (their
 * records feed inherited and derived descriptions and the lineage check) and, for names that resolve to nothing,
 * the name itself (a table created later changes the lineage check); foreign keys only by whether they resolve.
 */
export function readsOf(e: CatalogEntity, ctx: CatalogContext): { entities: string[]; names: string[] } {
  const entities = new Set<string>();
  const names = new Set<string>();
  for (const u of e.upstream) (ctx.exists(u) ? entities : names).add(u);
  if (e.sql) {
    for (const t of tablesReadBySql(e.sql)) {
      const id = ctx.resolve(t);
      if (id !== undefined) entities.add(id);
      else names.add(t);
    }
  }
  for (const c of e.columns) {
    if (!c.foreign_key) continue;
    const table = c.foreign_key.split('.').slice(0, -1).join('.');
    names.add(`fk:${table}:${ctx.resolve(table) ?? ''}`);
  }
  entities.delete(e.id);
  return { entities: [...entities].sort(), names: [...names].sort() };
}

/**
 * The fingerprints a decision rests on: an entity's own, combined with the effective fingerprints of the
 * entities it reads, transitively (a description inherited over several hops changes when any hop does). A
 * cycle in the lineage is cut where it closes (the entity on the cycle contributes its own fingerprint).
 * Pure and linear in entities plus edges.
 */
export function effectiveFingerprints(
  own: ReadonlyMap<string, string>,
  reads: ReadonlyMap<string, { entities: string[]; names: string[] }>,
): Map<string, string> {
  const out = new Map<string, string>();
  const onPath = new Set<string>();
  // Iterative depth-first walk: lineage chains of thousands must not overflow the stack.
  for (const root of own.keys()) {
    if (out.has(root)) continue;
    const stack: { id: string; next: number }[] = [{ id: root, next: 0 }];
    onPath.add(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const deps = reads.get(top.id)?.entities ?? [];
      if (top.next < deps.length) {
        const d = deps[top.next++]!;
        if (!out.has(d) && !onPath.has(d) && own.has(d)) {
          onPath.add(d);
          stack.push({ id: d, next: 0 });
        }
        continue;
      }
      const r = reads.get(top.id);
      const parts = [own.get(top.id) ?? ''];
      for (const d of deps) parts.push(`${d}=${out.get(d) ?? own.get(d) ?? '-'}`);
      for (const n of r?.names ?? []) parts.push(`?${n}`);
      out.set(top.id, parts.length === 1 ? parts[0]! : digest64(parts.join('\u0000')));
      onPath.delete(top.id);
      stack.pop();
    }
  }
  return out;
}
