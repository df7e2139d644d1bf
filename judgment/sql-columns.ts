/**
 * What a view's or model's SELECT makes of each output column: passed through or renamed from a column
 * of a table it reads, cast, aggregated, mapped by CASE, scaled by a constant, or defaulted by COALESCE.
 * Column references are followed through CTEs and derived tables down to the tables the statement
 * reads. Like the table reader it is not a SQL parser: it never throws, and anything it does not
 * recognise comes back as "unknown" (no derivation), never as a guess.
 */
import { tokenize, type Token } from './sql-tables';

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
      filtered: boolean;
    }
  | { kind: 'case'; source: ColumnRef; mapping: [string, string][]; otherwise: string | undefined }
  | { kind: 'arithmetic'; source: ColumnRef; op: '+' | '-' | '*' | '/'; operand: string }
  | { kind: 'coalesce'; source: ColumnRef; fallback: string };

export type AggregateFn = 'sum' | 'count' | 'avg' | 'min' | 'max';

export interface SelectShape {
  /** Output columns named in the select list, in order; `derivation` undefined when not understood. */
  columns: { name: string; derivation: Derivation | undefined }[];
  /** Tables (as written) whose every column the select passes through: SELECT *, t.*. */
  starFrom: string[];
  /** GROUP BY keys of the outermost select, resolved to read tables' columns where possible. */
  groupBy: ColumnRef[] | undefined;
  /** Tables the outermost FROM reads, through CTEs and derived tables. */
  from: string[];
  /** True when the outermost FROM joins more than one relation. */
  joined: boolean;
  /** True when the outermost select has a WHERE clause (rows are a subset of what it reads). */
  filtered: boolean;
}

const AGGREGATES = new Set<string>(['SUM', 'COUNT', 'AVG', 'MIN', 'MAX']);
const COALESCE = new Set(['COALESCE', 'IFNULL', 'NVL', 'ISNULL']);
const CLAUSES = new Set(['FROM', 'WHERE', 'GROUP', 'HAVING', 'ORDER', 'LIMIT', 'OFFSET', 'FETCH', 'QUALIFY', 'WINDOW']);
const SET_OPS = new Set(['UNION', 'INTERSECT', 'EXCEPT', 'MINUS']);
const JOIN_WORDS = new Set(['JOIN', 'LEFT', 'RIGHT', 'FULL', 'INNER', 'OUTER', 'CROSS', 'NATURAL', 'LATERAL']);
const NOT_ALIAS = new Set([...CLAUSES, ...JOIN_WORDS, ...SET_OPS, 'ON', 'USING', 'AS', 'END', 'AND', 'OR', 'NOT']);

/** How a FROM item resolves: a table the statement reads, a CTE or subquery with a known shape, or neither. */
type Relation = { kind: 'table'; name: string } | { kind: 'derived'; shape: Shape } | { kind: 'unknown' };

interface Shape {
  columns: Map<string, Derivation | undefined>;
  order: string[];
  /** Relations whose columns pass through for any name not listed. */
  star: Relation[];
  groupBy: ColumnRef[] | undefined;
  from: string[];
  joined: boolean;
  filtered: boolean;
}

interface Scope {
  items: { alias: string | undefined; relation: Relation }[];
}

/** Read the output columns of a view's SQL. Undefined when the statement is not a single SELECT it can read. */
export function readSelectShape(sql: string): SelectShape | undefined {
  const hit = shapeCache.get(sql);
  if (hit !== undefined) return hit ?? undefined;
  let shape: SelectShape | undefined;
  try {
    const tokens = tokenize(sql).filter((t) => !(t.kind === 'punct' && t.text === ';'));
    const inner = readQuery(tokens, 0, tokens.length, new Map());
    shape = inner ? publicShape(inner) : undefined;
  } catch {
    shape = undefined;
  }
  if (shapeCache.size >= 2048) shapeCache.delete(shapeCache.keys().next().value!);
  shapeCache.set(sql, shape ?? null);
  return shape;
}

const shapeCache = new Map<string, SelectShape | null>();

