/** Stable JSON: object keys sorted, so equal values always serialise the same way. */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  // Plain loops: this runs over every entity of a catalog on every sweep (its fingerprints).
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + stableJson(v[i]);
    return out + ']';
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const x = o[k];
    if (x === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + stableJson(x);
    first = false;
  }
  return out + '}';
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
