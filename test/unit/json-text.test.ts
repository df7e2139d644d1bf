import { renderPreserving, splitEntities, type JsonPath } from '../../catalog/file/json-text';

describe('splitEntities', () => {
  const cases: [string, string][] = [
    ['compact', '{"format":"argus-catalog","entities":[{"id":"a"},{"id":"b","x":[1,{"y":"]}"}]}],"name":"n"}'],
    ['indented', JSON.stringify({ name: 'n', entities: [{ id: 'a', c: [] }, { id: 'b' }], after: 1 }, null, 2)],
    ['odd spacing', '  {  "entities" :\t[ {"id":"a"}  ,\n\n {"id" : "b"} ] , "name":"n" }\n'],
    [
      'escapes and look-alike keys',
      '{"description":"\\"entities\\": [\\\\","meta":{"entities":[{"id":"no"}]},' +
        '"entities":[{"id":"caf\\u00e9","d":"a \\"quoted\\" \\\\ [x] {y}"},{"id":"\\\\"}]}',
    ],
  ];
  test.each(cases)('%s: the pieces and the entity texts join back into the file', (_label, text) => {
    const split = splitEntities(text)!;
    const parsed = JSON.parse(text) as { entities: unknown[] };
    expect(split.entities.map((e) => JSON.parse(e))).toEqual(parsed.entities);
    expect(split.pieces).toHaveLength(split.entities.length + 1);
    let joined = split.pieces[0]!;
    split.entities.forEach((e, i) => (joined += e + split.pieces[i + 1]!));
    expect(joined).toBe(text);
  });

  test('an empty entities array leaves the whole text in one piece', () => {
    expect(splitEntities('{"entities": [ ], "name": "n"}')).toEqual({
      pieces: ['{"entities": [ ], "name": "n"}'],
      entities: [],
    });
  });

  test('the last entities key wins, as in JSON.parse; no entities array gives undefined', () => {
    expect(splitEntities('{"entities":[{"id":"a"}],"entities":[{"id":"b"}]}')!.entities).toEqual(['{"id":"b"}']);
    expect(splitEntities('{"name":"n"}')).toBeUndefined();
    expect(splitEntities('{"entities":{}}')).toBeUndefined();
    expect(splitEntities('[1,2]')).toBeUndefined();
  });
});

const COLUMN_DEFAULTS = Object.freeze({ nullable: true, primary_key: false, tags: Object.freeze([]) });
const defaults = (p: JsonPath) =>
  p.length === 0
    ? { upstream: [], pii_exceptions: [] }
    : p[0] === 'columns' && p.length === 2
      ? COLUMN_DEFAULTS
      : undefined;

type Entity = {
  id: string;
  description?: string;
  description_source?: string;
  upstream: string[];
  pii_exceptions: string[];
  columns: { name: string; nullable: boolean; primary_key: boolean; tags: unknown[]; description?: string }[];
};

/** What zod makes of an entity text: defaults filled in. */
function withDefaults(text: string): Entity {
  const e = JSON.parse(text) as Entity;
  e.upstream ??= [];
  e.pii_exceptions ??= [];
  e.columns = e.columns.map((c) => ({
    ...c,
    nullable: c.nullable ?? true,
    primary_key: c.primary_key ?? false,
    tags: c.tags ?? [],
  }));
  return e;
}

const tag = {
  kind: 'pii',
  category: 'email',
  confidence: 0.9,
  explanation: 'An "email" column: caf\u00e9.',
  source: 'argus',
};
const changes: [string, (e: Entity) => void][] = [
  ['a table description added', (e) => Object.assign(e, { description: 'New text.', description_source: 'argus' })],
  ['a column description added', (e) => (e.columns[1]!.description = 'Column text \u00e9.')],
  ['a tag added to a column without tags', (e) => e.columns[1]!.tags.push(tag)],
  ['a tag added to the first column', (e) => e.columns[0]!.tags.push(tag)],
  ['an upstream edge dropped', (e) => (e.upstream = e.upstream.slice(1))],
  ['an upstream edge added', (e) => (e.upstream = [...e.upstream, 'raw.new'])],
  [
    'several at once',
    (e) => {
      e.description = 'Changed.';
      e.columns.forEach((c) => c.tags.push({ ...tag, proposalId: c.name }));
      e.upstream = [];
    },
  ],
];