/** Marks an aggregate whose select has not finished reading (its GROUP BY comes after its select list). */
const PENDING: string[] = [];

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
    groupBy: s.groupBy,
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

function readSelect(tokens: Token[], start: number, end: number, ctes: Map<string, Relation>): Shape | undefined {
  const clauses = topLevel(tokens, start + 1, end, (t) => t.kind === 'word' && CLAUSES.has(t.upper));
  const next = (after: number) => clauses.find((c) => c > after) ?? end;
  let listStart = start + 1;
  while (isWord(tokens[listStart], 'DISTINCT') || isWord(tokens[listStart], 'ALL')) listStart++;
  if (isWord(tokens[listStart], 'TOP')) listStart += 2;
  const fromAt = clauses.find((c) => isWord(tokens[c], 'FROM'));
  const listEnd = fromAt ?? next(listStart);
  const scope: Scope = { items: [] };
  let joined = false;
  if (fromAt !== undefined) {
    const r = readFrom(tokens, fromAt + 1, next(fromAt), ctes);
    scope.items = r.items;
    joined = r.joined;
  }
  const whereAt = clauses.find((c) => isWord(tokens[c], 'WHERE'));
  const groupAt = clauses.find((c) => isWord(tokens[c], 'GROUP') && isWord(tokens[c + 1], 'BY'));

  const shape: Shape = {
    columns: new Map(),
    order: [],
    star: [],
    groupBy: undefined,
    from: [...new Set(scope.items.flatMap((it) => tablesOf(it.relation)))],
    joined,
    filtered: whereAt !== undefined,
  };
  for (const [s, e] of split(tokens, listStart, listEnd)) readItem(tokens, s, e, scope, shape);
  const aggregates = [...shape.columns.values()].filter(
    (d): d is Extract<Derivation, { kind: 'aggregate' }> => d?.kind === 'aggregate' && d.from === PENDING,
  );
  if (groupAt !== undefined) {
    const keys: ColumnRef[] = [];
    for (const [s, e] of split(tokens, groupAt + 2, next(groupAt + 1))) {
      const ref = columnRefAt(tokens, s, e);
      if (ref !== undefined) {
        const d = resolve(ref.qualifier, ref.column, scope);
        keys.push(d?.kind === 'column' ? d.source : { table: undefined, column: ref.column });
        continue;
      }
      // GROUP BY 1, 2: positions in the select list.
      const t = tokens[s];
      if (e - s === 1 && t?.kind === 'literal' && /^\d+$/.test(t.text)) {
        const name = shape.order[Number(t.text) - 1];
        const d = name === undefined ? undefined : shape.columns.get(name);
        keys.push(d?.kind === 'column' ? d.source : { table: undefined, column: name ?? t.text });
        continue;
      }
      keys.length = 0;
      break;
    }
    shape.groupBy = keys.length > 0 ? keys : undefined;
  }
  for (const a of aggregates) {
    a.groupBy = shape.groupBy;
    a.from = shape.from;
    a.filtered = shape.filtered;
  }
  return shape;
}

function tablesOf(r: Relation): string[] {
  if (r.kind === 'table') return [r.name];
  if (r.kind === 'derived') return r.shape.from;
  return [];
}

