// Byte-preserving edits of dbt property (schema.yml) files. The `yaml` package parses the file only to
// find where things are (node ranges); the edits themselves splice text, so every line an edit does not
// touch comes back byte-identical: comments, key order, quoting and indentation included.
import { isMap, isScalar, isSeq, parseDocument, type Document, type Pair, type YAMLMap } from 'yaml';

/** Which dbt node an edit addresses: a model, seed or snapshot by name, or a table of a source. */
export type DbtYamlNode =
  { resource: 'model' | 'seed' | 'snapshot'; name: string } | { resource: 'source'; source: string; table: string };

/** How a PII tag is written. Defaults: tag `pii`, category under `meta.pii_category`, the file's own form. */
export interface PiiTagConvention {
  tag?: string;
  categoryKey?: string;
  /** `auto`: the form this column, else this file, already uses; `config` when the file uses neither. */
  form?: 'auto' | 'legacy' | 'config';
}

/** One step of a path from the document root: a mapping key, or the sequence item whose `name` is given. */
export type YamlStep = { key: string } | { item: string };

/**
 * One primitive splice, recorded so it can be taken back: at `path` (a mapping, or for `item` a sequence)
 * the pair `key` / the item named `item` went from `before` (its exact source text; null: absent) to
 * `after`; `inserted` is the exact text added when it was absent.
 */
export type YamlOp =
  | { op: 'pair'; path: YamlStep[]; key: string; before: string | null; after: string; inserted?: string }
  | { op: 'item'; path: YamlStep[]; item: string; after: string; inserted: string };

/** What undoes an edit: the file did not exist (`created`), or the splices, in the order they were made. */
export type YamlUndo = { file: 'created'; after: string } | { file: 'edited'; ops: YamlOp[] };

export interface YamlEditResult {
  text: string;
  changed: boolean;
  undo: YamlUndo;
}

/** The file is not YAML this editor can address, or undo found text other than what the edit wrote. */
export class YamlEditError extends Error {
  override readonly name = 'YamlEditError';
}

const SECTION = { model: 'models', seed: 'seeds', snapshot: 'snapshots', source: 'sources' } as const;

/** Path from the root to the node's mapping. */
export function nodePath(node: DbtYamlNode): YamlStep[] {
  return node.resource === 'source'
    ? [{ key: 'sources' }, { item: node.source }, { key: 'tables' }, { item: node.table }]
    : [{ key: SECTION[node.resource] }, { item: node.name }];
}

/** File an entry goes into when a model, seed or snapshot has no YAML entry yet: beside its SQL/CSV file. */
export function argusYamlPathFor(originalFilePath: string, resource: 'model' | 'seed' | 'snapshot'): string {
  const dir = originalFilePath.includes('/') ? originalFilePath.slice(0, originalFilePath.lastIndexOf('/')) : '.';
  return `${dir}/_argus__${SECTION[resource]}.yml`;
}

// ---------------------------------------------------------------------------------------------------
// Public edits

/**
 * Set the description of a node (column undefined) or of one of its columns. `text` is the file's
 * content, or null when the file does not exist yet (it is created). Entries that are missing (the
 * node, `columns`, the column) are added. Setting the description a file already holds changes nothing.
 */
export function setDescription(
  text: string | null,
  node: DbtYamlNode,
  column: string | undefined,
  description: string,
): YamlEditResult {
  const ed = new Editor(text, node);
  const holder = column === undefined ? ed.ensureNode() : ed.ensureColumn(column);
  const current = ed.pair(holder, 'description');
  const value = current?.value;
  const wrapped = escapeJinja(description);
  const unchanged = isScalar(value) && typeof value.value === 'string' && value.value === wrapped;
  if (!unchanged)
    ed.setPair(holder, 'description', (indent, flow) => `description: ${renderValue(wrapped, indent, flow)}`);
  return ed.result();
}

/**
 * Add a PII tag to a column: the tag (default `pii`) to its `tags`, and `categoryKey: category` to its
 * `meta`, in the legacy form (`tags:`/`meta:` on the column) or the `config:` form, whichever the column
 * or else the file already uses. Idempotent: a tag or category already there is left as it is.
 */
