/**
 * A small reader for the one question the lineage checker asks of a view definition: which tables
 * does this SELECT read? It tokenises (dropping comments and string literals), then walks FROM and
 * JOIN lists with a stack of parenthesis frames. It is not a SQL parser: it never rejects input and
 * never throws, and on SQL it does not understand it returns what it could recognise.
 */
import { CLAUSES, QUERY_START, SET_OPS } from './keywords';
import { closing, isPunct, isWord, tokenize, SQL_CACHE_ENTRIES, type Token } from './tokens';

/** Keywords that end a FROM list at the current nesting level: the clauses after it, set operators, and more. */
const CLAUSE_END = new Set([
  ...[...CLAUSES].filter((c) => c !== 'FROM'),
  ...SET_OPS,
  ...['RETURNING', 'INTO', 'FOR', 'CONNECT', 'START', 'OPTION'],
]);

/** Words that cannot start a table reference where one is expected. */
const NOT_A_TABLE = new Set([...CLAUSE_END, 'SELECT', 'FROM', 'JOIN', 'ON', 'USING', 'AS', 'WITH', 'VALUES']);

/**
 * Table references a SELECT reads (FROM and JOIN items, comma joins, subqueries at any depth),
 * normalised to unquoted lowercase dotted names and deduplicated in order of first appearance.
 * Names of WITH-clause CTEs and table-valued function calls (generate_series(...)) are left out.
 */
export function tablesReadBySql(sql: string): string[] {
  // The scan, the lineage checker and the gate all read each view's SQL, the pages in flight apart at most: keep
  // recent answers (as many as readSelectShape keeps).
  const hit = readsCache.get(sql);
  if (hit) return [...hit];
  const found = parseTablesRead(sql);
  if (readsCache.size >= SQL_CACHE_ENTRIES) readsCache.delete(readsCache.keys().next().value!);
  readsCache.set(sql, found);
  return [...found];
}

const readsCache = new Map<string, string[]>();

function parseTablesRead(sql: string): string[] {
  const tokens = tokenize(sql);
  // CTE names are excluded statement-wide rather than by scope: a CTE that shadows a real table of
  // the same bare name in a sibling subquery is rare, and a qualified reference is never excluded.
  const cteNames = collectCteNames(tokens);
  const found: string[] = [];
  const seen = new Set<string>();

  type State = 'none' | 'expect' | 'after';
  interface Frame {
    state: State;
    query: boolean;
  }
  let stack: Frame[] = [{ state: 'none', query: false }];

  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    const frame = stack[stack.length - 1]!;

    if (tok.kind === 'punct') {
      if (tok.text === '(') {
        if (frame.state === 'expect') {
          // "( SELECT ..." is a derived table; anything else is a parenthesised join list.
          frame.state = 'after';
          const next = tokens[i + 1];
          const derived = next?.kind === 'word' && QUERY_START.has(next.upper);
          stack.push({ state: derived ? 'none' : 'expect', query: false });
        } else {
          stack.push({ state: 'none', query: false });
        }
      } else if (tok.text === ')') {
        if (stack.length > 1) stack.pop();
      } else if (tok.text === ';') {
        stack = [{ state: 'none', query: false }];
      } else if (tok.text === ',' && frame.state === 'after') {
        frame.state = 'expect';
      }
      continue;
    }

    if (frame.state === 'expect') {
      if (tok.kind === 'word' && (tok.upper === 'LATERAL' || tok.upper === 'ONLY')) continue;
      if (tok.kind === 'word' && tok.upper === 'ROWS' && isWord(tokens[i + 1], 'FROM')) {
        i++; // ROWS FROM (f(), g()): function calls only.
        frame.state = 'after';
        continue;
      }
      if (tok.kind === 'quoted' || (tok.kind === 'word' && !NOT_A_TABLE.has(tok.upper))) {
        const { parts, end } = readQualifiedName(tokens, i);
        frame.state = 'after';
        i = end - 1;
        const next = tokens[end];
        if (next?.kind === 'punct' && next.text === '(') continue; // table-valued function call
        const name = parts.join('.');
        const isCte = parts.length === 1 && cteNames.has(name);
        if (name !== '' && !isCte && !seen.has(name)) {
          seen.add(name);
          found.push(name);
        }
        continue;
      }
      if (tok.kind !== 'word') {
        frame.state = 'after';
        continue;
      }
    }

    if (tok.kind !== 'word') continue;
    const kw = tok.upper;
    if (kw === 'SELECT') {
      frame.query = true;
      frame.state = 'none';
    } else if (kw === 'FROM') {
      // FROM also appears inside expressions: IS [NOT] DISTINCT FROM, EXTRACT(x FROM y),
      // SUBSTRING(x FROM n), TRIM(... FROM x). Those sit in frames that never saw a SELECT.
      if (frame.query && !isWord(tokens[i - 1], 'DISTINCT')) frame.state = 'expect';
    } else if (kw === 'JOIN' || kw === 'APPLY' || kw === 'STRAIGHT_JOIN') {
      if (frame.state !== 'none') frame.state = 'expect';
    } else if (CLAUSE_END.has(kw)) {
      frame.state = 'none';
    }
  }
  return found;
}

/** name ( . name )*, tolerating "db..table"; returns lowercase parts and the index after the name. */
function readQualifiedName(tokens: Token[], start: number): { parts: string[]; end: number } {
  const parts: string[] = [];
  const first = tokens[start]!;
  if (first.kind === 'word' || first.kind === 'quoted') parts.push(first.text.toLowerCase());
  let j = start + 1;
  while (j < tokens.length) {
    const dot = tokens[j];
    if (!(dot?.kind === 'punct' && dot.text === '.')) break;
    const next = tokens[j + 1];
    if (next?.kind === 'word' || next?.kind === 'quoted') {
      parts.push(next.text.toLowerCase());
      j += 2;
    } else if (next?.kind === 'punct' && next.text === '.') {
      j += 1;
    } else {
      break;
    }
  }
  return { parts: parts.filter((p) => p !== ''), end: j };
}

/** Names defined by WITH [RECURSIVE] name [(cols)] AS [NOT] [MATERIALIZED] ( ... ) [, ...]. */
function collectCteNames(tokens: Token[]): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    if (!isWord(tokens[i], 'WITH')) continue;
    let j = i + 1;
    if (isWord(tokens[j], 'RECURSIVE')) j++;
    for (;;) {
      const nameTok = tokens[j];
      if (!(nameTok?.kind === 'word' || nameTok?.kind === 'quoted')) break;
      let k = j + 1;
      if (isPunct(tokens[k], '(')) k = closing(tokens, k, tokens.length) + 1;
      if (!isWord(tokens[k], 'AS')) break;
      k++;
      if (isWord(tokens[k], 'NOT')) k++;
      if (isWord(tokens[k], 'MATERIALIZED')) k++;
      if (!isPunct(tokens[k], '(')) break;
      names.add(nameTok.text.toLowerCase());
      k = closing(tokens, k, tokens.length) + 1;
      if (!isPunct(tokens[k], ',')) break;
      j = k + 1;
    }
  }
  return names;
}
