/**
 * SQL text as tokens, and the few ways the readers walk them: words, quoted identifiers, literals and
 * punctuation (comments dropped), parentheses matched, top-level positions and comma-separated parts.
 * Never throws: unbalanced input simply runs to the end.
 */
import { QUERY_START } from './keywords';

/** A SQL token; a literal keeps its source text (quotes included) for readers that need its value. */
export type Token =
  | { kind: 'word'; text: string; upper: string }
  | { kind: 'quoted'; text: string }
  | { kind: 'literal'; text: string }
  | { kind: 'punct'; text: string };

const WORD_START = /[\p{L}_]/u;
const WORD_PART = /[\p{L}\p{N}_$]/u;

/** Words, quoted identifiers, literals and punctuation; comments dropped. Never throws. */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      // PostgreSQL nests block comments; other dialects never contain "/*" inside one in practice.
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (sql[i] === '/' && sql[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (sql[i] === '*' && sql[i + 1] === '/') {
          depth--;
          i += 2;
        } else {
          i++;
        }
      }
    } else if (c === "'") {
      const end = skipString(sql, i, false);
      out.push({ kind: 'literal', text: sql.slice(i, end) });
      i = end;
    } else if (c === '$' && /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.test(sql.slice(i, i + 66))) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66))![0];
      const close = sql.indexOf(tag, i + tag.length);
      const end = close < 0 ? n : close + tag.length;
      out.push({ kind: 'literal', text: sql.slice(i, end) });
      i = end;
    } else if (c === '"' || c === '`') {
      const { text, end } = readQuoted(sql, i, c);
      out.push({ kind: 'quoted', text });
      i = end;
    } else if (c === '[' && /^\[[^[\]'"\n]*\]/.test(sql.slice(i))) {
      // T-SQL bracket identifier; arr[1] subscripts also land here, harmlessly, outside FROM lists.
      const close = sql.indexOf(']', i);
      out.push({ kind: 'quoted', text: sql.slice(i + 1, close) });
      i = close + 1;
    } else if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < n && WORD_PART.test(sql[j]!)) j++;
      const text = sql.slice(i, j);
      if (sql[j] === "'" && (text === 'E' || text === 'e')) {
        // PostgreSQL escape string: backslash escapes apply.
        const end = skipString(sql, j, true);
        out.push({ kind: 'literal', text: sql.slice(i, end) });
        i = end;
        continue;
      }
      out.push({ kind: 'word', text, upper: text.toUpperCase() });
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < n && /[0-9.eE_]/.test(sql[j]!)) j++;
      out.push({ kind: 'literal', text: sql.slice(i, j) });
      i = j;
    } else {
      out.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return out;
}

/** Index after the string literal starting at `start` (a single quote); '' is an escaped quote. */
function skipString(sql: string, start: number, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') {
      i += 2;
    } else if (c === "'") {
      if (sql[i + 1] === "'") i += 2;
      else return i + 1;
    } else {
      i++;
    }
  }
  return sql.length;
}

function readQuoted(sql: string, start: number, quote: string): { text: string; end: number } {
  let text = '';
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === quote) {
      if (sql[i + 1] === quote) {
        text += quote;
        i += 2;
        continue;
      }
      return { text, end: i + 1 };
    }
    text += c;
    i++;
  }
  return { text, end: sql.length };
}

export function isWord(t: Token | undefined, upper: string): boolean {
  return t?.kind === 'word' && t.upper === upper;
}

export function isPunct(t: Token | undefined, text: string): boolean {
  return t?.kind === 'punct' && t.text === text;
}

/** Index of the parenthesis closing the one at `open` (or `end` when unbalanced). */
export function closing(tokens: Token[], open: number, end: number): number {
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
export function topLevel(
  tokens: Token[],
  start: number,
  end: number,
  pred: (t: Token, i: number) => boolean,
): number[] {
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

export function split(tokens: Token[], start: number, end: number): [number, number][] {
  const commas = topLevel(tokens, start, end, (t) => isPunct(t, ','));
  const parts: [number, number][] = [];
  let s = start;
  for (const c of [...commas, end]) {
    if (c > s) parts.push([s, c]);
    s = c + 1;
  }
  return parts;
}

export function identText(t: Token | undefined): string | undefined {
  if (t?.kind === 'word' || t?.kind === 'quoted') return t.text.toLowerCase();
  return undefined;
}

/** True when [s, e) starts a query, possibly inside more parentheses. */
export function startsQuery(tokens: Token[], s: number, e: number): boolean {
  let i = s;
  while (i < e && isPunct(tokens[i], '(')) i++;
  const t = tokens[i];
  return t?.kind === 'word' && QUERY_START.has(t.upper);
}

/** [s, e) without parentheses around all of it; a parenthesised query keeps its own. */
export function stripParens(tokens: Token[], s: number, e: number): [number, number] {
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

/** Entries kept by each of the SQL readers' caches (readSelectShape's and tablesReadBySql's), by SQL text. */
export const SQL_CACHE_ENTRIES = 8192;
