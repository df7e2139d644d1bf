/**
 * What a view's or model's SELECT makes of each output column: passed through or renamed from a column
 * of a table it reads, cast, aggregated, mapped by CASE, scaled by a constant, or defaulted by COALESCE.
 * Column references are followed through CTEs and derived tables down to the tables the statement
 * reads. Like the table reader it is not a SQL parser: it never throws, and anything it does not
 * recognise comes back as "unknown" (no derivation), never as a guess.
 */
import { tokenize, type Token } from './tables';

/** A column of a table the statement reads: `table` as written in the SQL (lowercase, dotted), if known. */
export interface ColumnRef {
  table: string | undefined;
  column: string;
}

export type Derivation =
  | { kind: 'column'; source: ColumnRef; renamed: boolean }
  | { kind: 'cast'; source: ColumnRef; type: string }
  | {
      kind: 'aggregate';
      fn: AggregateFn;
      source: ColumnRef | undefined;
      distinct: boolean;
      /** Of the select that aggregates (which may be a CTE or subquery): its GROUP BY keys, tables, WHERE. */
      groupBy: ColumnRef[] | undefined;
      from: string[];
      /** True when the rows aggregated are a subset of the tables' rows (a WHERE there or below it). */
      filtered: boolean;
    }
  | { kind: 'case'; source: ColumnRef; mapping: [string, string][]; otherwise: string | undefined }
  | { kind: 'arithmetic'; source: ColumnRef; op: '+' | '-' | '*' | '/'; operand: string }
  | { kind: 'coalesce'; source: ColumnRef; fallback: string };

export type AggregateFn = 'sum' | 'count' | 'avg' | 'min' | 'max';

export interface SelectShape {
  /** Output columns named in the select list, in order (lowercase); `derivation` undefined when not understood. */
  columns: { name: string; derivation: Derivation | undefined }[];
  /** Tables (as written) whose every column the select passes through: SELECT *, t.*. */
  starFrom: string[];
  /**
   * What one output row stands for when it is not one row of what the select reads: GROUP BY keys (or
   * SELECT DISTINCT columns) of the outermost select, or of the one CTE or derived table it reads,
   * resolved to read tables' columns where possible.
   */
  groupBy: ColumnRef[] | undefined;
  /** Tables the outermost FROM reads, through CTEs and derived tables. */
  from: string[];
  /** True when the rows come from joining more than one relation (in the outermost FROM or below it). */
  joined: boolean;
  /** True when the rows are a subset of what it reads (WHERE, HAVING, LIMIT, DISTINCT ON, here or below). */
  filtered: boolean;
}

const AGGREGATES = new Set<string>(['SUM', 'COUNT', 'AVG', 'MIN', 'MAX']);
/** Other aggregates: not described, but a select using one has one row per group, not per row read. */
const OTHER_AGGREGATES = new Set<string>([
  ...['STRING_AGG', 'ARRAY_AGG', 'GROUP_CONCAT', 'LISTAGG', 'JSON_AGG', 'JSONB_AGG', 'JSON_OBJECT_AGG'],
  ...['JSONB_OBJECT_AGG', 'XMLAGG', 'OBJECT_AGG', 'ARRAY_UNION_AGG', 'COLLECT_LIST', 'COLLECT_SET'],
  ...['BOOL_AND', 'BOOL_OR', 'EVERY', 'BIT_AND', 'BIT_OR', 'BIT_XOR', 'LOGICAL_AND', 'LOGICAL_OR'],
  ...['STDDEV', 'STDDEV_POP', 'STDDEV_SAMP', 'VARIANCE', 'VAR_POP', 'VAR_SAMP', 'COVAR_POP', 'COVAR_SAMP'],
  ...['CORR', 'MEDIAN', 'MODE', 'PERCENTILE_CONT', 'PERCENTILE_DISC', 'APPROX_PERCENTILE', 'KURTOSIS'],
  ...['SKEWNESS', 'COUNT_IF', 'COUNTIF', 'SUM_IF', 'AVG_IF', 'ANY_VALUE', 'ARBITRARY', 'MIN_BY', 'MAX_BY'],
  ...['ARG_MIN', 'ARG_MAX', 'APPROX_COUNT_DISTINCT', 'APPROX_DISTINCT', 'APPROX_TOP_K', 'HLL_COUNT', 'UNIQ'],
]);
const COALESCE = new Set(['COALESCE', 'IFNULL', 'NVL', 'ISNULL']);
const CASTS = new Set(['CAST', 'TRY_CAST', 'SAFE_CAST']);
const CLAUSES = new Set(['FROM', 'WHERE', 'GROUP', 'HAVING', 'ORDER', 'LIMIT', 'OFFSET', 'FETCH', 'QUALIFY', 'WINDOW']);
/** Clauses after which a select returns only some of the rows it would otherwise return. */
const ROW_LIMITS = ['WHERE', 'HAVING', 'QUALIFY', 'LIMIT', 'OFFSET', 'FETCH'];
const SET_OPS = new Set(['UNION', 'INTERSECT', 'EXCEPT', 'MINUS']);
const JOIN_WORDS = new Set(['JOIN', 'LEFT', 'RIGHT', 'FULL', 'INNER', 'OUTER', 'CROSS', 'NATURAL', 'LATERAL']);
/** Words that look like a column reference but are values: never a pass-through of a column. */
const PSEUDO_COLUMNS = new Set([
  ...['NULL', 'TRUE', 'FALSE', 'DEFAULT', 'CURRENT_DATE', 'CURRENT_TIME', 'CURRENT_TIMESTAMP', 'LOCALTIME'],
  ...['LOCALTIMESTAMP', 'CURRENT_USER', 'SESSION_USER', 'USER', 'CURRENT_ROLE', 'CURRENT_SCHEMA'],
  ...['CURRENT_CATALOG', 'SYSDATE', 'SYSTIMESTAMP', 'ROWNUM'],
]);
/** Words inside or after an expression that are never an alias: `x IS NULL`, `y::double precision`. */
const NOT_ALIAS = new Set([
  ...CLAUSES,
  ...JOIN_WORDS,
  ...SET_OPS,
  ...PSEUDO_COLUMNS,
  ...['ON', 'USING', 'AS', 'END', 'AND', 'OR', 'NOT', 'IS', 'IN', 'LIKE', 'ILIKE', 'BETWEEN', 'WHEN'],
  ...['THEN', 'ELSE', 'CASE', 'OVER', 'FILTER', 'COLLATE', 'ASC', 'DESC', 'APPLY', 'WITH', 'TABLESAMPLE'],
  ...['PRECISION', 'VARYING', 'ZONE', 'SELECT', 'DISTINCT', 'ALL', 'ESCAPE'],
]);
/** Words after which the next word is an operand, not an alias: `NOT flag`, `INTERVAL x`. */
const TAKES_OPERAND = new Set([
  ...['NOT', 'AND', 'OR', 'IS', 'IN', 'LIKE', 'ILIKE', 'BETWEEN', 'THEN', 'ELSE', 'WHEN', 'CASE', 'DISTINCT'],
  ...['INTERVAL', 'EXISTS', 'ON', 'SELECT', 'AT', 'ESCAPE', 'SIMILAR', 'TO', 'ANY', 'SOME'],
]);
/** Words a type name never contains: their presence means `x::type` is followed by more expression. */
const NOT_IN_TYPE = new Set([...NOT_ALIAS].filter((w) => !['PRECISION', 'VARYING', 'ZONE', 'WITH'].includes(w)));
const OPERATOR_CHARS = '+-*/|:=<>,!%^&~';

