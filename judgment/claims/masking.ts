/**
 * Finding restated names in prose by walking word tokens: a name matches as whole identifier runs joined by
 * nothing, spaces, underscores, dots or hyphens ("cust_first_name", "cust first name", "CustFirstName"), and
 * is replaced by a placeholder before the phrase detectors run, or blanked before references are read.
 */
import type { Evidence } from './evidence';

interface TextToken {
  word: string;
  start: number;
  end: number;
  /** First / last word of an identifier-like run of letters, digits and underscores. */
  runStart: boolean;
  runEnd: boolean;
}

// Names are matched by walking word tokens rather than by building a pattern per name: compiling a
// Unicode-aware pattern costs about a millisecond, and a review may meet hundreds of new names.
const RUN = /[\p{L}\p{N}_]+/gu;
const PIECE = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|\p{L}+/gu;
const GAP = /^[\s_.-]*$/u;
export const IDENT_CHAR = /[\p{L}\p{N}_$]/u;

/** The text's words, split the way nameWords splits names, with their offsets. */
export function textTokens(text: string): TextToken[] {
  const tokens: TextToken[] = [];
  for (const run of text.matchAll(RUN)) {
    const pieces = [...run[0].matchAll(PIECE)];
    pieces.forEach((p, i) => {
      const start = run.index + p.index;
      tokens.push({
        word: p[0].toLowerCase(),
        start,
        end: start + p[0].length,
        runStart: i === 0,
        runEnd: i === pieces.length - 1,
      });
    });
  }
  return tokens;
}

/**
 * The span where `words` occur in order from token `i` as whole identifier runs, joined by nothing
 * (camelCase), spaces, underscores, dots or hyphens: "cust_first_name", "cust first name", "CustFirstName".
 */
function matchAt(text: string, tokens: TextToken[], i: number, words: string[]): [number, number] | undefined {
  const k = words.length;
  if (k === 0 || i + k > tokens.length || !tokens[i]!.runStart) return undefined;
  for (let j = 0; j < k; j++) {
    const t = tokens[i + j]!;
    if (t.word !== words[j] || (j > 0 && !GAP.test(text.slice(tokens[i + j - 1]!.end, t.start)))) return undefined;
  }
  return tokens[i + k - 1]!.runEnd ? [tokens[i]!.start, tokens[i + k - 1]!.end] : undefined;
}

export function mentions(text: string, tokens: TextToken[], words: string[]): boolean {
  for (let i = 0; i < tokens.length; i++) if (matchAt(text, tokens, i, words)) return true;
  return false;
}

/**
 * Replace restated names with placeholders. Masks are tried in rank order (longest first; the entity's
 * before the column's on ties), each over the text from left to right, and a span is taken only if no
 * earlier one overlaps it. Only masks whose first word occurs in the text are looked at.
 */
export function mask(text: string, evidence: Evidence): string {
  const tokens = textTokens(text);
  // [rank, start, end, placeholder]; base masks rank by index, the column's after all of them.
  const found: Array<[number, number, number, string]> = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!tokens[i]!.runStart) continue;
    for (const mi of evidence.masksByFirst.get(tokens[i]!.word) ?? []) {
      const m = evidence.masks[mi]!;
      const span = matchAt(text, tokens, i, m.words);
      if (span) found.push([mi, span[0], span[1], m.placeholder]);
    }
    evidence.columnMasks.forEach((m, ci) => {
      const span = m.words[0] === tokens[i]!.word ? matchAt(text, tokens, i, m.words) : undefined;
      if (span) found.push([evidence.columnRanks[ci]!, span[0], span[1], m.placeholder]);
    });
  }
  if (found.length === 0) return text;
  found.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const taken: Array<[number, number, string]> = [];
  for (const [, a, b, placeholder] of found) {
    if (!taken.some(([x, y]) => a < y && x < b)) taken.push([a, b, placeholder]);
  }
  taken.sort((p, q) => p[0] - q[0]);
  let out = '';
  let at = 0;
  for (const [a, b, placeholder] of taken) {
    out += text.slice(at, a) + placeholder;
    at = b;
  }
  return out + text.slice(at);
}

const SPACES = ' '.repeat(256);
const blankOf = (n: number) => (n <= SPACES.length ? SPACES.slice(0, n) : ' '.repeat(n));

/**
 * Blank whole occurrences of `needle` (lowercase) in `text`, not parts of longer identifiers. `lower` is
 * `text` lowercased; both come back blanked alike, each occurrence replaced by as many spaces.
 */
export function blankLiteral(text: string, lower: string, needle: string): [string, string] {
  let from = lower.indexOf(needle);
  if (from < 0) return [text, lower];
  let out = '';
  let outLower = '';
  let at = 0;
  for (let i = from; i >= 0; i = lower.indexOf(needle, from)) {
    const end = i + needle.length;
    const before = text[i - 1] ?? ' ';
    const after = text[end] ?? ' ';
    const joined =
      IDENT_CHAR.test(before) ||
      before === '.' ||
      IDENT_CHAR.test(after) ||
      (after === '.' && /[\p{L}_]/u.test(text[end + 1] ?? ''));
    if (joined) {
      from = i + 1;
    } else {
      out += text.slice(at, i) + blankOf(needle.length);
      outLower += lower.slice(at, i) + blankOf(needle.length);
      at = end;
      from = end;
    }
  }
  return at === 0 ? [text, lower] : [out + text.slice(at), outLower + lower.slice(at)];
}
