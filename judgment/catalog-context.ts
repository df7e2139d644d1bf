export { nameWords, splitWords } from './words';

/**
 * What an agent or the mechanical gate may ask about the rest of the catalog: whether an entity id
 * exists, and which entity a SQL table reference names. Built from ids alone, so it carries no
 * catalog text that could steer a decision.
 */
export interface CatalogContext {
  /** Exact, case-sensitive id lookup: recorded lineage stores ids, so a near miss is a dangling edge. */
  exists(id: string): boolean;
  /**
   * Map a SQL table reference ("raw.customers", "customers", '"Raw"."Customers"', `[dbo].[Orders]`)
   * to an entity id, case-insensitively. Qualifiers may be left out when the rest is unambiguous and
   * may be added (a database or schema prefix) when the id does not record them. Ambiguous or
   * unknown references resolve to undefined.
   */
  resolve(name: string): string | undefined;
}

/** Build a context over the catalog's entity ids. Pure; later changes to `ids` are not seen. */
export function createCatalogContext(ids: Iterable<string>): CatalogContext {
  const known = new Set<string>();
  // Both "reference is a suffix of the id" and "id is a suffix of the reference" share the last part,
  // so indexing by it keeps resolve cheap on large catalogs. A bucket holds ids only (most hold one), and their
  // parts are split again when a reference meets them: kept split, they were most of a large catalog's index.
  const byLastPart = new Map<string, string | string[]>();
  for (const id of ids) {
    if (known.has(id)) continue;
    known.add(id);
    const last = lastPartOf(id);
    if (last === undefined) continue;
    const bucket = byLastPart.get(last);
    if (bucket === undefined) byLastPart.set(last, id);
    else if (typeof bucket === 'string') byLastPart.set(last, [bucket, id]);
    else bucket.push(id);
  }

  // Every view's SQL names its tables again for the scan, the drafter, the gate and the write: answers are kept
  // (bounded; the ids, and so every answer, never change).
  const answers = new Map<string, string | undefined>();
  return {
    exists: (id) => known.has(id),
    resolve(name) {
      if (answers.has(name)) return answers.get(name);
      const id = resolveAnew(name);
      if (answers.size >= MAX_KEPT_ANSWERS) answers.clear();
      answers.set(name, id);
      return id;
    },
  };

  function resolveAnew(name: string): string | undefined {
    const ref = splitQualifiedName(name);
    const last = ref[ref.length - 1];
    if (last === undefined) return undefined;
    const ids = byLastPart.get(last) ?? [];
    const bucket = (typeof ids === 'string' ? [ids] : ids).map((id) => ({ id, parts: splitQualifiedName(id) }));
    const exact = bucket.filter((e) => sameParts(e.parts, ref));
    if (exact.length === 1) return exact[0]!.id;
    if (exact.length > 1) return exact.find((e) => e.id === name)?.id;
    const partial = bucket.filter((e) => isSuffix(e.parts, ref) || isSuffix(ref, e.parts));
    return partial.length === 1 ? partial[0]!.id : undefined;
  }
}

/** Names a context keeps the answer for, at most (then it starts afresh). */
const MAX_KEPT_ANSWERS = 50_000;

/**
 * Split a possibly quoted, dotted identifier into lowercase parts:
 * '"Raw"."Customers"' → ["raw", "customers"], "[dbo].[Order Details]" → ["dbo", "order details"].
 * Empty parts (T-SQL "db..table") are dropped.
 */
export function splitQualifiedName(name: string): string[] {
  const parts: string[] = [];
  let current = '';
  let i = 0;
  const closers: Record<string, string> = { '"': '"', '`': '`', '[': ']' };
  while (i < name.length) {
    const c = name[i]!;
    const close = closers[c];
    if (close !== undefined) {
      i++;
      while (i < name.length) {
        const d = name[i]!;
        if (d === close) {
          // A doubled closing quote is an escaped quote inside the identifier.
          if (name[i + 1] === close && close !== ']') {
            current += d;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        current += d;
        i++;
      }
      continue;
    }
    if (c === '.') {
      if (current.trim() !== '') parts.push(current.trim().toLowerCase());
      current = '';
      i++;
      continue;
    }
    current += c;
    i++;
  }
  if (current.trim() !== '') parts.push(current.trim().toLowerCase());
  return parts;
}

function lastPartOf(id: string): string | undefined {
  const parts = splitQualifiedName(id);
  return parts[parts.length - 1];
}

function sameParts(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i]);
}

/** True when `short` is a proper suffix of `long` (fewer parts, same trailing parts). */
function isSuffix(short: string[], long: string[]): boolean {
  if (short.length >= long.length) return false;
  const offset = long.length - short.length;
  return short.every((p, i) => p === long[offset + i]);
}
