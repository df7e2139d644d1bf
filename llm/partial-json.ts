/**
 * The complete elements of the array under `key` in a JSON object's text that may be cut off anywhere: what a
 * batch answer stopped at max_tokens still holds. `{"entities":[{…},{…},{"id":"x","desc` gives the first two.
 * Only a top-level key is looked for; an element is taken when its text closes and parses. Returns undefined when
 * the text is no object or the array never starts (nothing usable); an array that ends normally gives all.
 */
export function completeItems(text: string, key: string): unknown[] | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return undefined;
  i++;
  // Top-level keys until ours: a value before it is skipped whole (an unterminated one leaves nothing to find).
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] !== '"') return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    let name: unknown;
    try {
      name = JSON.parse(text.slice(i, keyEnd));
    } catch {
      return undefined;
    }
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') return undefined;
    i = skipSpace(text, i + 1);
    if (name === key) break;
    const end = valueEnd(text, i);
    if (end < 0) return undefined;
    i = skipSpace(text, end);
    if (text[i] !== ',') return undefined;
    i++;
  }
  if (text[i] !== '[') return undefined;
  i++;
  const items: unknown[] = [];
  for (;;) {
    i = skipSpace(text, i);
    if (i >= text.length || text[i] === ']') return items;
    const end = valueEnd(text, i);
    if (end < 0) return items;
    try {
      items.push(JSON.parse(text.slice(i, end)));
    } catch {
      return items;
    }
    i = skipSpace(text, end);
    if (text[i] !== ',') return items;
    i++;
  }
}

function skipSpace(t: string, i: number): number {
  while (i < t.length && (t[i] === ' ' || t[i] === '\n' || t[i] === '\r' || t[i] === '\t')) i++;
  return i;
}

/** Index just past the string starting at `i` (a `"`), or -1 when the text ends inside it. */
function stringEnd(t: string, i: number): number {
  for (let j = i + 1; j < t.length; j++) {
    if (t[j] === '\\') j++;
    else if (t[j] === '"') return j + 1;
  }
  return -1;
}

/** Index just past the JSON value starting at `i`, or -1 when the text ends before it does. */
function valueEnd(t: string, i: number): number {
  const c = t[i];
  if (c === '"') return stringEnd(t, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < t.length; j++) {
      const d = t[j];
      if (d === '"') {
        j = stringEnd(t, j) - 1;
        if (j < 0) return -1;
      } else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter, which must be there (the text may end mid-number).
  let j = i;
  while (j < t.length && !/[\s,\]}]/.test(t[j]!)) j++;
  return j < t.length && j > i ? j : -1;
}
