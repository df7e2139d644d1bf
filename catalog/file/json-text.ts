/**
 * JSON text that is written back byte for byte where its value did not change. Pure: no I/O, no schema.
 * Both functions expect text that `JSON.parse` accepts (the file store parses a file before it splits it).
 */

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;

/** The text of a file split around the elements of its top-level `entities` array. */
export interface EntitySplit {
  /**
   * The exact bytes around and between the entities: the file is
   * `pieces[0] + entities[0] + pieces[1] + … + entities[n-1] + pieces[n]`, so `pieces.length === n + 1`.
   */
  pieces: string[];
  /** Each element of the array, from its first to its last character. */
  entities: string[];
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function skipSpace(t: string, i: number): number {
  const n = t.length;
  while (i < n && isSpace(t.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string whose opening quote is at `i`. */
function stringEnd(t: string, i: number): number {
  for (;;) {
    const q = t.indexOf('"', i + 1);
    if (q < 0) throw new SyntaxError(`unterminated string at ${i}`);
    // The quote ends the string unless an odd number of backslashes precede it.
    let b = q - 1;
    while (t.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    i = q;
  }
}

/** Index just past the value whose first character is at `i`. */
function valueEnd(t: string, i: number): number {
  const n = t.length;
  const c = t.charCodeAt(i);
  if (c === QUOTE) return stringEnd(t, i);
  if (c !== LBRACE && c !== LBRACKET) {
    let j = i;
    while (j < n) {
      const d = t.charCodeAt(j);
      if (d === COMMA || d === RBRACE || d === RBRACKET || isSpace(d)) break;
      j++;
    }
    return j;
  }
  let depth = 0;
  for (let j = i; j < n; j++) {
    const d = t.charCodeAt(j);
    if (d === QUOTE) j = stringEnd(t, j) - 1;
    else if (d === LBRACE || d === LBRACKET) depth++;
    else if ((d === RBRACE || d === RBRACKET) && --depth === 0) return j + 1;
  }
  throw new SyntaxError(`unterminated value at ${i}`);
}

function keyAt(t: string, start: number, end: number): string {
  const raw = t.slice(start + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(t.slice(start, end)) as string) : raw;
}

/** Where each element of a file's top-level `entities` array starts and ends (`text.slice(starts[k], ends[k])`). */
export interface EntityOffsets {
  starts: number[];
  ends: number[];
}

/**
 * Find the top-level `entities` array of a catalog file's text and the offsets of its elements. Returns
 * undefined when the root is not an object or has no `entities` array. Like `JSON.parse`, the last `entities`
 * key wins. One pass; strings are skipped with `indexOf`. Only ASCII is looked at, so the offsets in a file's
 * bytes read as latin1 (one character a byte) are byte offsets.
 */
export function locateEntities(text: string): EntityOffsets | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== LBRACE) return undefined;
  i++;
  let found: EntityOffsets | undefined;
  for (;;) {
    i = skipSpace(text, i);
    if (i >= text.length) throw new SyntaxError('unterminated object');
    if (text.charCodeAt(i) === RBRACE) break;
    const ks = i;
    i = stringEnd(text, i);
    const key = keyAt(text, ks, i);
    i = skipSpace(text, skipSpace(text, i) + 1); // past the colon
    if (key === 'entities') {
      if (text.charCodeAt(i) === LBRACKET) {
        const starts: number[] = [];
        const ends: number[] = [];
        i++;
        for (;;) {
          i = skipSpace(text, i);
          const c = text.charCodeAt(i);
          if (c === RBRACKET) break;
          if (c === COMMA) {
            i++;
            continue;
          }
          if (i >= text.length) throw new SyntaxError('unterminated entities array');
          const end = valueEnd(text, i);
          // A stray `}` where an element should start: text JSON.parse refuses (and no progress to make).
          if (end === i) throw new SyntaxError(`unexpected character at ${i}`);
          starts.push(i);
          ends.push(end);
          i = end;
        }
        i++;
        found = { starts, ends };
      } else {
        found = undefined;
        i = valueEnd(text, i);
      }
    } else i = valueEnd(text, i);
    i = skipSpace(text, i);
    if (text.charCodeAt(i) === COMMA) i++;
  }
  return found;
}

/**
 * Split a catalog file's text around the elements of its top-level `entities` array (see {@link EntitySplit}
 * and {@link locateEntities}).
 */
export function splitEntities(text: string): EntitySplit | undefined {
  const found = locateEntities(text);
  if (!found) return undefined;
  const { starts, ends } = found;
  const pieces: string[] = [];
  const entities: string[] = [];
  let at = 0;
  for (let k = 0; k < starts.length; k++) {
    pieces.push(text.slice(at, starts[k]));
    entities.push(text.slice(starts[k], ends[k]));
    at = ends[k]!;
  }
  pieces.push(text.slice(at));
  return { pieces, entities };
}

// ---------------------------------------------------------------------------------------------------------------
// Preserving renderer

interface ScalarNode {
  kind: 'scalar';
  start: number;
  end: number;
}
interface Member {
  key: string;
  start: number;
  keyEnd: number;
  valueStart: number;
  value: JsonNode;
  end: number;
  /** Found equal to the value it is rendered as (see `membersOf`). */
  same: boolean;
}
// Containers find their children only when asked: an unchanged subtree is compared with `matchAt` and never built.
interface ObjectNode {
  kind: 'object';
  start: number;
  end: number;
  members?: Member[];
}
interface ArrayNode {
  kind: 'array';
  start: number;
  end: number;
  items?: JsonNode[];
}
type JsonNode = ScalarNode | ObjectNode | ArrayNode;
type Span = { start: number; end: number };

function kindAt(t: string, i: number): JsonNode['kind'] {
  const c = t.charCodeAt(i);
  return c === LBRACE ? 'object' : c === LBRACKET ? 'array' : 'scalar';
}

function parseNode(t: string, i: number): JsonNode {
  if (i >= t.length) throw new SyntaxError('unexpected end of text');
  return { kind: kindAt(t, i), start: i, end: valueEnd(t, i) };
}

/**
 * The members of an object. Given the value it is being rendered as, each member is compared with its new value
 * while it is found (`same`), so an unchanged member costs one walk of its text, not two.
 */
function membersOf(t: string, n: ObjectNode, next?: Record<string, unknown>): Member[] {
  if (n.members) return n.members;
  const members: Member[] = [];
  let j = skipSpace(t, n.start + 1);
  while (t.charCodeAt(j) !== RBRACE) {
    if (t.charCodeAt(j) !== QUOTE) throw new SyntaxError(`expected a key at ${j}`);
    const keyEnd = stringEnd(t, j);
    const key = keyAt(t, j, keyEnd);
    const valueStart = skipSpace(t, skipSpace(t, keyEnd) + 1);
    const matched = next && Object.hasOwn(next, key) ? matchAt(t, valueStart, next[key]) : -1;
    const value: JsonNode =
      matched < 0 ? parseNode(t, valueStart) : { kind: kindAt(t, valueStart), start: valueStart, end: matched };
    members.push({ key, start: j, keyEnd, valueStart, value, end: value.end, same: matched >= 0 });
    j = skipSpace(t, value.end);
    if (t.charCodeAt(j) === COMMA) j = skipSpace(t, j + 1);
  }
  return (n.members = members);
}

function itemsOf(t: string, n: ArrayNode): JsonNode[] {
  if (n.items) return n.items;
  const items: JsonNode[] = [];
  let j = skipSpace(t, n.start + 1);
  while (t.charCodeAt(j) !== RBRACKET) {
    const item = parseNode(t, j);
    items.push(item);
    j = skipSpace(t, item.end);
    if (t.charCodeAt(j) === COMMA) j = skipSpace(t, j + 1);
  }
  return (n.items = items);
}

function spansOf(t: string, n: ObjectNode | ArrayNode): Span[] {
  return n.kind === 'object' ? membersOf(t, n) : itemsOf(t, n);
}

function scalarValue(t: string, n: ScalarNode): unknown {
  const s = t.slice(n.start, n.end);
  const c = s.charCodeAt(0);
  if (c === QUOTE) return s.includes('\\') ? JSON.parse(s) : s.slice(1, -1);
  if (s === 'true') return true;
  if (s === 'false') return false;
  if (s === 'null') return null;
  return Number(s);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function definedKeys(v: Record<string, unknown>): string[] {
  return Object.keys(v).filter((k) => v[k] !== undefined);
}

/** Whether the text of a scalar stands for `v`, without decoding it when it need not. */
function scalarEquals(t: string, n: ScalarNode, v: unknown): boolean {
  if (typeof v === 'string') return t.charCodeAt(n.start) === QUOTE && stringEquals(t, n.start, n.end, v);
  return (typeof v !== 'object' || v === null) && scalarValue(t, n) === v;
}

/** Whether the string literal from `start` to `end` stands for `v`. */
function stringEquals(t: string, start: number, end: number, v: string): boolean {
  // An escape makes the raw text longer than the value: text as long as the value matches only without one.
  const rawLength = end - start - 2;
  if (rawLength === v.length) {
    for (let k = 0; k < rawLength; k++) if (t.charCodeAt(start + 1 + k) !== v.charCodeAt(k)) return false;
    return !v.includes('\\');
  }
  return rawLength > v.length && JSON.parse(t.slice(start, end)) === v;
}

function definedCount(v: Record<string, unknown>): number {
  const keys = Object.keys(v);
  let c = keys.length;
  for (const k of keys) if (v[k] === undefined) c--;
  return c;
}

/**
 * Where the value whose text starts at `i` ends, if that text stands for `v`; -1 if it does not. Walks the text
 * and the value together without building anything.
 */
function matchAt(t: string, i: number, v: unknown): number {
  const c = t.charCodeAt(i);
  if (c === LBRACE) {
    if (!isPlainObject(v)) return -1;
    let count = 0;
    let j = skipSpace(t, i + 1);
    while (t.charCodeAt(j) !== RBRACE) {
      const keyEnd = stringEnd(t, j);
      const key = keyAt(t, j, keyEnd);
      if (!Object.hasOwn(v, key)) return -1;
      j = matchAt(t, skipSpace(t, skipSpace(t, keyEnd) + 1), v[key]);
      if (j < 0) return -1;
      count++;
      j = skipSpace(t, j);
      if (t.charCodeAt(j) === COMMA) j = skipSpace(t, j + 1);
    }
    return count === definedCount(v) ? j + 1 : -1;
  }
  if (c === LBRACKET) {
    if (!Array.isArray(v)) return -1;
    let k = 0;
    let j = skipSpace(t, i + 1);
    while (t.charCodeAt(j) !== RBRACKET) {
      if (k >= v.length) return -1;
      j = matchAt(t, j, v[k++]);
      if (j < 0) return -1;
      j = skipSpace(t, j);
      if (t.charCodeAt(j) === COMMA) j = skipSpace(t, j + 1);
    }
    return k === v.length ? j + 1 : -1;
  }
  if (c === QUOTE) {
    if (typeof v !== 'string') return -1;
    const end = stringEnd(t, i);
    return stringEquals(t, i, end, v) ? end : -1;
  }
  const end = valueEnd(t, i);
  return scalarEquals(t, { kind: 'scalar', start: i, end }, v) ? end : -1;
}

/** Whether the text of `n` stands for `v`. */
function nodeEquals(t: string, n: JsonNode, v: unknown): boolean {
  return n.kind === 'scalar' ? scalarEquals(t, n, v) : matchAt(t, n.start, v) === n.end;
}

/** Deep equality of plain JSON values; `undefined` members count as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const ka = definedKeys(a);
  if (ka.length !== definedCount(b)) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** A path into a value: object keys and array indexes from the root. */
export type JsonPath = readonly (string | number)[];

export interface RenderOptions {
  /**
   * Default values a schema fills in for the object at `path` (absent keys mean "no default"). A key absent
   * from the original text whose new value deep-equals its default stays absent: it is a default, not a change.
   * A key the original text has, set by this change to its default, is dropped when the file leaves that
   * default out elsewhere (see `neighbours`), so adding a value and taking it back restores the original text.
   */
  defaults?: (path: JsonPath) => Readonly<Record<string, unknown>> | undefined;
  /**
   * Texts of values laid out like the root (for a catalog entity: the entities beside it). With an object's
   * siblings in the same array, they are the evidence of whether this file writes a default out or leaves it
   * out; with no evidence a default is left out.
   */
  neighbours?: readonly string[];
  /** Indentation of the line the root value starts on, when it is not at the start of a line (the file store passes it). */
  indent?: string;
}

/**
 * Whether the first non-empty array of plain values found in this text is on one line (`["a", "b"]`) or one item
 * a line, as JSON.stringify writes it; undefined when the text has none.
 */
function scalarArraysInline(t: string, n: JsonNode): boolean | undefined {
  if (n.kind === 'scalar') return undefined;
  if (n.kind === 'array') {
    const items = itemsOf(t, n);
    if (items.length > 0 && items.every((x) => x.kind === 'scalar'))
      return !t.slice(n.start, items[0]!.start).includes('\n');
  }
  for (const child of n.kind === 'object' ? membersOf(t, n).map((m) => m.value) : itemsOf(t, n)) {
    const found = scalarArraysInline(t, child);
    if (found !== undefined) return found;
  }
  return undefined;
}

function isScalar(v: unknown): boolean {
  return typeof v !== 'object' || v === null;
}

interface Style {
  /** Arrays of plain values are written on one line even in an indented layout. */
  inlineScalarArrays: boolean;
  unit: string;
  colon: string;
  comma: string;
  objectPad: string;
  arrayPad: string;
}

class Renderer {
  private style: Style | undefined;
  private rootIndent: string | undefined;
  private neighbourNodes: { text: string; node: JsonNode }[] | undefined;

  constructor(
    private readonly t: string,
    private readonly root: JsonNode,
    private readonly opts: RenderOptions,
  ) {}

  private lead(n: ObjectNode | ArrayNode): string {
    const spans = spansOf(this.t, n);
    return spans.length === 0 ? '' : this.t.slice(n.start + 1, spans[0]!.start);
  }

  private isMultiline(n: ObjectNode | ArrayNode, parentMultiline: boolean): boolean {
    const spans = spansOf(this.t, n);
    return spans.length === 0 ? parentMultiline : this.lead(n).includes('\n');
  }

  /** Indentation of the line that position `pos` is on. */
  private lineIndent(pos: number): string {
    const nl = this.t.lastIndexOf('\n', pos - 1);
    if (nl < 0) return this.baseIndent();
    let j = nl + 1;
    while (j < pos && (this.t.charCodeAt(j) === 32 || this.t.charCodeAt(j) === 9)) j++;
    return this.t.slice(nl + 1, j);
  }

  private baseIndent(): string {
    if (this.rootIndent !== undefined) return this.rootIndent;
    if (this.opts.indent !== undefined) return (this.rootIndent = this.opts.indent);
    this.rootIndent = '';
    const r = this.root;
    if (r.kind !== 'scalar') {
      const lead = this.lead(r);
      if (lead.includes('\n')) {
        const inner = lead.slice(lead.lastIndexOf('\n') + 1);
        this.rootIndent = inner.slice(0, Math.max(0, inner.length - this.getStyle().unit.length));
      }
    }
    return this.rootIndent;
  }

  /** The layout the text already uses: indentation unit, colon, inline comma and padding. */
  private getStyle(): Style {
    if (this.style) return this.style;
    const t = this.t;
    const multilineText = t.includes('\n');
    let unit: string | undefined;
    let colon: string | undefined;
    let comma: string | undefined;
    let objectPad: string | undefined;
    let arrayPad: string | undefined;
    // The first containers are enough to tell a layout; a whole large value is not walked for it.
    let budget = 64;
    const visit = (n: JsonNode): void => {
      if (n.kind === 'scalar' || budget-- <= 0) return;
      const spans = spansOf(t, n);
      if (spans.length > 0) {
        const lead = this.lead(n);
        if (lead.includes('\n')) {
          const nl = t.lastIndexOf('\n', n.start);
          if (unit === undefined && nl >= 0) {
            let j = nl + 1;
            while (t.charCodeAt(j) === 32 || t.charCodeAt(j) === 9) j++;
            const own = t.slice(nl + 1, j);
            const inner = lead.slice(lead.lastIndexOf('\n') + 1);
            if (inner.length > own.length && inner.startsWith(own)) unit = inner.slice(own.length);
          }
        } else if (n.kind === 'object') objectPad ??= lead;
        else arrayPad ??= lead;
        for (let i = 1; i < spans.length && comma === undefined; i++) {
          const sep = t.slice(spans[i - 1]!.end, spans[i]!.start);
          if (!sep.includes('\n')) comma = sep;
        }
      }
      if (n.kind === 'object') {
        for (const m of membersOf(t, n)) {
          colon ??= t.slice(m.keyEnd, m.valueStart);
          visit(m.value);
        }
      } else for (const item of itemsOf(t, n)) visit(item);
    };
    visit(this.root);
    let inlineScalarArrays = scalarArraysInline(t, this.root);
    for (const text of this.opts.neighbours ?? []) {
      if (inlineScalarArrays !== undefined) break;
      inlineScalarArrays = scalarArraysInline(text, parseNode(text, skipSpace(text, 0)));
    }
    this.style = {
      inlineScalarArrays: inlineScalarArrays ?? false,
      unit: unit ?? '  ',
      colon: colon ?? (multilineText ? ': ' : ':'),
      comma: comma ?? (multilineText ? ', ' : ','),
      objectPad: objectPad ?? '',
      arrayPad: arrayPad ?? '',
    };
    return this.style;
  }

  /** A new value in the file's layout: on lines indented from `indent`, or on one line when `indent` is null. */
  private write(v: unknown, indent: string | null): string {
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      const s = this.getStyle();
      if (indent === null || (s.inlineScalarArrays && v.every(isScalar)))
        return `[${s.arrayPad}${v.map((x) => this.write(x, null)).join(s.comma)}${s.arrayPad}]`;
      const inner = indent + s.unit;
      return `[\n${inner}${v.map((x) => this.write(x, inner)).join(`,\n${inner}`)}\n${indent}]`;
    }
    if (isPlainObject(v)) {
      const keys = definedKeys(v);
      if (keys.length === 0) return '{}';
      const s = this.getStyle();
      if (indent === null) {
        const body = keys.map((k) => JSON.stringify(k) + s.colon + this.write(v[k], null)).join(s.comma);
        return `{${s.objectPad}${body}${s.objectPad}}`;
      }
      const inner = indent + s.unit;
      const body = keys.map((k) => JSON.stringify(k) + s.colon + this.write(v[k], inner)).join(`,\n${inner}`);
      return `{\n${inner}${body}\n${indent}}`;
    }
    return JSON.stringify(v ?? null);
  }

  /** `compare`: whether to try the original text whole first (the root is rendered without: it has changed). */
  emit(
    n: JsonNode,
    next: unknown,
    path: JsonPath,
    parentMultiline: boolean,
    siblings: readonly JsonNode[],
    compare = true,
  ): string {
    if (compare && nodeEquals(this.t, n, next)) return this.t.slice(n.start, n.end);
    if (n.kind === 'object' && isPlainObject(next)) return this.emitObject(n, next, path, parentMultiline, siblings);
    if (n.kind === 'array' && Array.isArray(next)) return this.emitArray(n, next, path, parentMultiline);
    return this.write(next, parentMultiline ? this.lineIndent(n.start) : null);
  }

  /**
   * Whether to drop `key` of object `self`, which this change sets back to its default. The evidence, in order:
   * the same key in the object's siblings, the same key in the neighbouring texts (for the root), the other keys
   * with defaults in the object and its siblings; each votes "left out" (absent) or "written out" (present with the default
   * value). Without any, the default is left out.
   */
  private leavesOutDefault(
    key: string,
    defaults: Readonly<Record<string, unknown>>,
    self: ObjectNode,
    siblings: readonly JsonNode[],
  ): boolean {
    const vote = (text: string, nodes: readonly JsonNode[], keys: readonly string[]): number => {
      let balance = 0;
      for (const s of nodes) {
        if (s.kind !== 'object') continue;
        const members = membersOf(text, s);
        for (const k of keys) {
          const m = members.find((x) => x.key === k);
          if (!m) balance++;
          else if (nodeEquals(text, m.value, defaults[k])) balance--;
        }
      }
      return balance;
    };
    const bySiblings = vote(
      this.t,
      siblings.filter((s) => s !== self),
      [key],
    );
    if (bySiblings !== 0) return bySiblings > 0;
    if (self === this.root && this.opts.neighbours?.length) {
      this.neighbourNodes ??= this.opts.neighbours.map((text) => ({ text, node: parseNode(text, skipSpace(text, 0)) }));
      const byNeighbours = this.neighbourNodes.reduce((sum, x) => sum + vote(x.text, [x.node], [key]), 0);
      if (byNeighbours !== 0) return byNeighbours > 0;
    }
    const others = Object.keys(defaults).filter((k) => k !== key);
    return vote(this.t, [self, ...siblings.filter((s) => s !== self)], others) >= 0;
  }

  private emitObject(
    n: ObjectNode,
    next: Record<string, unknown>,
    path: JsonPath,
    parentMultiline: boolean,
    siblings: readonly JsonNode[],
  ): string {
    const t = this.t;
    const defaults = this.opts.defaults?.(path);
    const members = membersOf(t, n, next);
    const multiline = this.isMultiline(n, parentMultiline);
    const indent = multiline ? this.memberIndent(n) : null;
    const inText = new Set<string>();
    // From the last member back: a key set back to its default may be dropped only when no kept member follows
    // it, where a key this renderer added would be; one in the middle of the object was the file's own.
    const keep: boolean[] = [];
    let trailing = true;
    for (let j = members.length - 1; j >= 0; j--) {
      const m = members[j]!;
      inText.add(m.key);
      const v = Object.hasOwn(next, m.key) ? next[m.key] : undefined;
      const dropped =
        v === undefined ||
        (trailing &&
          !m.same &&
          defaults !== undefined &&
          Object.hasOwn(defaults, m.key) &&
          jsonEqual(v, defaults[m.key]) &&
          !nodeEquals(t, m.value, defaults[m.key]) &&
          this.leavesOutDefault(m.key, defaults, n, siblings));
      keep[j] = !dropped;
      if (!dropped) trailing = false;
    }
    const entries: { orig?: number; text: string }[] = [];
    members.forEach((m, j) => {
      if (!keep[j]) return;
      if (m.same) entries.push({ orig: j, text: t.slice(m.start, m.end) });
      else {
        const value = this.emit(m.value, next[m.key], [...path, m.key], multiline, []);
        entries.push({ orig: j, text: t.slice(m.start, m.valueStart) + value });
      }
    });
    for (const k of Object.keys(next)) {
      const v = next[k];
      if (inText.has(k) || v === undefined) continue;
      if (defaults && Object.hasOwn(defaults, k) && jsonEqual(v, defaults[k])) continue;
      const colon = members.length > 0 ? t.slice(members[0]!.keyEnd, members[0]!.valueStart) : this.getStyle().colon;
      entries.push({ text: JSON.stringify(k) + colon + this.write(v, indent) });
    }
    return this.assemble(n, members, entries, multiline, indent, '{', '}');
  }

  private emitArray(n: ArrayNode, next: unknown[], path: JsonPath, parentMultiline: boolean): string {
    const t = this.t;
    const items = itemsOf(t, n);
    const multiline =
      this.isMultiline(n, parentMultiline) &&
      !(items.length === 0 && next.every(isScalar) && this.getStyle().inlineScalarArrays);
    const indent = multiline ? this.memberIndent(n) : null;
    const min = Math.min(items.length, next.length);
    let p = 0;
    while (p < min && nodeEquals(t, items[p]!, next[p])) p++;
    let s = 0;
    while (s < min - p && nodeEquals(t, items[items.length - 1 - s]!, next[next.length - 1 - s])) s++;
    const entries: { orig?: number; text: string }[] = [];
    for (let i = 0; i < p; i++) entries.push({ orig: i, text: t.slice(items[i]!.start, items[i]!.end) });
    const origMid = items.length - s - p;
    const nextMid = next.length - s - p;
    for (let k = 0; k < nextMid; k++) {
      const i = p + k;
      entries.push(
        k < origMid
          ? { orig: i, text: this.emit(items[i]!, next[i], [...path, i], multiline, items) }
          : { text: this.write(next[i], indent) },
      );
    }
    for (let i = items.length - s; i < items.length; i++)
      entries.push({ orig: i, text: t.slice(items[i]!.start, items[i]!.end) });
    return this.assemble(n, items, entries, multiline, indent, '[', ']');
  }

  /** Indentation of the members of a multi-line container. */
  private memberIndent(n: ObjectNode | ArrayNode): string {
    const lead = this.lead(n);
    if (lead.includes('\n')) return lead.slice(lead.lastIndexOf('\n') + 1);
    return this.lineIndent(n.start) + this.getStyle().unit;
  }

  /**
   * A container from its entries: the original lead and trail, each kept member with the separator that
   * preceded it, new members with the separator the container already uses.
   */
  private assemble(
    n: ObjectNode | ArrayNode,
    spans: readonly Span[],
    entries: readonly { orig?: number; text: string }[],
    multiline: boolean,
    indent: string | null,
    open: string,
    close: string,
  ): string {
    const t = this.t;
    if (entries.length === 0) return spans.length === 0 ? t.slice(n.start, n.end) : open + close;
    let lead: string;
    let trail: string;
    let sep: string;
    if (spans.length === 0) {
      const pad = open === '{' ? this.getStyle().objectPad : this.getStyle().arrayPad;
      lead = multiline ? `\n${indent}` : pad;
      trail = multiline ? `\n${this.lineIndent(n.start)}` : pad;
      sep = multiline ? `,\n${indent}` : this.getStyle().comma;
    } else {
      lead = t.slice(n.start + 1, spans[0]!.start);
      trail = t.slice(spans[spans.length - 1]!.end, n.end - 1);
      if (lead.includes('\n')) sep = `,${lead}`;
      else if (spans.length > 1) sep = t.slice(spans[spans.length - 2]!.end, spans[spans.length - 1]!.start);
      else sep = lead.length > 0 ? `,${lead}` : this.getStyle().comma;
    }
    let out = open + lead;
    entries.forEach((e, i) => {
      if (i > 0)
        out += e.orig !== undefined && e.orig > 0 ? t.slice(spans[e.orig - 1]!.end, spans[e.orig]!.start) : sep;
      out += e.text;
    });
    return out + trail + close;
  }
}

/**
 * The text of `next`, reusing the bytes of `original` (JSON text) wherever the value did not change: an
 * unchanged value keeps its text; an object keeps its key order and the text between its tokens, with changed
 * values replaced, removed keys taken out with their separator and new keys appended after the last member;
 * an array keeps its unchanged leading and trailing items. New text follows the layout around it (indented
 * like its siblings, or on one line in a one-line container). Defaults: see {@link RenderOptions.defaults}.
 */
export function renderPreserving(original: string, next: unknown, options: RenderOptions = {}): string {
  const start = skipSpace(original, 0);
  const root = parseNode(original, start);
  const end = skipSpace(original, root.end);
  if (end !== original.length) throw new SyntaxError(`unexpected text after the value at ${root.end}`);
  const r = new Renderer(original, root, options);
  return (
    original.slice(0, start) +
    r.emit(root, next, [], original.includes('\n'), [], root.kind !== 'object') +
    original.slice(root.end)
  );
}
