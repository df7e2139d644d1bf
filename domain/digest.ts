/** A key JavaScript orders before all others in every object (an array index): a sorting replacer cannot order it. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;

/** The plain walk: keys sorted as strings, whatever they look like. */
function walked(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + walked(v[i]);
    return out + ']';
  }
  const o = v as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const k of Object.keys(o).sort()) {
    if (o[k] === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + walked(o[k]);
    first = false;
  }
  return out + '}';
}

/**
 * Stable JSON: object keys sorted, so equal values always serialise the same way. It runs over every entity of a
 * catalog on every sweep (its fingerprints): JSON.stringify with a sorting replacer is several times faster than a
 * walk in JavaScript and gives the same text, except for keys that look like array indexes, which every object
 * puts first; a value with one is walked.
 */
export function stableJson(v: unknown): string {
  let indexKey = false;
  const text = JSON.stringify(v, (_key, x: unknown) => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) return x;
    const o = x as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o).sort()) {
      if (INDEX_KEY.test(k)) indexKey = true;
      out[k] = o[k];
    }
    return out;
  });
  return indexKey ? walked(v) : (text ?? 'null');
}

/** A 64-bit non-cryptographic digest as 16 hex chars (pure JS so workflows may use it too). */
export function digest64(s: string): string {
  let h1 = 0xdeadbeef ^ s.length;
  let h2 = 0x41c6ce57 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(16).padStart(8, '0') + (h1 >>> 0).toString(16).padStart(8, '0');
}

/** Deterministic proposal id: the same repair proposed for the same catalog entity always gets the same id. */
export function proposalId(catalog: string, entityId: string, change: unknown): string {
  const c = change as { kind?: string };
  return `p-${c.kind ?? 'x'}-${digest64(`${catalog}\u0000${entityId}\u0000${stableJson(change)}`)}`;
}

/**
 * What a proposal would do, apart from how it says why: its kind and target, and what it writes (a tag's category,
 * a description's text, a lineage edge), never its explanation, confidence or reading. Equal for a proposal an
 * upgraded rule words differently: a person's decision on it stands (state/memory.ts RememberedDecision).
 */
export function proposalContentKey(entityId: string, change: unknown): string {
  const c = change as Record<string, unknown>;
  const what: Record<string, unknown> = { kind: c.kind, target: c.target, column: c.column };
  if (c.kind === 'pii_tag') what.category = c.category;
  else if (c.kind === 'lineage_flag') Object.assign(what, { finding: c.finding, upstream: c.upstream });
  else what.text = c.text;
  return `c-${digest64(`${entityId}\u0000${stableJson(what)}`)}`;
}
