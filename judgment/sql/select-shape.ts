/**
 * What a view's or model's SELECT makes of each output column: passed through or renamed from a column
 * of a table it reads, cast, aggregated, mapped by CASE, scaled by a constant, or defaulted by COALESCE.
 * Column references are followed through CTEs and derived tables down to the tables the statement
 * reads. Like the table reader it is not a SQL parser: it never throws, and anything it does not
 * recognise comes back as "unknown" (no derivation), never as a guess.
 */
import type { ColumnRef, Derivation } from './derivation';
import { derive, type AggregateContext } from './expressions';
import { AGGREGATES, CLAUSES, JOIN_WORDS, NOT_ALIAS, OPERATOR_CHARS, SET_OPS, TAKES_OPERAND } from './keywords';
import {
  columnRefAt,
  matches,
  resolve,
  type FromItem,
  type Grain,
  type Relation,
  type Scope,
  type Shape,
} from './scope';
import {
  closing,
  identText,
  isPunct,
  isWord,
  split,
  startsQuery,
  stripParens,
  tokenize,
  topLevel,
  SQL_CACHE_ENTRIES,
  type Token,
} from './tokens';

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
/** Clauses after which a select returns only some of the rows it would otherwise return. */
const ROW_LIMITS = ['WHERE', 'HAVING', 'QUALIFY', 'LIMIT', 'OFFSET', 'FETCH'];

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
  if (shapeCache.size >= SQL_CACHE_ENTRIES) shapeCache.delete(shapeCache.keys().next().value!);
  shapeCache.set(sql, shape ?? null);
  return shape;
}

/**
 * Recent shapes, by SQL text. A view's SQL is read by the scan that fingerprints the catalog, by the drafter (its
 * own and its readers' derivations), by the gate and after the write; with ten pages of 1,000 entities in flight
 * (the sweep's concurrency), those reads span the views of ten pages, several thousand at most.
 */
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