export function addPiiTag(
  text: string | null,
  node: DbtYamlNode,
  column: string,
  category: string,
  convention: PiiTagConvention = {},
): YamlEditResult {
  const tag = convention.tag ?? 'pii';
  const categoryKey = convention.categoryKey ?? 'pii_category';
  const ed = new Editor(text, node);
  const colPath = ed.ensureColumn(column);
  const form = convention.form && convention.form !== 'auto' ? convention.form : ed.tagForm(colPath);
  const holder = form === 'config' ? ed.ensureMap(colPath, 'config') : colPath;

  const tags = ed.pair(holder, 'tags')?.value;
  if (tags === undefined || tags === null || (isScalar(tags) && (tags.value === null || tags.value === ''))) {
    ed.setPair(holder, 'tags', () => `tags: [${renderFlowString(tag)}]`);
  } else if (isSeq(tags)) {
    const has = tags.items.some((i) => isScalar(i) && i.value === tag);
    if (!has) ed.appendToSeq(holder, 'tags', tag);
  } else if (isScalar(tags)) {
    if (tags.value !== tag) ed.setPair(holder, 'tags', () => `tags: [${ed.source(tags)}, ${renderFlowString(tag)}]`);
  } else {
    throw new YamlEditError(`tags of column ${column} is neither a list nor a string`);
  }

  const metaPath = ed.ensureMap(holder, 'meta');
  const existing = ed.pair(metaPath, categoryKey)?.value;
  if (!(isScalar(existing) && existing.value === category)) {
    ed.setPair(
      metaPath,
      categoryKey,
      (indent, flow) => `${renderKey(categoryKey)}: ${renderValue(category, indent, flow)}`,
    );
  }
  return ed.result();
}

/**
 * Take back an edit: given the file's current text (null: absent) and the edit's undo record, returns
 * the text before the edit, byte for byte, or null when the edit created the file. Throws
 * YamlEditError when the file no longer holds exactly what the edit wrote (someone changed it since).
 */
export function undoYamlEdit(text: string | null, undo: YamlUndo): string | null {
  if (undo.file === 'created') {
    if (text !== undo.after) throw new YamlEditError('the file ARGUS created has changed since; left as is');
    return null;
  }
  if (text === null) throw new YamlEditError('the file ARGUS edited no longer exists');
  let current = text;
  for (const op of [...undo.ops].reverse()) current = revertOp(current, op);
  return current;
}

// ---------------------------------------------------------------------------------------------------
// Rendering scalars so that PyYAML (which dbt uses) reads back exactly the string

