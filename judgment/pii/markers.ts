import {
  ACT_VERBS,
  FLAG_INNER,
  FLAG_PAIRS,
  FLAG_PREFIXES,
  FLAG_SUFFIXES,
  STAT_PERIODS,
  STAT_PREFIXES,
  STAT_SUFFIXES,
  isPersonWord,
} from './vocabulary';
import { singular } from '../words';

/**
 * What makes a name a statistic about people or a yes/no flag about a value rather than the value itself
 * (users_count and pct_users_with_email say nothing about one person; has_phone and email_verified do not hold
 * the phone or the e-mail), and what makes it name who did something to the row (confirmed_by).
 */

export function isPlural(word: string): boolean {
  return singular(word) !== word;
}

/**
 * The word that makes a name a statistic about people (count, avg, "number of", "weekly active", "contacts with"),
 * if any.
 */
export function statisticMarker(tokens: readonly string[]): string | undefined {
  const first = tokens[0];
  const last = tokens[tokens.length - 1];
  if (tokens.length < 2 || first === undefined || last === undefined) return undefined;
  if (STAT_PREFIXES.has(first)) return first;
  if (STAT_SUFFIXES.has(last)) return last;
  const next = tokens[1] as string;
  if ((first === 'number' || first === 'n') && (next === 'of' || isPlural(next))) return `${first} ${next}`;
  for (let i = 0; i + 1 < tokens.length; i++) {
    const word = tokens[i] as string;
    if (STAT_PERIODS.has(word) && tokens[i + 1] === 'active') return `${word} active`;
    // contacts_with_email, users_without_mfa: the people who have it, counted or listed, not one person's value.
    if ((tokens[i + 1] === 'with' || tokens[i + 1] === 'without') && isPlural(word) && isPersonWord(word))
      return `${word} ${tokens[i + 1]}`;
  }
  return undefined;
}

/** The word that makes a name a yes/no flag (is_, has_, _verified, _opted_out), if any. */
export function flagMarker(tokens: readonly string[]): string | undefined {
  const first = tokens[0];
  const last = tokens[tokens.length - 1];
  if (tokens.length < 2 || first === undefined || last === undefined) return undefined;
  if (FLAG_PREFIXES.has(first)) return first;
  const inner = tokens.find((t) => FLAG_INNER.has(t));
  if (inner) return inner;
  if (FLAG_SUFFIXES.has(last)) return last;
  const pair = tokens.slice(-2).join(' ');
  if (FLAG_PAIRS.has(pair)) return pair;
  return undefined;
}

/** The verb of a "<verb> by" name (confirmed_by, ReceivedBy): who did it to the row, if it is one. */
export function actorVerb(nameWords: readonly string[]): string | undefined {
  const verb = nameWords[nameWords.length - 2];
  return nameWords[nameWords.length - 1] === 'by' && verb !== undefined && ACT_VERBS.has(verb) ? verb : undefined;
}
