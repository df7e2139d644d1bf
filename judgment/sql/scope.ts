/**
 * How a name in a select resolves: the relations its FROM reads (tables, CTEs and derived tables with
 * their shapes) and the column a reference, qualified or not, stands for among them.
 */
import type { ColumnRef, Derivation } from './derivation';
import { PSEUDO_COLUMNS } from './keywords';
import { identText, isPunct, stripParens, type Token } from './tokens';

/** One row per row read (filtered or joined), one row per known group, or one row per something not understood. */
export type Grain = 'rows' | 'grouped' | 'unknown';

/** How a FROM item resolves: a table the statement reads, a CTE or subquery with a known shape, or neither. */
export type Relation = { kind: 'table'; name: string } | { kind: 'derived'; shape: Shape } | { kind: 'unknown' };

export interface Shape {
  columns: Map<string, Derivation | undefined>;
  order: string[];
  /** Relations whose columns pass through for any name not listed. */
  star: Relation[];
  grain: Grain;
  /** Keys when grain is 'grouped'. */
  groupBy: ColumnRef[] | undefined;
  from: string[];
  joined: boolean;
  filtered: boolean;
}

export interface FromItem {
  alias: string | undefined;
  /** The table's or CTE's name as written, when the item is one. */
  name: string | undefined;
  relation: Relation;
}

export interface Scope {
  items: FromItem[];
  /**
   * Output names the select list gives to something other than the same-named column: an unqualified
   * reference to one may be a lateral alias (Snowflake, Redshift, DuckDB) rather than the input column.
   */
  hidden?: Set<string>;
}

/** `col`, `t.col`, `s.t.col` spanning exactly [s, e). */
export function columnRefAt(
  tokens: Token[],
  s: number,
  e: number,
): { qualifier: string | undefined; column: string } | undefined {
  const parts: string[] = [];
  let i = s;
  if (e <= s) return undefined;
  for (;;) {
    const id = identText(tokens[i]);
    if (id === undefined) return undefined;
    parts.push(id);
    i++;
    if (i === e) break;
    if (!isPunct(tokens[i], '.')) return undefined;
    i++;
  }
  const word = tokens[s]!;
  if (parts.length === 1 && word.kind === 'word' && PSEUDO_COLUMNS.has(word.upper)) return undefined;
  return { qualifier: parts.length > 1 ? parts.slice(0, -1).join('.') : undefined, column: parts[parts.length - 1]! };
}

export function matches(item: FromItem, qualifier: string): boolean {
  if (item.alias !== undefined) return item.alias === qualifier;
  if (item.name === undefined) return false;
  return item.name === qualifier || (item.relation.kind === 'table' && item.name.endsWith(`.${qualifier}`));
}

/** The derivation a reference to `column` (optionally qualified) has in this scope. */
export function resolve(qualifier: string | undefined, column: string, scope: Scope): Derivation | undefined {
  if (qualifier !== undefined) {
    const candidates = scope.items.filter((it) => matches(it, qualifier));
    return candidates.length === 1 ? lookup(candidates[0]!.relation, column) : undefined;
  }
  if (scope.hidden?.has(column)) return undefined;
  const items = scope.items;
  if (items.length === 1) return lookup(items[0]!.relation, column);
  // Unqualified over several relations: sure only when every one lists all its columns and one has it.
  const known: Shape[] = [];
  for (const it of items) {
    if (it.relation.kind !== 'derived' || it.relation.shape.star.length > 0) return undefined;
    known.push(it.relation.shape);
  }
  const listing = known.filter((s) => s.columns.has(column));
  return listing.length === 1 ? listing[0]!.columns.get(column) : undefined;
}

function lookup(relation: Relation, column: string): Derivation | undefined {
  if (relation.kind === 'table') return { kind: 'column', source: { table: relation.name, column }, renamed: false };
  if (relation.kind === 'unknown') return undefined;
  const shape = relation.shape;
  if (shape.columns.has(column)) return shape.columns.get(column);
  if (shape.star.length === 1) return lookup(shape.star[0]!, column);
  return undefined;
}

/** A source column as a plain reference: its derivation must be a pass-through to a read table's column. */
export function sourceAt(tokens: Token[], s: number, e: number, scope: Scope): ColumnRef | undefined {
  const ref = columnRefAt(tokens, ...stripParens(tokens, s, e));
  if (ref === undefined) return undefined;
  const d = resolve(ref.qualifier, ref.column, scope);
  return d?.kind === 'column' ? d.source : undefined;
}