// What PyYAML accepts in a stream; anything else must be escaped inside a double-quoted scalar.
const PRINTABLE = /^[\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;
const RESERVED_PLAIN = /^(?:y|n|yes|no|true|false|on|off|null|~)$/i;

/**
 * dbt renders descriptions as Jinja: text that holds Jinja delimiters is wrapped in a raw block so the
 * manifest shows it as written. A doc block (`{{ doc('x') }}`) never comes through here: ARGUS does not
 * write over human text.
 */
export function escapeJinja(text: string): string {
  return /\{[{%#]/.test(text) ? `{% raw %}${text}{% endraw %}` : text;
}

function isPlainSafe(s: string): boolean {
  return (
    /^[A-Za-z]/.test(s) &&
    PRINTABLE.test(s) &&
    !/[\n\r\t\x85\u2028\u2029]/.test(s) &&
    !/: |:$| #|\s$/.test(s) &&
    !RESERVED_PLAIN.test(s)
  );
}

function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (
      cp === 0x2028 ||
      cp === 0x2029 ||
      cp === 0xfeff ||
      (cp >= 0xd800 && cp <= 0xdfff) ||
      (cp >= 0xfffe && cp <= 0xffff)
    )
      out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A string value for a block mapping whose key sits at column `indent`. */
export function renderString(s: string, indent: number): string {
  if (isPlainSafe(s)) return s;
  const printable = PRINTABLE.test(s) && !/[\r\x85\u2028\u2029\ufeff]/.test(s);
  if (printable && !s.includes('\n')) return `'${s.replace(/'/g, "''")}'`;
  const lines = s.split('\n');
  const literalSafe =
    printable &&
    !/^[ \t\n]/.test(s) &&
    !s.endsWith('\n') &&
    lines.every((l) => !/[ \t]$/.test(l)) &&
    !lines.some((l) => l.startsWith('\t'));
  if (literalSafe) {
    const pad = ' '.repeat(indent + 2);
    return `|-\n${lines.map((l) => (l === '' ? '' : pad + l)).join('\n')}`;
  }
  return doubleQuoted(s);
}

function renderValue(s: string, indent: number, flow: boolean): string {
  return flow ? renderFlowString(s) : renderString(s, indent);
}

function renderFlowString(s: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) && !RESERVED_PLAIN.test(s) ? s : doubleQuoted(s);
}

function renderKey(s: string): string {
  return renderFlowString(s);
}

// ---------------------------------------------------------------------------------------------------
// The editor: locate with the parser, splice text, re-parse after each splice

function parse(text: string): Document.Parsed {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) throw new YamlEditError(`not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  return doc;
}

function nameOf(item: unknown): string | undefined {
  if (!isMap(item)) return undefined;
  const v = item.get('name', true);
  return isScalar(v) && v.value !== null ? String(v.value) : undefined;
}

function findItem(items: unknown[], name: string): unknown {
  return items.find((i) => nameOf(i) === name) ?? items.find((i) => nameOf(i)?.toLowerCase() === name.toLowerCase());
}

function keyOf(pair: Pair): string | undefined {
  return isScalar(pair.key) ? String(pair.key.value) : undefined;
}

function resolve(doc: Document.Parsed, path: YamlStep[]): unknown {
  let node: unknown = doc.contents;
  for (const step of path) {
    if ('key' in step) {
      if (!isMap(node)) return undefined;
      node = (node.items as Pair[]).find((p) => keyOf(p) === step.key)?.value;
    } else {
      if (!isSeq(node)) return undefined;
      node = findItem(node.items, step.item);
    }
    if (node === undefined) return undefined;
  }
  return node;
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf('\n', at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const i = text.indexOf('\n', at);
  return i < 0 ? text.length : i;
}

interface Ranged {
  range?: [number, number, number] | null;
}

/** End of a node's own text: block collections and block scalars include trailing line breaks; drop them. */
function valueEnd(text: string, node: Ranged): number {
  const [start, end] = node.range!;
  let e = end;
  while (e > start && /\s/.test(text[e - 1]!)) e--;
  return e;
}

function pairSpan(text: string, pair: Pair): [number, number] {
  const key = pair.key as Ranged;
  const start = key.range![0];
  let end = key.range![1];
  const colon = text.indexOf(':', end);
  if (colon >= 0) end = colon + 1;
  const value = pair.value as Ranged | null;
  if (value && value.range) end = Math.max(end, valueEnd(text, value));
  return [start, end];
}

function itemSpan(text: string, item: Ranged): [number, number] {
  // The `- ` indicator precedes the item's range.
  const start = text.lastIndexOf('-', item.range![0]);
  return [start, valueEnd(text, item)];
}

class Editor {
  private text: string;
  private doc: Document.Parsed;
  private readonly created: boolean;
  private readonly ops: YamlOp[] = [];
  private readonly nodePath: YamlStep[];

  constructor(
    text: string | null,
    private readonly node: DbtYamlNode,
  ) {
    this.created = text === null || text.trim() === '';
    this.text = text ?? '';
    this.doc = parse(this.text);
    this.nodePath = nodePath(node);
  }

  result(): YamlEditResult {
    parse(this.text);
    const changed = this.ops.length > 0;
    const undo: YamlUndo =
      this.created && changed ? { file: 'created', after: this.text } : { file: 'edited', ops: this.ops };
    return { text: this.text, changed, undo };
  }

  source(node: Ranged): string {
    return this.text.slice(node.range![0], valueEnd(this.text, node));
  }

  pair(path: YamlStep[], key: string): Pair | undefined {
    const map = resolve(this.doc, path);
    return isMap(map) ? (map.items as Pair[]).find((p) => keyOf(p) === key) : undefined;
  }

  private splice(start: number, end: number, replacement: string): void {
    this.text = this.text.slice(0, start) + replacement + this.text.slice(end);
    this.doc = parse(this.text);
  }

  /** The node's mapping, created (and its file's top level) when missing. */
  ensureNode(): YamlStep[] {
    if (this.created && this.text.trim() === '') {
      // A new file: dbt reads `version: 2` files; the entry itself is added below like any other.
      this.splice(0, this.text.length, 'version: 2\n');
    }
    const path = this.nodePath;
    for (let i = 1; i <= path.length; i++) {
      const step = path[i - 1]!;
      const parent = path.slice(0, i - 1);
      if (resolve(this.doc, path.slice(0, i)) !== undefined) continue;
      if ('key' in step) this.setPair(parent, step.key, () => `${step.key}:`, true);
      else this.appendItem(parent, step.item);
    }
    return path;
  }

  ensureColumn(column: string): YamlStep[] {
    const nodePath = this.ensureNode();
    const columns = [...nodePath, { key: 'columns' }];
    const seq = resolve(this.doc, columns);
    if (seq === undefined || (isScalar(seq) && seq.value === null))
      this.setPair(nodePath, 'columns', () => 'columns:', true);
    else if (!isSeq(seq)) throw new YamlEditError(`columns of ${describe(this.node)} is not a list`);
    const path = [...columns, { item: column }];
    if (resolve(this.doc, path) === undefined) this.appendItem(columns, column);
    return path;
  }

  /** A mapping under `key` of the mapping at `path`, created (block style) when missing. */
  ensureMap(path: YamlStep[], key: string): YamlStep[] {
    const value = this.pair(path, key)?.value;
    if (value === undefined || (isScalar(value) && value.value === null))
      this.setPair(path, key, () => `${key}:`, true);
    else if (!isMap(value)) throw new YamlEditError(`${key} of ${describe(this.node)} is not a mapping`);
    return [...path, { key }];
  }

  /** Which form the file uses for column tags/meta: this column's, else the first column that has one. */
  tagForm(columnPath: YamlStep[]): 'legacy' | 'config' {
    const formOf = (col: unknown): 'legacy' | 'config' | undefined => {
      if (!isMap(col)) return undefined;
      const config = col.get('config', true);
      if (isMap(config) && (config.has('tags') || config.has('meta'))) return 'config';
      if (col.has('tags') || col.has('meta')) return 'legacy';
      return undefined;
    };
    const own = formOf(resolve(this.doc, columnPath));
    if (own) return own;
    let found: 'legacy' | 'config' | undefined;
    const visit = (n: unknown): void => {
      if (found) return;
      if (isMap(n)) {
        for (const p of n.items as Pair[]) {
          if (keyOf(p) === 'columns' && isSeq(p.value)) for (const c of p.value.items) found ??= formOf(c);
          visit(p.value);
        }
      } else if (isSeq(n)) n.items.forEach(visit);
    };
    visit(this.doc.contents);
    return found ?? 'config';
  }

  /**
   * Replace the pair `key` of the mapping at `path`, or add it after the mapping's last pair. `render`
   * gets the key's column; a value for an empty placeholder (`key:`) is written as a nested block.
   */
  setPair(path: YamlStep[], key: string, render: (indent: number, flow: boolean) => string, structural = false): void {
    const map = resolve(this.doc, path);
    if (isScalar(map) && map.value === null && path.length > 0) {
      // An empty `parent:` placeholder (one this editor just added): the pair goes one level below it.
      const last = path[path.length - 1]!;
      const holder = 'key' in last ? this.pair(path.slice(0, -1), last.key) : undefined;
      if (!holder) throw new YamlEditError(`cannot find ${stepsText(path)} in ${describe(this.node)}'s file`);
      const [start, end] = pairSpan(this.text, holder);
      const indent = start - lineStart(this.text, start) + 2;
      const after = render(indent, false);
      const inserted = `\n${' '.repeat(indent)}${after}`;
      this.splice(lineEnd(this.text, end), lineEnd(this.text, end), inserted);
      this.ops.push({ op: 'pair', path, key, before: null, after, inserted });
      return;
    }
    if (!isMap(map)) throw new YamlEditError(`cannot find ${stepsText(path)} in ${describe(this.node)}'s file`);
    const existing = (map.items as Pair[]).find((p) => keyOf(p) === key);
    if (existing) {
      const [start, end] = pairSpan(this.text, existing);
      const indent = start - lineStart(this.text, start);
      const before = this.text.slice(start, end);
      const after = render(indent, Boolean(map.flow));
      if (after === before) return;
      this.splice(start, end, after);
      this.ops.push({ op: 'pair', path, key, before, after });
      return;
    }
    const { at, prefix, indent } = this.insertionPoint(map as YAMLMap.Parsed, structural);
    const after = render(indent, Boolean(map.flow));
    const inserted = prefix + after;
    this.splice(at, at, inserted);
    this.ops.push({ op: 'pair', path, key, before: null, after, inserted });
  }

  /** Where a new pair goes in `map`: after its last pair, one line down, at its keys' column. */
  private insertionPoint(map: YAMLMap.Parsed, structural: boolean): { at: number; prefix: string; indent: number } {
    const text = this.text;
    if (map.flow) {
      if (structural)
        throw new YamlEditError(`cannot nest a block inside a flow mapping in ${describe(this.node)}'s file`);
      const close = text.lastIndexOf('}', map.range[1]);
      return { at: close, prefix: map.items.length > 0 ? ', ' : '', indent: 0 };
    }
    const pairs = map.items as Pair[];
    const last = pairs[pairs.length - 1];
    if (last === undefined) throw new YamlEditError(`empty mapping in ${describe(this.node)}'s file`);
    const first = (pairs[0]!.key as Ranged).range![0];
    const indent = first - lineStart(text, first);
    const at = lineEnd(text, pairSpan(text, last)[1]);
    return { at, prefix: `${at === 0 ? '' : '\n'}${' '.repeat(indent)}`, indent };
  }

  /** Add `- name: <item>` at the end of the sequence at `path` (an empty `key:` placeholder is filled). */
  private appendItem(path: YamlStep[], item: string): void {
    const seq = resolve(this.doc, path);
    const text = this.text;
    let at: number;
    let indent: number;
    if (isSeq(seq) && !seq.flow && seq.items.length > 0) {
      const firstItem = itemSpan(text, seq.items[0] as Ranged)[0];
      indent = firstItem - lineStart(text, firstItem);
      at = lineEnd(text, itemSpan(text, seq.items[seq.items.length - 1] as Ranged)[1]);
    } else if (isScalar(seq) && seq.value === null) {
      // `key:` with nothing under it: the items go one level below the key.
      const parent = path.slice(0, -1);
      const last = path[path.length - 1]!;
      const pair = 'key' in last ? this.pair(parent, last.key) : undefined;
      if (!pair) throw new YamlEditError(`cannot find ${stepsText(path)} in ${describe(this.node)}'s file`);
      const [start, end] = pairSpan(text, pair);
      indent = start - lineStart(text, start) + 2;
      at = lineEnd(text, end);
    } else {
      throw new YamlEditError(`${stepsText(path)} in ${describe(this.node)}'s file is not a block list`);
    }
    const after = `- name: ${renderString(item, indent + 2)}`;
    const inserted = `\n${' '.repeat(indent)}${after}`;
    this.splice(at, at, inserted);
    this.ops.push({ op: 'item', path, item, after, inserted });
  }

  /** Append a scalar to the list under `key`: one more `- x` line in block style, `, x` in flow style. */
  appendToSeq(path: YamlStep[], key: string, value: string): void {
    const pair = this.pair(path, key)!;
    const seq = pair.value;
    if (!isSeq(seq)) throw new YamlEditError(`${key} is not a list`);
    const [start, end] = pairSpan(this.text, pair);
    const before = this.text.slice(start, end);
    if (seq.flow) {
      const close = this.text.lastIndexOf(']', valueEnd(this.text, seq as Ranged));
      const after =
        this.text.slice(start, close) +
        (seq.items.length > 0 ? ', ' : '') +
        renderFlowString(value) +
        this.text.slice(close, end);
      this.splice(start, end, after);
      this.ops.push({ op: 'pair', path, key, before, after });
    } else {
      // The last item's line may carry a comment past the list's own end: insert after that line.
      const firstItem = itemSpan(this.text, seq.items[0] as Ranged)[0];
      const indent = firstItem - lineStart(this.text, firstItem);
      const lastEnd = lineEnd(this.text, itemSpan(this.text, seq.items[seq.items.length - 1] as Ranged)[1]);
      const wide = this.text.slice(start, Math.max(end, lastEnd));
      const line = `\n${' '.repeat(indent)}- ${renderFlowString(value)}`;
      this.splice(lastEnd, lastEnd, line);
      this.ops.push({ op: 'pair', path, key, before: wide, after: wide + line });
    }
  }
}

function revertOp(text: string, op: YamlOp): string {
  const doc = parse(text);
  const conflict = (): never => {
    throw new YamlEditError(`${stepsText(op.path)} changed since ARGUS wrote it; left as is`);
  };
  if (op.op === 'item') {
    const seq = resolve(doc, op.path);
    const item = isSeq(seq) ? findItem(seq.items, op.item) : undefined;
    if (!item) return conflict();
    const [start, end] = itemSpan(text, item as Ranged);
    const removeFrom = start - (op.inserted.length - op.after.length);
    if (text.slice(start, end) !== op.after || text.slice(removeFrom, end) !== op.inserted) return conflict();
    return text.slice(0, removeFrom) + text.slice(end);
  }
  const map = resolve(doc, op.path);
  const pair = isMap(map) ? (map.items as Pair[]).find((p) => keyOf(p) === op.key) : undefined;
  if (!pair) return conflict();
  const [start, end] = pairSpan(text, pair);
  if (text.slice(start, end) !== op.after) return conflict();
  if (op.before !== null) return text.slice(0, start) + op.before + text.slice(end);
  const inserted = op.inserted ?? op.after;
  const removeFrom = start - (inserted.length - op.after.length);
  if (text.slice(removeFrom, end) !== inserted) return conflict();
  return text.slice(0, removeFrom) + text.slice(end);
}

function describe(node: DbtYamlNode): string {
  return node.resource === 'source' ? `source ${node.source}.${node.table}` : `${node.resource} ${node.name}`;
}

function stepsText(path: YamlStep[]): string {
  return path.map((s) => ('key' in s ? s.key : `[${s.item}]`)).join('.') || 'the document';
}
