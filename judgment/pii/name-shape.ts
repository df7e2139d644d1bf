import { splitIdentifier, expandWords } from './identifier';
import {
  isOrgWord,
  isPersonWord,
  PHRASES,
  TAIL_PREPOSITIONS,
  VALUE_SUFFIXES,
  EXTRA_SUFFIXES,
  WORDS,
  type Concept,
} from './vocabulary';
import { namePath, singular } from '../words';

/**
 * Reads a column name into its value word and the words that qualify it: the whole name, or the last meaningful
 * segment of a nested path (payload.customer.email), phrases (date of birth) and value suffixes (phone_number)
 * read as one. Shared by the classifier and the table reading; vocabulary only, no verdict.
 */

export interface Item {
  text: string;
  concept?: Concept;
}

export function toItems(tokens: readonly string[]): Item[] {
  const items: Item[] = [];
  let i = 0;
  outer: while (i < tokens.length) {
    for (const len of [3, 2]) {
      if (i + len > tokens.length) continue;
      const phrase = tokens.slice(i, i + len).join(' ');
      const hit = PHRASES.get(phrase);
      if (hit) {
        items.push({ text: phrase, concept: hit });
        i += len;
        continue outer;
      }
    }
    const token = tokens[i] as string;
    const concept = WORDS.get(token) ?? WORDS.get(singular(token));
    items.push(concept ? { text: token, concept } : { text: token });
    i += 1;
  }
  return items;
}

export interface ColumnShape {
  /** Items of the leaf: the whole name, or the last meaningful segment of a path (payload.customer.email). */
  items: Item[];
  concept?: Concept;
  /** Words around the value word, nearest first, then the words of the qualifying path segments, nearest first. */
  modifiers: string[];
  /** Words of the path segments before the leaf, nearest first; none for a plain name. */
  qualifiers: string[];
  /** Every word of the name (after abbreviations), for explanations. */
  words: string[];
  /** The leaf's words before abbreviations were expanded ("ph" stays "ph"). */
  rawLeaf: string[];
}

/**
 * Reads a column name. A plain name is its own leaf; a dotted, bracketed or arrowed path is read by its last
 * meaningful segment, qualified by the segments before it (user.name is the user's name, not a user_name).
 */
export function shapeOf(name: string): ColumnShape {
  const path = namePath(name);
  if (path.segments.length <= 1) {
    const tokens = splitIdentifier(name);
    return leafShape(toItems(tokens), [], tokens, path.leaf);
  }
  const segments = path.segments.map(expandWords);
  const leaf = segments[segments.length - 1] ?? [];
  const qualifiers = segments
    .slice(0, -1)
    .reverse()
    .flatMap((seg) => [...seg].reverse());
  const words = segments.flat();
  const shape = leafShape(toItems(leaf), qualifiers, words, path.leaf);
  // card.number, phones[0].number: the value word may sit in the segment before a bare "number" or "line".
  const prev = segments[segments.length - 2];
  if (shape.concept || !prev || (prev.length === 1 && (isPersonWord(prev[0]!) || isOrgWord(prev[0]!)))) return shape;
  const joined = leafShape(toItems([...prev, ...leaf]), qualifiers.slice(prev.length), words, path.leaf);
  return joined.concept ? joined : shape;
}

/**
 * Finds the value concept: the last concept whose following tokens are only value suffixes, up to a preposition that
 * opens a qualifying tail (ip_address_at_signup, phone_for_alerts): the tail's words qualify the value, like a prefix's.
 * A preposition that ends the name opens no tail: login_at, verified_on are when it happened (the timestamp convention).
 */
export function leafShape(items: Item[], qualifiers: string[], words: string[], rawLeaf: string[]): ColumnShape {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as Item;
    if (!item.concept) continue;
    // avatar_url, photo_path: the link to a photo is read as the photo.
    if (item.concept === 'web' && items.slice(0, i).some((t) => t.concept === 'photo')) continue;
    const extra = EXTRA_SUFFIXES[item.concept];
    const rest = items.slice(i + 1);
    const cut = rest.findIndex((t, k) => TAIL_PREPOSITIONS.has(t.text) && k < rest.length - 1);
    const tailOk = (cut < 0 ? rest : rest.slice(0, cut)).every(
      (t) => VALUE_SUFFIXES.has(t.text) || /^[0-9]+$/.test(t.text) || extra?.has(t.text),
    );
    if (!tailOk) break;
    // Nearest qualifier first: in contact_company_phone the company, not the contact, owns the phone.
    const before = items
      .slice(0, i)
      .flatMap((t) => t.text.split(' '))
      .reverse();
    const after = items.slice(i + 1).flatMap((t) => t.text.split(' '));
    return {
      items,
      concept: item.concept,
      modifiers: [...before, ...after, ...qualifiers],
      qualifiers,
      words,
      rawLeaf,
    };
  }
  return { items, modifiers: [...items.flatMap((t) => t.text.split(' ')), ...qualifiers], qualifiers, words, rawLeaf };
}
