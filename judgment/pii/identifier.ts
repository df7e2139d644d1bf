import { splitWords } from '../words';
import { ABBREVIATIONS, DP_VOCAB, NAME_NOISE, WORDS } from './vocabulary';

/**
 * Splits an identifier into lower-case word tokens the way words.ts does (snake_case, kebab, spaces, camelCase,
 * PascalCase, acronyms: IPAddress → ip address, digits); then expands abbreviations and splits glued words
 * (zipcode → zip code) when every piece is a known word.
 */
const splitCache = new Map<string, readonly string[]>();

export function splitIdentifier(raw: string): string[] {
  const hit = splitCache.get(raw);
  if (hit) return [...hit];
  const out = splitIdentifierUncached(raw);
  if (splitCache.size > 100_000) splitCache.clear();
  splitCache.set(raw, out);
  return [...out];
}

function splitIdentifierUncached(raw: string): string[] {
  return expandWords(splitWords(raw.replace(CUSTOM_SUFFIX, '')));
}

/** A CRM's custom-field and custom-object marker (industry_tier__c, onboarding__c, birthdate__pc): not a word. */
export const CUSTOM_SUFFIX = /__(c|pc|r)$/i;

/**
 * The words of a table name that can say what a row is: noise (stg, dim, vw, v2) and digits dropped, and what
 * follows "by" or "per" cut ("Sales by Category" is about sales).
 */
export function tableTokens(name: string): string[] {
  const tokens = splitIdentifier(name).filter((t) => !NAME_NOISE.has(t) && !/^[0-9]+$/.test(t));
  const cut = tokens.findIndex((t) => t === 'by' || t === 'per');
  return cut > 0 ? tokens.slice(0, cut) : tokens;
}

/** Abbreviations expanded and glued words split, over words already split by words.ts. */
export function expandWords(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const expanded = ABBREVIATIONS.get(token);
    if (expanded) {
      out.push(...expanded);
      continue;
    }
    if (WORDS.has(token) || DP_VOCAB.has(token) || token.length < 5 || /^[0-9]+$/.test(token)) {
      out.push(token);
      continue;
    }
    const glued = splitGlued(token);
    for (const piece of glued) out.push(...(ABBREVIATIONS.get(piece) ?? [piece]));
  }
  return out;
}

/** Fewest-pieces split of a glued lower-case word into known words; the word itself when none exists. */
function splitGlued(word: string): string[] {
  const best: Array<string[] | undefined> = new Array(word.length + 1);
  best[0] = [];
  for (let end = 1; end <= word.length; end++) {
    for (let start = 0; start < end; start++) {
      const head = best[start];
      const piece = word.slice(start, end);
      if (!head || !DP_VOCAB.has(piece)) continue;
      const current = best[end];
      if (!current || current.length > head.length + 1) best[end] = [...head, piece];
    }
  }
  return best[word.length] ?? [word];
}