function readFrom(
  tokens: Token[],
  start: number,
  end: number,
  ctes: Map<string, Relation>,
): { items: Scope['items']; joined: boolean } {
  const items: Scope['items'] = [];
  let i = start;
  let relations = 0;
  while (i < end) {
    const t = tokens[i]!;
    if (t.kind === 'word' && (JOIN_WORDS.has(t.upper) || t.upper === 'ONLY')) {
      i++;
      continue;
    }
    let relation: Relation = { kind: 'unknown' };
    if (isPunct(t, '(')) {
      const close = closing(tokens, i, end);
      const inner = readQuery(tokens, i + 1, close, ctes);
      relation = inner ? { kind: 'derived', shape: inner } : { kind: 'unknown' };
      i = close + 1;
    } else if (t.kind === 'word' || t.kind === 'quoted') {
      const parts: string[] = [t.text.toLowerCase()];
      i++;
      while (isPunct(tokens[i], '.') && identText(tokens[i + 1]) !== undefined) {
        parts.push(identText(tokens[i + 1])!);
        i += 2;
      }
      if (isPunct(tokens[i], '(')) {
        i = closing(tokens, i, end) + 1; // table function: unknown columns
      } else {
        const name = parts.join('.');
        relation = parts.length === 1 && ctes.has(name) ? ctes.get(name)! : { kind: 'table', name };
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
    }
    items.push({ alias, relation });
    relations++;
    // Skip ON / USING conditions up to the next item.
    let depth = 0;
    while (i < end) {
      const u = tokens[i]!;
      if (isPunct(u, '(')) depth++;
      else if (isPunct(u, ')')) depth--;
      else if (depth === 0 && (isPunct(u, ',') || isWord(u, 'JOIN'))) break;
      else if (depth === 0 && u.kind === 'word' && JOIN_WORDS.has(u.upper) && u.upper !== 'OUTER') break;
      i++;
    }
    if (isPunct(tokens[i], ',')) i++;
  }
  return { items, joined: relations > 1 };
}

/** `col`, `t.col`, `s.t.col` spanning exactly [s, e). */
function columnRefAt(
  tokens: Token[],
  s: number,
  e: number,
): { qualifier: string | undefined; column: string } | undefined {
  const parts: string[] = [];
  let i = s;
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
  if (
    parts.length === 1 &&
    word.kind === 'word' &&
    ['NULL', 'TRUE', 'FALSE', 'CURRENT_DATE', 'CURRENT_TIMESTAMP'].includes(word.upper)
  )
    return undefined;
  return { qualifier: parts.length > 1 ? parts.slice(0, -1).join('.') : undefined, column: parts[parts.length - 1]! };
}

/** The derivation a reference to `column` (optionally qualified) has in this scope. */
function resolve(qualifier: string | undefined, column: string, scope: Scope): Derivation | undefined {
  let candidates = scope.items;
  if (qualifier !== undefined) {
    candidates = scope.items.filter(
      (it) =>
        it.alias === qualifier ||
        (it.alias === undefined &&
          it.relation.kind === 'table' &&
          (it.relation.name === qualifier || it.relation.name.endsWith(`.${qualifier}`))),
    );
    if (candidates.length !== 1) return undefined;
    return lookup(candidates[0]!.relation, column);
  }
  if (candidates.length === 1) return lookup(candidates[0]!.relation, column);
  // Unqualified over several relations: only a derived relation that lists the column can be sure.
  const listing = candidates.filter((it) => it.relation.kind === 'derived' && it.relation.shape.columns.has(column));
  if (listing.length === 1 && candidates.every((it) => it.relation.kind !== 'unknown')) {
    const others = candidates.filter((it) => it !== listing[0] && it.relation.kind === 'table');
    if (others.length === 0) return lookup(listing[0]!.relation, column);
  }
  return undefined;
}

function lookup(relation: Relation, column: string): Derivation | undefined {
  if (relation.kind === 'table') return { kind: 'column', source: { table: relation.name, column }, renamed: false };
  if (relation.kind === 'unknown') return undefined;
  const shape = relation.shape;
  if (shape.columns.has(column)) return shape.columns.get(column);
  if (shape.star.length === 1) return lookup(shape.star[0]!, column);
  return undefined;
}

function readItem(tokens: Token[], s: number, e: number, scope: Scope, shape: Shape): void {
  // * and t.*
  if (e - s === 1 && isPunct(tokens[s], '*')) {
    for (const it of scope.items) expandStar(it.relation, shape);
    if (scope.items.length !== 1) shape.star.push({ kind: 'unknown' });
    return;
  }
  if (isPunct(tokens[e - 1], '*') && isPunct(tokens[e - 2], '.')) {
    const q = tokens
      .slice(s, e - 2)
      .map((t) => identText(t) ?? '.')
      .join('')
      .replace(/\.+/g, '.');
    const item = scope.items.find((it) => it.alias === q || (it.relation.kind === 'table' && it.relation.name === q));
    expandStar(item ? item.relation : { kind: 'unknown' }, shape);
    return;
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
    const afterExpr = !isPunct(prev, '.') && !(prev.kind === 'punct' && '+-*/|:=<>,'.includes(prev.text));
    if (aliasLike && afterExpr && !isWord(prev, 'AS')) {
      alias = last.text.toLowerCase();
      exprEnd = e - 1;
    }
  }
  const ref = columnRefAt(tokens, s, exprEnd);
  const name = alias ?? ref?.column;
  if (name === undefined) return;
  let derivation: Derivation | undefined;
  if (ref !== undefined) {
    const d = resolve(ref.qualifier, ref.column, scope);
    derivation = d?.kind === 'column' && alias !== undefined && alias !== d.source.column ? { ...d, renamed: true } : d;
  } else {
    derivation = readExpression(tokens, s, exprEnd, scope);
  }
  if (!shape.columns.has(name)) shape.order.push(name);
  shape.columns.set(name, derivation);
}

/** SELECT * over a relation: a derived relation's listed columns become this select's, the rest stays a star. */
function expandStar(relation: Relation, shape: Shape): void {
  if (relation.kind !== 'derived') {
    shape.star.push(relation);
    return;
  }
  for (const name of relation.shape.order) {
    if (!shape.columns.has(name)) shape.order.push(name);
    shape.columns.set(name, relation.shape.columns.get(name));
  }
  shape.star.push(...relation.shape.star);
}

/** A source column as a plain reference: its derivation must be a pass-through to a read table's column. */
function sourceAt(tokens: Token[], s: number, e: number, scope: Scope): ColumnRef | undefined {
  const ref = columnRefAt(tokens, s, e);
  if (ref === undefined) return undefined;
  const d = resolve(ref.qualifier, ref.column, scope);
  return d?.kind === 'column' ? d.source : undefined;
}

function literalAt(tokens: Token[], s: number, e: number): string | undefined {
  if (e - s === 2 && isPunct(tokens[s], '-') && tokens[s + 1]?.kind === 'literal')
    return `-${(tokens[s + 1] as { text: string }).text}`;
  if (e - s !== 1) return undefined;
  const t = tokens[s]!;
  if (t.kind === 'literal') return t.text;
  if (t.kind === 'word' && ['NULL', 'TRUE', 'FALSE'].includes(t.upper)) return t.upper;
  return undefined;
}

function readExpression(tokens: Token[], s: number, e: number, scope: Scope): Derivation | undefined {
  const first = tokens[s];
  // CAST(x AS type), TRY_CAST, SAFE_CAST
  if (first?.kind === 'word' && /^(?:CAST|TRY_CAST|SAFE_CAST)$/.test(first.upper) && isPunct(tokens[s + 1], '(')) {
    const close = closing(tokens, s + 1, e);
    if (close !== e - 1) return undefined;
    const as = topLevel(tokens, s + 2, close, (t) => isWord(t, 'AS'))[0];
    if (as === undefined) return undefined;
    const source = sourceAt(tokens, s + 2, as, scope);
    return source ? { kind: 'cast', source, type: typeText(tokens, as + 1, close) } : undefined;
  }
  // x::type
  const colons = topLevel(tokens, s, e, (t, i) => isPunct(t, ':') && isPunct(tokens[i + 1], ':'));
  if (colons.length === 1) {
    const source = sourceAt(tokens, s, colons[0]!, scope);
    return source ? { kind: 'cast', source, type: typeText(tokens, colons[0]! + 2, e) } : undefined;
  }
  if (first?.kind === 'word' && isPunct(tokens[s + 1], '(') && closing(tokens, s + 1, e) === e - 1) {
    const fn = first.upper;
    const inner: [number, number] = [s + 2, e - 1];
    if (AGGREGATES.has(fn)) {
      let a = inner[0];
      const b = inner[1];
      let distinct = false;
      if (isWord(tokens[a], 'DISTINCT')) {
        distinct = true;
        a++;
      }
      const aggregate = fn.toLowerCase() as AggregateFn;
      const pending = { groupBy: undefined, from: PENDING, filtered: false };
      if (b - a === 1 && isPunct(tokens[a], '*'))
        return { kind: 'aggregate', fn: aggregate, source: undefined, distinct, ...pending };
      const source = sourceAt(tokens, a, b, scope);
      if (source === undefined) return undefined;
      return { kind: 'aggregate', fn: aggregate, source, distinct, ...pending };
    }
    if (COALESCE.has(fn)) {
      const args = split(tokens, inner[0], inner[1]);
      if (args.length !== 2) return undefined;
      const source = sourceAt(tokens, args[0]![0], args[0]![1], scope);
      const fallback = literalAt(tokens, args[1]![0], args[1]![1]);
      return source && fallback !== undefined ? { kind: 'coalesce', source, fallback } : undefined;
    }
    return undefined;
  }
  if (isWord(first, 'CASE') && isWord(tokens[e - 1], 'END')) return readCase(tokens, s + 1, e - 1, scope);
  // x op constant
  const ops = topLevel(tokens, s, e, (t) => t.kind === 'punct' && '+-*/'.includes(t.text));
  if (ops.length === 1) {
    const at = ops[0]!;
    const source = sourceAt(tokens, s, at, scope);
    const operand = literalAt(tokens, at + 1, e);
    if (source && operand !== undefined && !operand.startsWith("'"))
      return {
        kind: 'arithmetic',
        source,
        op: (tokens[at] as { text: string }).text as '+' | '-' | '*' | '/',
        operand,
      };
  }
  return undefined;
}

function typeText(tokens: Token[], s: number, e: number): string {
  let out = '';
  for (let i = s; i < e; i++) {
    const t = tokens[i]!;
    const text = t.kind === 'word' ? t.text.toUpperCase() : t.text;
    out += t.kind === 'punct' || out === '' || out.endsWith('(') ? text : ` ${text}`;
  }
  return out.replace(/ \(/g, '(').slice(0, 60);
}

/** CASE x WHEN 'a' THEN 'b' ... [ELSE 'c'] END, or CASE WHEN x = 'a' THEN 'b' ... END over one column. */
function readCase(tokens: Token[], s: number, e: number, scope: Scope): Derivation | undefined {
  const whens = topLevel(tokens, s, e, (t) => isWord(t, 'WHEN'));
  if (whens.length === 0) return undefined;
  const elseAt = topLevel(tokens, s, e, (t) => isWord(t, 'ELSE'))[0];
  let source: ColumnRef | undefined;
  let key = '';
  if (whens[0]! > s) {
    source = sourceAt(tokens, s, whens[0]!, scope);
    if (source === undefined) return undefined;
  }
  const mapping: [string, string][] = [];
  for (let w = 0; w < whens.length; w++) {
    const from = whens[w]! + 1;
    const to = whens[w + 1] ?? elseAt ?? e;
    const then = topLevel(tokens, from, to, (t) => isWord(t, 'THEN'))[0];
    if (then === undefined) return undefined;
    const result = literalAt(tokens, then + 1, to);
    if (result === undefined) return undefined;
    let when: string | undefined;
    if (whens[0]! > s) {
      when = literalAt(tokens, from, then);
    } else {
      const eq = topLevel(tokens, from, then, (t) => isPunct(t, '='));
      if (eq.length !== 1) return undefined;
      const ref = columnRefAt(tokens, from, eq[0]!);
      if (ref === undefined) return undefined;
      const k = `${ref.qualifier ?? ''}.${ref.column}`;
      if (key === '') {
        key = k;
        source = sourceAt(tokens, from, eq[0]!, scope);
        if (source === undefined) return undefined;
      } else if (key !== k) {
        return undefined;
      }
      when = literalAt(tokens, eq[0]! + 1, then);
    }
    if (when === undefined) return undefined;
    mapping.push([when, result]);
  }
  const otherwise = elseAt === undefined ? undefined : literalAt(tokens, elseAt + 1, e);
  if (elseAt !== undefined && otherwise === undefined) return undefined;
  return source ? { kind: 'case', source, mapping, otherwise } : undefined;
}
