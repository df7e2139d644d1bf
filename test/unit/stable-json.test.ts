import { stableJson, proposalId } from '../../domain/digest';
import { generateCatalog } from '../../scripts/generate-catalog';
import { CatalogFile } from '../../domain/catalog';

// Proposal ids and fingerprints rest on stableJson, and recorded histories and every catalog's memory rest on
// them: its text must stay what the plain recursive walk it replaced gave, for every JSON value.
function walked(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => walked(x)).join(',')}]`;
  const o = v as Record<string, unknown>;
  const parts = Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${walked(o[k])}`);
  return `{${parts.join(',')}}`;
}

describe('stableJson', () => {
  test.each([
    ['null', null],
    ['undefined', undefined],
    ['a number', 1.5],
    ['NaN', NaN],
    ['a string with quotes and unicode', 'a "b" \\ é \u2028 😀'],
    ['an empty object', {}],
    ['an empty array', []],
    ['undefined in an array', [1, undefined, 'x']],
    ['undefined in an object', { b: undefined, a: 1 }],
    ['nested, keys unordered', { z: [{ y: 1, x: [{ d: null, c: true }] }], a: { c: 'x', b: [] } }],
    ['keys that look like numbers', { '10': 1, '2': 2, a: 3 }],
    ['a key past the array indexes', { '4294967295': 1, '4294967294': 2, '3': 3 }],
  ])('gives the text of a recursive walk with sorted keys for %s', (_what, value) => {
    expect(stableJson(value)).toBe(walked(value));
  });

  test('orders keys whatever their order in the object', () => {
    expect(stableJson({ b: 1, a: { d: 2, c: 3 } })).toBe(stableJson({ a: { c: 3, d: 2 }, b: 1 }));
    expect(stableJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  test('gives the walk’s text for every entity of a generated catalog, and the same proposal ids', () => {
    const { entities } = CatalogFile.parse(generateCatalog({ entities: 300, seed: 7, name: 'x' }));
    for (const e of entities) expect(stableJson(e)).toBe(walked(e));
    const change = { kind: 'description', target: 'column', column: 'email', text: 'E-mail address.' };
    expect(proposalId('shop', 'raw.customers', change)).toMatch(/^p-description-[0-9a-f]{16}$/);
  });
});