/** One row per row read (filtered or joined), one row per known group, or one row per something not understood. */
type Grain = 'rows' | 'grouped' | 'unknown';

/** How a FROM item resolves: a table the statement reads, a CTE or subquery with a known shape, or neither. */
type Relation = { kind: 'table'; name: string } | { kind: 'derived'; shape: Shape } | { kind: 'unknown' };

interface Shape {
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

interface FromItem {
  alias: string | undefined;
  /** The table's or CTE's name as written, when the item is one. */
  name: string | undefined;
  relation: Relation;
}

interface Scope {
  items: FromItem[];
  /**
   * Output names the select list gives to something other than the same-named column: an unqualified
   * reference to one may be a lateral alias (Snowflake, Redshift, DuckDB) rather than the input column.
   */
  hidden?: Set<string>;
}

/** What an aggregate in the select list may say about the select that computes it. */
interface AggregateContext {
  /** False when its rows or groups are not understood: then no aggregate is described. */
  ok: boolean;
  groupBy: ColumnRef[] | undefined;
  from: string[];
  filtered: boolean;
}

/** Read the output columns of a view's SQL. Undefined when the statement is not a single SELECT it can read. */
export function readSelectShape(sql: string): SelectShape | undefined {
  const hit = shapeCache.get(sql);
  if (hit !== undefined) return hit ?? undefined;
  let shape: SelectShape | undefined;
  try {
    const tokens = tokenize(sql);
    let end = tokens.length;
    while (end > 0 && isPunct(tokens[end - 1], ';')) end--;
    const single = !tokens.slice(0, end).some((t) => isPunct(t, ';'));
    const inner = single ? readQuery(tokens, 0, end, new Map()) : undefined;
    // A grain not understood (an aggregate over all rows, GROUP BY of an expression) must not read as
    // "one row per row read": unless the rows are joined (which already says so), no shape at all.
    shape = inner && (inner.grain !== 'unknown' || inner.joined) ? publicShape(inner) : undefined;
  } catch {
    shape = undefined;
  }
  if (shapeCache.size >= 2048) shapeCache.delete(shapeCache.keys().next().value!);
  shapeCache.set(sql, shape ?? null);
  return shape;
}

const shapeCache = new Map<string, SelectShape | null>();

function publicShape(s: Shape): SelectShape {
  const starFrom: string[] = [];
  const collect = (r: Relation) => {
    if (r.kind === 'table') starFrom.push(r.name);
    else if (r.kind === 'derived') r.shape.star.forEach(collect);
  };
  s.star.forEach(collect);
  return {
    columns: s.order.map((name) => ({ name, derivation: s.columns.get(name) })),
    starFrom: [...new Set(starFrom)],
    groupBy: s.grain === 'grouped' ? s.groupBy : undefined,
    from: s.from,
    joined: s.joined,
    filtered: s.filtered,
  };
}

function isWord(t: Token | undefined, upper: string): boolean {
  return t?.kind === 'word' && t.upper === upper;
}

function isPunct(t: Token | undefined, text: string): boolean {
  return t?.kind === 'punct' && t.text === text;
}

/** Index of the parenthesis closing the one at `open` (or `end` when unbalanced). */
function closing(tokens: Token[], open: number, end: number): number {
  let depth = 0;
  for (let k = open; k < end; k++) {
    const t = tokens[k]!;
    if (t.kind !== 'punct') continue;
    if (t.text === '(') depth++;
    else if (t.text === ')' && --depth === 0) return k;
  }
  return end;
}

/** Top-level positions in [start, end) where `pred` holds (depth 0 relative to start). */
function topLevel(tokens: Token[], start: number, end: number, pred: (t: Token, i: number) => boolean): number[] {
  const out: number[] = [];
  let depth = 0;
  for (let i = start; i < end; i++) {
    const t = tokens[i]!;
    if (isPunct(t, '(')) depth++;
    else if (isPunct(t, ')')) depth--;
    else if (depth === 0 && pred(t, i)) out.push(i);
  }
  return out;
}

function split(tokens: Token[], start: number, end: number): [number, number][] {
  const commas = topLevel(tokens, start, end, (t) => isPunct(t, ','));
  const parts: [number, number][] = [];
  let s = start;
  for (const c of [...commas, end]) {
    if (c > s) parts.push([s, c]);
    s = c + 1;
  }
  return parts;
}

function identText(t: Token | undefined): string | undefined {
  if (t?.kind === 'word' || t?.kind === 'quoted') return t.text.toLowerCase();
  return undefined;
}

/** True when [s, e) starts a query, possibly inside more parentheses. */
function startsQuery(tokens: Token[], s: number, e: number): boolean {
  let i = s;
  while (i < e && isPunct(tokens[i], '(')) i++;
  const t = tokens[i];
  return t?.kind === 'word' && ['SELECT', 'WITH', 'VALUES', 'TABLE'].includes(t.upper);
}

/** [s, e) without parentheses around all of it; a parenthesised query keeps its own. */
function stripParens(tokens: Token[], s: number, e: number): [number, number] {
  while (
    e - s >= 2 &&
    isPunct(tokens[s], '(') &&
    closing(tokens, s, e) === e - 1 &&
    !startsQuery(tokens, s + 1, e - 1)
  ) {
    s++;
    e--;
  }
  return [s, e];
}

/** [WITH ctes] select, with the CTEs visible so far. */
function readQuery(tokens: Token[], start: number, end: number, ctes: Map<string, Relation>): Shape | undefined {
  let i = start;
  while (isPunct(tokens[i], '(') && closing(tokens, i, end) === end - 1) {
    i++;
    end--;
  }
  if (isWord(tokens[i], 'WITH')) {
    const local = new Map(ctes);
    i++;
    if (isWord(tokens[i], 'RECURSIVE')) return undefined;
    for (;;) {
      const name = identText(tokens[i]);
      if (name === undefined) return undefined;
      let k = i + 1;
      let renamed = false;
      if (isPunct(tokens[k], '(')) {
        renamed = true;
        k = closing(tokens, k, end) + 1;
      }
      if (!isWord(tokens[k], 'AS')) return undefined;
      k++;
      if (isWord(tokens[k], 'NOT')) k++;
      if (isWord(tokens[k], 'MATERIALIZED')) k++;
      if (!isPunct(tokens[k], '(')) return undefined;
      const close = closing(tokens, k, end);
      // A column list renames the body's columns by position: not followed.
      const body = renamed ? undefined : readQuery(tokens, k + 1, close, local);
      local.set(name, body ? { kind: 'derived', shape: body } : { kind: 'unknown' });
      i = close + 1;
      if (isPunct(tokens[i], ',')) {
        i++;
        continue;
      }
      break;
    }
    return readQuery(tokens, i, end, local);
  }
  if (!isWord(tokens[i], 'SELECT')) return undefined;
  if (topLevel(tokens, i, end, (t) => t.kind === 'word' && SET_OPS.has(t.upper)).length > 0) return undefined;
  return readSelect(tokens, i, end, ctes);
}

/** One entry of a select list: a star over some FROM items, or an expression with its output name. */
type SelectItem =
  { kind: 'star'; items: FromItem[] | undefined } | { kind: 'expr'; name: string | undefined; s: number; e: number };

function readSelect(tokens: Token[], start: number, end: number, ctes: Map<string, Relation>): Shape | undefined {
  let listStart = start + 1;
  let distinct = false;
  let distinctOn = false;
  let top = false;
  for (;;) {
    if (isWord(tokens[listStart], 'DISTINCT')) {
      distinct = true;
      listStart++;
      if (isWord(tokens[listStart], 'ON') && isPunct(tokens[listStart + 1], '(')) {
        distinctOn = true;
        listStart = closing(tokens, listStart + 1, end) + 1;
      }
    } else if (isWord(tokens[listStart], 'ALL')) {
      listStart++;
    } else if (isWord(tokens[listStart], 'TOP')) {
      top = true;
      listStart++;
      listStart = isPunct(tokens[listStart], '(') ? closing(tokens, listStart, end) + 1 : listStart + 1;
      if (isWord(tokens[listStart], 'PERCENT')) listStart++;
      if (isWord(tokens[listStart], 'WITH') && isWord(tokens[listStart + 1], 'TIES')) listStart += 2;
    } else {
      break;
    }
  }
  const clauses = topLevel(
    tokens,
    listStart,
    end,
    (t, k) =>
      t.kind === 'word' &&
      CLAUSES.has(t.upper) &&
      !(t.upper === 'FROM' && isWord(tokens[k - 1], 'DISTINCT')) && // IS [NOT] DISTINCT FROM
      !((t.upper === 'GROUP' || t.upper === 'ORDER') && !isWord(tokens[k + 1], 'BY')),
  );
  const next = (after: number) => clauses.find((c) => c > after) ?? end;
  const at = (word: string) => clauses.find((c) => isWord(tokens[c], word));
  const fromAt = at('FROM');
  const listEnd = fromAt ?? clauses[0] ?? end;
  const scope: Scope = { items: [] };
  let relations = 0;
  let sampled = false;
  let merged = false;
  if (fromAt !== undefined) {
    const r = readFrom(tokens, fromAt + 1, next(fromAt), ctes);
    scope.items = r.items;
    relations = r.relations;
    sampled = r.sampled;
    merged = r.merged;
  }
  const whereAt = at('WHERE');
  const groupAt = at('GROUP');
  const derivedInputs = scope.items.flatMap((it) => (it.relation.kind === 'derived' ? [it.relation.shape] : []));
  const inputFiltered = derivedInputs.some((d) => d.filtered);

  const items: SelectItem[] = split(tokens, listStart, listEnd).map(([s, e]) => selectItem(tokens, s, e, scope));

  // GROUP BY keys, read before the select list's aggregates, which are per these keys.
  let keys: ColumnRef[] | undefined;
  let keysKnown = true;
  if (groupAt !== undefined) {
    keys = [];
    for (const [s, e] of split(tokens, groupAt + 2, next(groupAt + 1))) {
      const key = groupKey(tokens, ...stripParens(tokens, s, e), items, scope);
      if (key === undefined) {
        keysKnown = false;
        break;
      }
      keys.push(key);
    }
    if (keys.length === 0) keysKnown = false;
  }
  const aggregated =
    at('HAVING') !== undefined || items.some((it) => it.kind === 'expr' && containsAggregate(tokens, it.s, it.e));

  let grain: Grain;
  let groupBy: ColumnRef[] | undefined;
  if (groupAt !== undefined) {
    grain = keysKnown ? 'grouped' : 'unknown';
    groupBy = keysKnown ? keys : undefined;
  } else if (aggregated) {
    grain = 'unknown'; // one row over everything read
  } else if (scope.items.length === 1) {
    const only = scope.items[0]!.relation;
    grain = only.kind === 'unknown' ? 'unknown' : only.kind === 'table' ? 'rows' : only.shape.grain;
    groupBy = only.kind === 'derived' ? only.shape.groupBy : undefined;
  } else {
    grain = scope.items.every(
      (it) => it.relation.kind === 'table' || (it.relation.kind === 'derived' && it.relation.shape.grain === 'rows'),
    )
      ? 'rows'
      : 'unknown';
  }

  const from = [...new Set(scope.items.flatMap((it) => tablesOf(it.relation)))];
  const aggregate: AggregateContext = {
    ok:
      (groupAt === undefined || keysKnown) &&
      scope.items.every(
        (it) => it.relation.kind === 'table' || (it.relation.kind === 'derived' && it.relation.shape.grain === 'rows'),
      ),
    groupBy: groupAt === undefined ? undefined : keys,
    from,
    filtered: whereAt !== undefined || inputFiltered,
  };

  const shape: Shape = {
    columns: new Map(),
    order: [],
    star: [],
    grain,
    groupBy,
    from,
    joined: relations > 1 || derivedInputs.some((d) => d.joined),
    filtered: ROW_LIMITS.some((w) => at(w) !== undefined) || top || distinctOn || sampled || inputFiltered,
  };
  const duplicate = new Set<string>();
  const put = (name: string, d: Derivation | undefined) => {
    if (shape.columns.has(name)) duplicate.add(name);
    else shape.order.push(name);
    shape.columns.set(name, d);
  };
  const renames = items.map((it) => {
    if (it.kind !== 'expr' || it.name === undefined) return undefined;
    return columnRefAt(tokens, it.s, it.e)?.column === it.name ? undefined : it.name;
  });
  for (const [n, item] of items.entries()) {
    if (item.kind === 'star') {
      expandStar(item.items, scope, merged, shape, put);
      continue;
    }
    if (item.name === undefined) continue;
    // An item may name itself after its own input (`coalesce(status, 'n/a') AS status`), not after another's.
    const hidden = new Set(renames.filter((r, k): r is string => r !== undefined && k !== n));
    put(item.name, derive(tokens, item.s, item.e, item.name, { ...scope, hidden }, aggregate));
  }
  for (const name of duplicate) shape.columns.set(name, undefined);

  if (distinctOn) {
    // The row kept per key depends on ORDER BY: no column is described.
    for (const name of shape.order) shape.columns.set(name, undefined);
    if (shape.star.length > 0) shape.star = [{ kind: 'unknown' }];
  } else if (distinct) {
    if (items.some((it) => it.kind === 'star')) {
      shape.filtered = true; // duplicate rows dropped: a subset of the rows read
    } else {
      const distinctKeys = items.map((it) => (it.kind === 'expr' ? itemKey(tokens, it, scope) : undefined));
      if (distinctKeys.every((k): k is ColumnRef => k !== undefined)) {
        shape.grain = 'grouped';
        shape.groupBy = distinctKeys;
      } else {
        shape.grain = 'unknown';
        shape.groupBy = undefined;
      }
    }
  }
  return shape;
}

function tablesOf(r: Relation): string[] {
  if (r.kind === 'table') return [r.name];
  if (r.kind === 'derived') return r.shape.from;
  return [];
}

/** LEFT(...) and RIGHT(...) are functions, not joins. */
function isJoinWord(tokens: Token[], i: number): boolean {
  const t = tokens[i];
  if (t?.kind !== 'word') return false;
  if ((t.upper === 'LEFT' || t.upper === 'RIGHT') && isPunct(tokens[i + 1], '(')) return false;
  return JOIN_WORDS.has(t.upper) || t.upper === 'APPLY' || t.upper === 'STRAIGHT_JOIN';
}

interface FromList {
  items: FromItem[];
  relations: number;
  /** TABLESAMPLE: a subset of the rows. */
  sampled: boolean;
  /** NATURAL or USING joins merge same-named columns. */
  merged: boolean;
}

function readFrom(tokens: Token[], start: number, end: number, ctes: Map<string, Relation>): FromList {
  const out: FromList = { items: [], relations: 0, sampled: false, merged: false };
  let i = start;
  let lateral = false;
  while (i < end) {
    const t = tokens[i]!;
    if (isJoinWord(tokens, i) || isWord(t, 'ONLY')) {
      if (isWord(t, 'LATERAL') || isWord(t, 'APPLY')) lateral = true;
      if (isWord(t, 'NATURAL')) out.merged = true;
      i++;
      continue;
    }
    let relation: Relation = { kind: 'unknown' };
    let name: string | undefined;
    if (isPunct(t, '(')) {
      const close = closing(tokens, i, end);
      if (startsQuery(tokens, i + 1, close)) {
        // A LATERAL subquery may read the items before it: its columns are not followed.
        const inner = lateral ? undefined : readQuery(tokens, i + 1, close, ctes);
        relation = inner ? { kind: 'derived', shape: inner } : { kind: 'unknown' };
        i = close + 1;
      } else {
        // A parenthesised join list, as pg_get_viewdef writes every join: its items join this list.
        const inner = readFrom(tokens, i + 1, close, ctes);
        out.items.push(...inner.items);
        out.relations += inner.relations;
        out.sampled ||= inner.sampled;
        out.merged ||= inner.merged;
        i = skipToNextItem(tokens, close + 1, end, out);
        lateral = false;
        continue;
      }
    } else if (t.kind === 'word' || t.kind === 'quoted') {
      const parts: string[] = [t.text.toLowerCase()];
      i++;
      while (isPunct(tokens[i], '.')) {
        if (isPunct(tokens[i + 1], '.')) {
          i++; // db..table
          continue;
        }
        const part = identText(tokens[i + 1]);
        if (part === undefined) break;
        parts.push(part);
        i += 2;
      }
      if (isPunct(tokens[i], '(')) {
        i = closing(tokens, i, end) + 1; // table function: unknown columns
      } else {
        name = parts.join('.');
        relation = lateral
          ? { kind: 'unknown' }
          : parts.length === 1 && ctes.has(name)
            ? ctes.get(name)!
            : { kind: 'table', name };
      }
    } else {
      i++;
      continue;
    }
    let alias: string | undefined;
    if (isWord(tokens[i], 'AS')) i++;
    const a = tokens[i];
    if ((a?.kind === 'word' && !NOT_ALIAS.has(a.upper)) || a?.kind === 'quoted') {
      alias = a.text.toLowerCase();
      i++;
      if (isPunct(tokens[i], '(')) {
        // alias(c1, c2): the relation's columns renamed by position, not followed.
        relation = { kind: 'unknown' };
        i = closing(tokens, i, end) + 1;
      }
    }
    out.items.push({ alias, name, relation });
    out.relations++;
    lateral = false;
    i = skipToNextItem(tokens, i, end, out);
  }
  return out;
}

/** Past ON / USING conditions and hints to the next FROM item. */
function skipToNextItem(tokens: Token[], from: number, end: number, out: FromList): number {
  let i = from;
  let depth = 0;
  while (i < end) {
    const u = tokens[i]!;
    if (isPunct(u, '(')) depth++;
    else if (isPunct(u, ')')) depth--;
    else if (depth === 0 && isPunct(u, ',')) return i + 1;
    else if (depth === 0 && isJoinWord(tokens, i) && !isWord(u, 'OUTER')) return i;
    else if (depth === 0 && isWord(u, 'USING')) out.merged = true;
    else if (depth === 0 && isWord(u, 'TABLESAMPLE')) out.sampled = true;
    i++;
  }
  return i;
}

/** `col`, `t.col`, `s.t.col` spanning exactly [s, e). */
function columnRefAt(
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

function matches(item: FromItem, qualifier: string): boolean {
  if (item.alias !== undefined) return item.alias === qualifier;
  if (item.name === undefined) return false;
  return item.name === qualifier || (item.relation.kind === 'table' && item.name.endsWith(`.${qualifier}`));
}

/** The derivation a reference to `column` (optionally qualified) has in this scope. */
function resolve(qualifier: string | undefined, column: string, scope: Scope): Derivation | undefined {
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

function selectItem(tokens: Token[], s: number, e: number, scope: Scope): SelectItem {
  if (e - s === 1 && isPunct(tokens[s], '*')) return { kind: 'star', items: scope.items };
  if (isPunct(tokens[e - 1], '*') && isPunct(tokens[e - 2], '.')) {
    const q = columnRefAt(tokens, s, e - 2);
    if (q === undefined) return { kind: 'star', items: undefined };
    const qualifier = q.qualifier === undefined ? q.column : `${q.qualifier}.${q.column}`;
    const found = scope.items.filter((it) => matches(it, qualifier));
    return { kind: 'star', items: found.length === 1 ? found : undefined };
  }
  let exprEnd = e;
  let alias: string | undefined;
  if (e - s >= 3 && isWord(tokens[e - 2], 'AS')) {
    alias = identText(tokens[e - 1]);
    exprEnd = e - 2;
  } else if (e - s >= 2) {
    const last = tokens[e - 1]!;
    const prev = tokens[e - 2]!;
    const aliasLike = last.kind === 'quoted' || (last.kind === 'word' && !NOT_ALIAS.has(last.upper));
    const afterExpr =
      !(prev.kind === 'punct' && OPERATOR_CHARS.includes(prev.text)) &&
      !isPunct(prev, '.') &&
      !(prev.kind === 'word' && TAKES_OPERAND.has(prev.upper));
    if (aliasLike && afterExpr) {
      alias = last.text.toLowerCase();
      exprEnd = e - 1;
    }
  }
  const [xs, xe] = stripParens(tokens, s, exprEnd);
  const ref = columnRefAt(tokens, xs, xe);
  return { kind: 'expr', name: alias ?? ref?.column, s: xs, e: xe };
}

/** The key a select item stands for in GROUP BY or DISTINCT: its source column, else its output name. */
function itemKey(tokens: Token[], item: Extract<SelectItem, { kind: 'expr' }>, scope: Scope): ColumnRef | undefined {
  if (item.name === undefined) return undefined;
  const ref = columnRefAt(tokens, item.s, item.e);
  const d = ref === undefined ? undefined : resolve(ref.qualifier, ref.column, scope);
  return d?.kind === 'column' ? d.source : { table: undefined, column: item.name };
}

function sameTokens(tokens: Token[], a: [number, number], b: [number, number]): boolean {
  if (a[1] - a[0] !== b[1] - b[0]) return false;
  for (let k = 0; k < a[1] - a[0]; k++) {
    const x = tokens[a[0] + k]!;
    const y = tokens[b[0] + k]!;
    const xt = x.kind === 'word' ? x.upper : x.text;
    const yt = y.kind === 'word' ? y.upper : y.text;
    if (x.kind !== y.kind || xt !== yt) return false;
  }
  return true;
}

/** One GROUP BY key: a column, a position in the select list, or an expression the select list names. */
function groupKey(tokens: Token[], s: number, e: number, items: SelectItem[], scope: Scope): ColumnRef | undefined {
  const t = tokens[s];
  if (e - s === 1 && t?.kind === 'literal' && /^\d+$/.test(t.text)) {
    const n = Number(t.text);
    const before = items.slice(0, n);
    // A star before the position makes it count columns the reader cannot list.
    if (n < 1 || before.length < n || before.some((it) => it.kind === 'star')) return undefined;
    const item = items[n - 1]!;
    return item.kind === 'expr' ? itemKey(tokens, item, scope) : undefined;
  }
  const ref = columnRefAt(tokens, s, e);
  if (ref !== undefined) {
    if (ref.qualifier === undefined && ref.column === 'all' && isWord(t, 'ALL')) return undefined; // GROUP BY ALL
    if (ref.qualifier === undefined) {
      // The output alias of an expression (`upper(region) AS region ... GROUP BY region`): dialects differ on
      // whether the key is the input column or the output one, but either way the rows are per that name.
      const other = items.find((it) => {
        if (it.kind !== 'expr' || it.name !== ref.column) return false;
        const r = columnRefAt(tokens, it.s, it.e);
        return r === undefined || r.column !== ref.column;
      });
      if (other !== undefined) return { table: undefined, column: ref.column };
    }
    const d = resolve(ref.qualifier, ref.column, scope);
    return d?.kind === 'column' ? d.source : { table: undefined, column: ref.column };
  }
  const same = items.find((it) => it.kind === 'expr' && sameTokens(tokens, [it.s, it.e], [s, e]));
  return same?.kind === 'expr' ? itemKey(tokens, same, scope) : undefined;
}

/** True when [s, e) calls an aggregate (not as a window function), outside any subquery. */
function containsAggregate(tokens: Token[], s: number, e: number): boolean {
  for (let i = s; i < e; i++) {
    const t = tokens[i]!;
    if (isPunct(t, '(') && startsQuery(tokens, i + 1, e)) {
      i = closing(tokens, i, e);
      continue;
    }
    if (t.kind !== 'word' || !isPunct(tokens[i + 1], '(')) continue;
    if (!AGGREGATES.has(t.upper) && !OTHER_AGGREGATES.has(t.upper)) continue;
    let k = closing(tokens, i + 1, e) + 1;
    if (isWord(tokens[k], 'WITHIN') && isWord(tokens[k + 1], 'GROUP') && isPunct(tokens[k + 2], '('))
      k = closing(tokens, k + 2, e) + 1;
    if (isWord(tokens[k], 'FILTER') && isPunct(tokens[k + 1], '(')) k = closing(tokens, k + 1, e) + 1;
    if (!isWord(tokens[k], 'OVER')) return true;
  }
  return false;
}

/** SELECT * or t.*: listed columns of derived relations become this select's, the rest stays a star. */
function expandStar(
  over: FromItem[] | undefined,
  scope: Scope,
  merged: boolean,
  shape: Shape,
  put: (name: string, d: Derivation | undefined) => void,
): void {
  if (over === undefined) {
    shape.star.push({ kind: 'unknown' });
    return;
  }
  // Over several relations a listed name is sure only when every relation lists all its columns and
  // no NATURAL/USING join merges two of them into one.
  const several = over.length > 1 || (over === scope.items && scope.items.length !== 1);
  const sure =
    !several || (!merged && over.every((it) => it.relation.kind === 'derived' && it.relation.shape.star.length === 0));
  for (const it of over) {
    const r = it.relation;
    if (r.kind !== 'derived') {
      shape.star.push(r);
      continue;
    }
    for (const name of r.shape.order) put(name, sure ? r.shape.columns.get(name) : undefined);
    shape.star.push(...r.shape.star);
  }
  if (several) shape.star.push({ kind: 'unknown' });
}

/** A source column as a plain reference: its derivation must be a pass-through to a read table's column. */
function sourceAt(tokens: Token[], s: number, e: number, scope: Scope): ColumnRef | undefined {
  const ref = columnRefAt(tokens, ...stripParens(tokens, s, e));
  if (ref === undefined) return undefined;
  const d = resolve(ref.qualifier, ref.column, scope);
  return d?.kind === 'column' ? d.source : undefined;
}

/** A constant: 'text', 12.5, -1, NULL, TRUE, FALSE, optionally parenthesised or cast ('a'::text). */
function literalAt(tokens: Token[], s0: number, e0: number): string | undefined {
  const [s, e] = stripParens(tokens, s0, e0);
  const colons = topLevel(tokens, s, e, (t, i) => isPunct(t, ':') && isPunct(tokens[i + 1], ':'));
  if (colons.length === 1 && typeAt(tokens, colons[0]! + 2, e) !== undefined) return literalAt(tokens, s, colons[0]!);
  if (colons.length > 0) return undefined;
  if (e - s === 2 && isPunct(tokens[s], '-') && tokens[s + 1]?.kind === 'literal' && isNumber(tokens[s + 1]!.text))
    return `-${tokens[s + 1]!.text}`;
  if (e - s !== 1) return undefined;
  const t = tokens[s]!;
  if (t.kind === 'literal') return t.text;
  if (t.kind === 'word' && ['NULL', 'TRUE', 'FALSE'].includes(t.upper)) return t.upper;
  return undefined;
}

function isNumber(text: string): boolean {
  return /^-?(?:\d+(?:\.\d*)?|\.\d+)$/.test(text);
}

/** A type name spanning exactly [s, e): `numeric(12, 2)`, `timestamp with time zone`, `text[]`. */
function typeAt(tokens: Token[], s: number, e: number): string | undefined {
  if (e <= s) return undefined;
  const first = tokens[s]!;
  if (!(first.kind === 'word' || first.kind === 'quoted')) return undefined;
  let out = '';
  let args = false;
  for (let i = s; i < e; i++) {
    const t = tokens[i]!;
    if (t.kind === 'word') {
      if (NOT_IN_TYPE.has(t.upper)) return undefined;
      out += out === '' || out.endsWith('.') ? t.upper : ` ${t.upper}`;
    } else if (t.kind === 'quoted' && i === s) {
      out += t.text;
    } else if (t.kind === 'quoted' && /^\d*$/.test(t.text)) {
      out += `[${t.text}]`; // array suffix, which the tokenizer reads as a bracket identifier
    } else if (isPunct(t, '.') && i > s && tokens[i - 1]!.kind !== 'punct') {
      out += '.';
    } else if (isPunct(t, '(') && !args) {
      const close = closing(tokens, i, e);
      if (close === e) return undefined;
      const inner = split(tokens, i + 1, close).map(([a, b]) =>
        b - a === 1 && (tokens[a]!.kind === 'literal' || tokens[a]!.kind === 'word') ? tokens[a]!.text : undefined,
      );
      if (inner.length === 0 || inner.some((x) => x === undefined)) return undefined;
      out += `(${inner.join(', ')})`;
      args = true;
      i = close;
    } else {
      return undefined;
    }
  }
  return out.length <= 60 ? out : undefined;
}

/** What the expression [s, e) (parentheses stripped) makes of its source; `name` is its output name. */
function derive(
  tokens: Token[],
  s: number,
  e: number,
  name: string,
  scope: Scope,
  aggregate: AggregateContext,
): Derivation | undefined {
  const ref = columnRefAt(tokens, s, e);
  if (ref !== undefined) {
    const d = resolve(ref.qualifier, ref.column, scope);
    return d?.kind === 'column' ? { ...d, renamed: name !== d.source.column } : d;
  }
  return readExpression(tokens, s, e, scope, aggregate);
}

function readExpression(
  tokens: Token[],
  s: number,
  e: number,
  scope: Scope,
  aggregate: AggregateContext,
): Derivation | undefined {
  const first = tokens[s];
  // CAST(x AS type), TRY_CAST, SAFE_CAST
  if (first?.kind === 'word' && CASTS.has(first.upper) && isPunct(tokens[s + 1], '(')) {
    const close = closing(tokens, s + 1, e);
    if (close !== e - 1) return undefined;
    const as = topLevel(tokens, s + 2, close, (t) => isWord(t, 'AS'));
    if (as.length !== 1) return undefined;
    const source = sourceAt(tokens, s + 2, as[0]!, scope);
    const type = typeAt(tokens, as[0]! + 1, close);
    return source && type ? { kind: 'cast', source, type } : undefined;
  }
  if (isWord(first, 'CASE') && isWord(tokens[e - 1], 'END')) return readCase(tokens, s + 1, e - 1, scope);
  if (first?.kind === 'word' && isPunct(tokens[s + 1], '(') && closing(tokens, s + 1, e) === e - 1) {
    const fn = first.upper;
    if (AGGREGATES.has(fn)) return readAggregate(tokens, fn, s + 2, e - 1, scope, aggregate);
    if (COALESCE.has(fn)) {
      const args = split(tokens, s + 2, e - 1);
      if (args.length !== 2) return undefined;
      const source = sourceAt(tokens, args[0]![0], args[0]![1], scope);
      const fallback = literalAt(tokens, args[1]![0], args[1]![1]);
      return source && fallback !== undefined ? { kind: 'coalesce', source, fallback } : undefined;
    }
    return undefined;
  }
  // :: binds tighter than arithmetic: `a / (100)::numeric` divides by a constant.
  if (binaryOperators(tokens, s, e).length > 0) return readArithmetic(tokens, s, e, scope);
  // x::type, where everything after :: is the type (not `x::text || y`)
  const colons = topLevel(tokens, s, e, (t, i) => isPunct(t, ':') && isPunct(tokens[i + 1], ':'));
  if (colons.length !== 1) return undefined;
  const source = sourceAt(tokens, s, colons[0]!, scope);
  const type = typeAt(tokens, colons[0]! + 2, e);
  return source && type ? { kind: 'cast', source, type } : undefined;
}

function readAggregate(
  tokens: Token[],
  fn: string,
  s: number,
  e: number,
  scope: Scope,
  aggregate: AggregateContext,
): Derivation | undefined {
  if (!aggregate.ok) return undefined;
  let a = s;
  let distinct = false;
  if (isWord(tokens[a], 'DISTINCT')) {
    distinct = true;
    a++;
  } else if (isWord(tokens[a], 'ALL')) {
    a++;
  }
  const base = {
    kind: 'aggregate' as const,
    fn: fn.toLowerCase() as AggregateFn,
    distinct,
    groupBy: aggregate.groupBy,
    from: aggregate.from,
    filtered: aggregate.filtered,
  };
  // count(*), and count(1) which counts the same rows
  const only = e - a === 1 ? tokens[a]! : undefined;
  if (fn === 'COUNT' && !distinct && (isPunct(only, '*') || (only?.kind === 'literal' && isNumber(only.text))))
    return { ...base, source: undefined };
  const source = sourceAt(tokens, a, e, scope);
  return source === undefined ? undefined : { ...base, source };
}

const OPERATORS = '+-*/';

/** Top-level + - * / that join two operands (not signs: at the start, after an operator or a parenthesis). */
function binaryOperators(tokens: Token[], s: number, e: number): number[] {
  return topLevel(tokens, s, e, (t, i) => {
    if (!(t.kind === 'punct' && OPERATORS.includes(t.text))) return false;
    const before = tokens[i - 1];
    return i > s && !(before?.kind === 'punct' && (OPERATOR_CHARS.includes(before.text) || before.text === '('));
  });
}

/** `x op constant` (or `constant + x`, `constant * x`) with exactly one binary operator. */
function readArithmetic(tokens: Token[], s: number, e: number, scope: Scope): Derivation | undefined {
  const binary = binaryOperators(tokens, s, e);
  if (binary.length !== 1) return undefined;
  const at = binary[0]!;
  const op = (tokens[at] as { text: string }).text as '+' | '-' | '*' | '/';
  const numeric = (x: string | undefined) => (x !== undefined && isNumber(x) ? x : undefined);
  const source = sourceAt(tokens, s, at, scope);
  const operand = numeric(literalAt(tokens, at + 1, e));
  if (source && operand !== undefined) return { kind: 'arithmetic', source, op, operand };
  if (op === '+' || op === '*') {
    const swapped = sourceAt(tokens, at + 1, e, scope);
    const constant = numeric(literalAt(tokens, s, at));
    if (swapped && constant !== undefined) return { kind: 'arithmetic', source: swapped, op, operand: constant };
  }
  return undefined;
}

/** Positions of WHEN / THEN / ELSE of this CASE, not of a CASE nested in it; undefined when it ends early. */
function caseParts(tokens: Token[], s: number, e: number): { at: number; word: string }[] | undefined {
  const out: { at: number; word: string }[] = [];
  let nested = 0;
  let depth = 0;
  for (let i = s; i < e; i++) {
    const t = tokens[i]!;
    if (isPunct(t, '(')) depth++;
    else if (isPunct(t, ')')) depth--;
    else if (depth !== 0 || t.kind !== 'word') continue;
    else if (t.upper === 'CASE') nested++;
    else if (t.upper === 'END' && --nested < 0)
      return undefined; // `CASE ... END + CASE ... END`
    else if (nested === 0 && ['WHEN', 'THEN', 'ELSE'].includes(t.upper)) out.push({ at: i, word: t.upper });
  }
  return out;
}

/** CASE x WHEN 'a' THEN 'b' ... [ELSE 'c'] END, or CASE WHEN x = 'a' THEN 'b' ... END over one column. */
function readCase(tokens: Token[], s: number, e: number, scope: Scope): Derivation | undefined {
  const parts = caseParts(tokens, s, e);
  if (parts === undefined) return undefined;
  const whens = parts.filter((p) => p.word === 'WHEN').map((p) => p.at);
  const elses = parts.filter((p) => p.word === 'ELSE').map((p) => p.at);
  if (whens.length === 0 || elses.length > 1) return undefined;
  const elseAt = elses[0];
  if (elseAt !== undefined && elseAt < whens[whens.length - 1]!) return undefined;
  const simple = whens[0]! > s;
  let source: ColumnRef | undefined;
  let key: string | undefined;
  if (simple) {
    source = sourceAt(tokens, s, whens[0]!, scope);
    if (source === undefined) return undefined;
  }
  const mapping: [string, string][] = [];
  for (let w = 0; w < whens.length; w++) {
    const from = whens[w]! + 1;
    const to = whens[w + 1] ?? elseAt ?? e;
    const thens = parts.filter((p) => p.word === 'THEN' && p.at > from && p.at < to);
    if (thens.length !== 1) return undefined;
    const then = thens[0]!.at;
    const result = literalAt(tokens, then + 1, to);
    if (result === undefined) return undefined;
    let when: string | undefined;
    if (simple) {
      when = literalAt(tokens, from, then);
    } else {
      const [cs, ce] = stripParens(tokens, from, then);
      const eq = topLevel(tokens, cs, ce, (t) => t.kind === 'punct' && '=<>!'.includes(t.text));
      if (eq.length !== 1 || !isPunct(tokens[eq[0]!], '=')) return undefined;
      const ref = columnRefAt(tokens, ...stripParens(tokens, cs, eq[0]!));
      if (ref === undefined) return undefined;
      const k = `${ref.qualifier ?? ''}.${ref.column}`;
      if (key === undefined) {
        key = k;
        source = sourceAt(tokens, cs, eq[0]!, scope);
        if (source === undefined) return undefined;
      } else if (key !== k) {
        return undefined;
      }
      when = literalAt(tokens, eq[0]! + 1, ce);
    }
    if (when === undefined) return undefined;
    mapping.push([when, result]);
  }
  const otherwise = elseAt === undefined ? undefined : literalAt(tokens, elseAt + 1, e);
  if (elseAt !== undefined && otherwise === undefined) return undefined;
  return source ? { kind: 'case', source, mapping, otherwise } : undefined;
}
