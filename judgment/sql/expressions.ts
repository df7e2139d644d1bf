/**
 * What one select-list expression makes of its source column: a pass-through or rename, a cast, an
 * aggregate, a CASE mapping of constants, arithmetic with a constant, or COALESCE with a constant
 * fallback. Anything else is not understood (undefined), never guessed.
 */
import type { AggregateFn, ColumnRef, Derivation } from './derivation';
import { AGGREGATES, NOT_IN_TYPE, OPERATOR_CHARS } from './keywords';
import { columnRefAt, resolve, sourceAt, type Scope } from './scope';
import { closing, isPunct, isWord, split, stripParens, topLevel, type Token } from './tokens';

const COALESCE = new Set(['COALESCE', 'IFNULL', 'NVL', 'ISNULL']);
const CASTS = new Set(['CAST', 'TRY_CAST', 'SAFE_CAST']);

/** What an aggregate in the select list may say about the select that computes it. */
export interface AggregateContext {
  /** False when its rows or groups are not understood: then no aggregate is described. */
  ok: boolean;
  groupBy: ColumnRef[] | undefined;
  from: string[];
  filtered: boolean;
}

/** What the expression [s, e) (parentheses stripped) makes of its source; `name` is its output name. */
export function derive(
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