const layouts: [string, string][] = [
  [
    'indented (JSON.stringify)',
    JSON.stringify(
      {
        id: 'a',
        description: 'Old.',
        columns: [
          { name: 'id', type: 'BIGINT', nullable: false, primary_key: true, tags: [] },
          { name: 'email', type: 'TEXT', nullable: true, primary_key: false, tags: [] },
        ],
        upstream: ['raw.x', 'raw.y'],
        pii_exceptions: [],
      },
      null,
      2,
    ),
  ],
  [
    'compact',
    '{"id":"a","description":"Old.","columns":[{"name":"id","type":"BIGINT","nullable":false},{"name":"email","type":"TEXT"}],"upstream":["raw.x","raw.y"]}',
  ],
  [
    'hand-written, defaults left out, escapes and odd spacing',
    [
      '{',
      '      "id": "a",',
      '      "description" :  "Old \\"one\\".",',
      '      "columns": [',
      '        { "name": "id", "type": "BIGINT", "nullable": false },',
      '        { "name": "email", "type": "TEXT" },',
      '        { "name": "x\\u0041", "type": "TEXT" }',
      '      ],',
      '      "upstream": ["raw.x", "raw.y"]',
      '    }',
    ].join('\n'),
  ],
];

describe('renderPreserving', () => {
  describe.each(layouts)('%s', (_label, original) => {
    test('an unchanged value (defaults filled in) keeps every byte', () => {
      expect(renderPreserving(original, withDefaults(original), { defaults })).toBe(original);
    });

    test.each(changes)('%s, then taken back, gives the original bytes', (_change, change) => {
      const next = withDefaults(original);
      change(next);
      // As the file store does, the entities beside this one are passed as evidence of the file's layout.
      const neighbours = [original.replace('"id": "a"', '"id": "n"').replace('"id":"a"', '"id":"n"')];
      const written = renderPreserving(original, next, { defaults, neighbours });
      expect(withDefaults(written)).toEqual(next);
      expect(written.includes('\n')).toBe(original.includes('\n'));
      const back = renderPreserving(written, withDefaults(original), { defaults, neighbours });
      expect(back).toBe(original);
    });
  });

  test('a removed key goes with its separator; a removed item with its own', () => {
    expect(renderPreserving('{ "a": 1, "b": 2, "c": 3 }', { a: 1, c: 3 })).toBe('{ "a": 1, "c": 3 }');
    expect(renderPreserving('{ "a": 1, "b": 2, "c": 3 }', { b: 2, c: 3 })).toBe('{ "b": 2, "c": 3 }');
    expect(renderPreserving('[\n  "x",\n  "y",\n  "z"\n]', ['x', 'z'])).toBe('[\n  "x",\n  "z"\n]');
    expect(renderPreserving('{"a":[1],"b":{"c":1}}', { a: [], b: {} })).toBe('{"a":[],"b":{}}');
  });

  test('in a JSON.stringify layout, new members are laid out as JSON.stringify would', () => {
    const value = { a: 1, list: [], obj: { x: 'y' } };
    for (const indent of [2, undefined]) {
      const next = { a: 2, list: [{ k: [1, 2] }], obj: { x: 'y', z: { deep: true } }, added: ['n'] };
      expect(renderPreserving(JSON.stringify(value, null, indent), next)).toBe(JSON.stringify(next, null, indent));
    }
  });

  test('untouched text keeps its escapes, number spellings and spacing', () => {
    const original = '{ "n" : 1.50, "s": "caf\\u00e9",  "list" : [ 1 ,2 ], "t": "x" }';
    expect(renderPreserving(original, { n: 1.5, s: 'caf\u00e9', list: [1, 2], t: 'y' })).toBe(
      '{ "n" : 1.50, "s": "caf\\u00e9",  "list" : [ 1 ,2 ], "t": "y" }',
    );
  });

  test('a key set back to its default stays written when the siblings write that default out', () => {
    const original = '{"columns":[{"name":"a","tags":[]},{"name":"b","tags":[1]}]}';
    const next = {
      columns: [
        { name: 'a', tags: [] },
        { name: 'b', tags: [] },
      ],
    };
    expect(renderPreserving(original, next, { defaults })).toBe(
      '{"columns":[{"name":"a","tags":[]},{"name":"b","tags":[]}]}',
    );
    const leftOut = '{"columns":[{"name":"a"},{"name":"b","tags":[1]}]}';
    expect(renderPreserving(leftOut, next, { defaults })).toBe('{"columns":[{"name":"a"},{"name":"b"}]}');
  });

  test('at the root, the neighbouring texts say whether a default is written out', () => {
    const original = '{"id":"a","upstream":["x"]}';
    const next = { id: 'a', upstream: [], pii_exceptions: [] };
    expect(renderPreserving(original, next, { defaults, neighbours: ['{"id":"b"}'] })).toBe('{"id":"a"}');
    expect(renderPreserving(original, next, { defaults, neighbours: ['{"id":"b","upstream":[]}'] })).toBe(
      '{"id":"a","upstream":[]}',
    );
  });
});
