// A dbt project as an ARGUS catalog: read from the manifest (and catalog.json for types), repairs written into the
// YAML property files the nodes' patch paths name (or `_argus__<section>.yml` beside a node without one), each
// edit recorded with what undoes it. Every line an edit does not touch stays byte-identical (yaml-edit.ts).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { PiiTag, type CatalogEntity } from '../../domain/catalog';
import type { CatalogRef } from '../../domain/sweep';
import { digest64, stableJson } from '../../domain/digest';
import {
  CatalogError,
  type CatalogAdapter,
  type CatalogIdentity,
  type CatalogSnapshot,
  type RepairOutcome,
  type RepairRequest,
  type RevertOutcome,
  type RevertRequest,
} from '../adapter';
import {
  columnFacts,
  readDbtProject,
  type DbtEntityLocation,
  type DbtFingerprintFacts,
  type DbtProjectRead,
} from './manifest';
import { applyChange } from '../entity-repairs';
import { removeLeftovers, tempFilesOf, writeFileAtomic } from '../../state/file/fs';
import { DEFAULT_SAMPLE_LIMITS, DbtSampleError, dbtShow, sampleQuery, type SampleLimits } from './sample-values';
import {
  addPiiTag,
  setDescription,
  undoYamlEdit,
  YamlEditError,
  type YamlEditResult,
  type YamlUndo,
} from './yaml-edit';

type DbtRef = Extract<CatalogRef, { kind: 'dbt' }>;

/** Most rows a sample reads, as PostgreSQL's: enough for judgment/pii/value-patterns.ts. */
const SAMPLE_MAX_ROWS = 100;

export interface DbtAdapterOptions {
  /** The worker's environment: `ARGUS_DBT` (the dbt executable; `dbt` on PATH without it) and dbt's own DBT_*. */
  env?: NodeJS.ProcessEnv;
  /** How long one table's sample may take (sample-values.ts); tests shorten it. */
  sampleLimits?: SampleLimits;
}

/** What a YAML write records as its `before`: the text it replaced (null: none) and how to take the edit back. */
interface DbtBefore {
  description?: string | null;
  file: string;
  undo: YamlUndo;
}

/** Key of ARGUS's record of a description it wrote: the YAML file, the node and the column ('' for the node). */
const recordKey = (loc: DbtEntityLocation, column: string) => `${loc.writePath}\u0000${loc.uniqueId}\u0000${column}`;
/** Key of ARGUS's record of a PII tag it wrote on a column: the tag as ARGUS holds it (JSON), which YAML cannot keep. */
const tagRecordKey = (loc: DbtEntityLocation, column: string) => `${recordKey(loc, column)}\u0000pii`;

/** The tag ARGUS recorded for a column, when the manifest's tag is still that one (same category). */
function recordedTag(raw: string | undefined, category: string): PiiTag | undefined {
  if (raw === undefined) return undefined;
  try {
    const t = PiiTag.safeParse(JSON.parse(raw));
    return t.success && t.data.category === category ? t.data : undefined;
  } catch {
    return undefined;
  }
}

async function readText(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Write (or, for null, remove) a file of the project whole or not at all, as the state files are written: a
 * temporary `<name>.<pid>.<random>.tmp` renamed into place (dbt reads no `.tmp` file), removed when the write fails.
 * A kill between the two leaves one beside the YAML; the next write of that file removes those old enough to be no
 * live writer's (LEFTOVER_AGE_MS), so the project's folders do not collect them.
 */
async function writeText(file: string, text: string | null): Promise<void> {
  const dir = path.dirname(file);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  await removeLeftovers(dir, tempFilesOf(path.basename(file), names));
  if (text === null) await fs.rm(file, { force: true });
  else await writeFileAtomic(file, text);
}

export class DbtCatalogAdapter implements CatalogAdapter {
  readonly identity: CatalogIdentity;
  /** The last read, kept while the manifest's and catalog.json's mtimes (`version`) stay what they were. */
  private read: { version: string; project: DbtProjectRead; name: string } | undefined;
  /** Descriptions ARGUS wrote, by file, node and column: equal to the YAML's text, the text is ARGUS's. */
  private readonly recordFile: string;
  /**
   * The samples of this project, one dbt process after another: dbt-duckdb opens the database file for writing, so a
   * second process at once would find it locked, and each dbt is a Python start and a parse on the worker's cores.
   */
  private sampling: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ref: DbtRef,
    stateDir: string,
    private readonly options: DbtAdapterOptions = {},
  ) {
    const dir = path.resolve(ref.projectDir);
    this.identity = { kind: 'dbt', key: `dbt:${dir}`, label: `dbt project ${dir}` };
    this.recordFile = path.join(stateDir, 'dbt', `${digest64(dir)}.json`);
  }

  private get dir(): string {
    return path.resolve(this.ref.projectDir);
  }

  private async project(): Promise<{ project: DbtProjectRead; name: string }> {
    const manifest = path.resolve(this.dir, this.ref.manifest);
    let st;
    try {
      if (!(await fs.stat(this.dir)).isDirectory()) throw new CatalogError(`${this.dir} is not a folder`);
      st = await fs.stat(manifest);
    } catch (e) {
      if (e instanceof CatalogError) throw e;
      const what = (e as NodeJS.ErrnoException).path === this.dir ? 'the dbt project folder' : 'its manifest';
      throw new CatalogError(
        `dbt catalog ${this.dir}: ${what} ${(e as NodeJS.ErrnoException).path ?? ''} is missing: ` +
          `run \`dbt parse\` (or \`dbt build\`, and \`dbt docs generate\` for column types) in the project first`,
      );
    }
    // catalog.json is rewritten without the manifest by `dbt docs generate --no-compile`: its mtime is part of the key.
    // A catalog.json that cannot be stat'ed is left to the read below, which says why.
    const catalogStat = await fs.stat(path.resolve(this.dir, this.ref.catalog)).catch(() => undefined);
    const version = `${st.mtimeMs}:${catalogStat?.mtimeMs ?? 'none'}`;
    if (this.read && this.read.version === version) return this.read;
    let project: DbtProjectRead;
    try {
      project = await readDbtProject({
        projectDir: this.dir,
        manifest: this.ref.manifest,
        catalog: this.ref.catalog,
        piiTag: this.ref.piiTag,
        piiCategoryKey: this.ref.piiCategoryKey,
      });
    } catch (e) {
      throw new CatalogError(`dbt catalog ${this.dir}: ${(e as Error).message}`);
    }
    const projectFile = await readText(path.join(this.dir, 'dbt_project.yml'));
    const name = String((projectFile && parseDocument(projectFile).get('name')) || path.basename(this.dir));
    // Ids in a stable order: pages are slices of it.
    project.entities.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.read = { version, project, name };
    return this.read;
  }

  private async records(): Promise<Record<string, string>> {
    const t = await readText(this.recordFile);
    return t ? (JSON.parse(t) as Record<string, string>) : {};
  }

  async snapshot(): Promise<CatalogSnapshot> {
    const { project, name } = await this.project();
    return { name, ids: project.entities.map((e) => e.id) };
  }

  /** What the read found worth saying (manifest.ts, DbtProjectRead.notes): catalog.json missing or stale, nodes left out. */
  async notes(): Promise<string[]> {
    return [...(await this.project()).project.notes];
  }

  async getEntities(ids: string[]) {
    return this.entitiesOf((await this.project()).project, await this.records(), ids);
  }

  /**
   * Each entity's own fingerprint (SHA-256, hex) from what the adapter already read: the node's checksum, its
   * description, its columns' descriptions, tags, meta, types and constraints, and catalog.json's columns and
   * types (manifest.ts, DbtFingerprintFacts). Repairs this adapter wrote since the manifest was read are in it as
   * the manifest will state them once dbt parses the project again, so a rebuilt manifest holding exactly
   * ARGUS's writes gives the same fingerprint. No file is read per entity; ids not in the manifest are left out.
   */
  async fingerprints(ids: readonly string[]): Promise<Map<string, string>> {
    const { project } = await this.project();
    const out = new Map<string, string>();
    for (const id of ids) {
      const f = project.facts.get(id);
      if (f) out.set(id, createHash('sha256').update(stableJson(f)).digest('hex'));
    }
    return out;
  }

  /** A written repair in the facts, as the next manifest states it: the text, or the tag and its category. */
  private noteInFacts(f: DbtFingerprintFacts | undefined, r: RepairRequest): void {
    if (!f) return;
    const c = r.change;
    if ((c.kind === 'description' || c.kind === 'description_removal') && c.target === 'table') {
      f.description = c.kind === 'description' ? c.text : '';
      return;
    }
    if (c.kind === 'lineage_flag') return;
    const name = (c.kind === 'pii_tag' ? c.column : (c.column ?? '')).toLowerCase();
    const col = (f.columns[name] ??= columnFacts(undefined));
    if (c.kind === 'description') col.description = c.text;
    else if (c.kind === 'description_removal') col.description = '';
    else {
      col.tags = [...new Set([...col.tags, this.ref.piiTag])].sort();
      col.meta = { ...col.meta, [this.ref.piiCategoryKey]: c.category };
    }
    // Keys in order, as a fresh read builds them.
    f.columns = Object.fromEntries(Object.entries(f.columns).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  }

  /**
   * The entities for `ids`, descriptions ARGUS wrote (and nobody changed since) marked as ARGUS's, and PII tags it
   * wrote (same category) as ARGUS holds them: a rebuilt manifest then reads as the entity did right after the write.
   */
  private entitiesOf(project: DbtProjectRead, mine: Record<string, string>, ids: string[]) {
    const byId = new Map(project.entities.map((e) => [e.id, e]));
    const entities: CatalogEntity[] = [];
    const invalid: { id: string; message: string }[] = [];
    for (const id of ids) {
      const e = byId.get(id);
      if (!e) {
        invalid.push({ id, message: `entity "${id}" is not in the dbt manifest` });
        continue;
      }
      const loc = project.locations.get(id)!;
      if (e.description && mine[recordKey(loc, '')] === e.description && !loc.docBlocks.node)
        e.description_source = 'argus';
      for (const c of e.columns)
        if (c.description && mine[recordKey(loc, c.name)] === c.description && !loc.docBlocks.columns.includes(c.name))
          c.description_source = 'argus';
      for (const c of e.columns)
        c.tags = c.tags.map((t) =>
          t.source === 'human' ? (recordedTag(mine[tagRecordKey(loc, c.name)], t.category) ?? t) : t,
        );
      entities.push(e);
    }
    return { entities, invalid };
  }

  async applyRepairs(
    batch: RepairRequest[],
    opts: { overwriteHumanText: boolean; beforeCommit?: (outcomes: RepairOutcome[]) => Promise<void> },
  ): Promise<RepairOutcome[]> {
    const { project } = await this.project();
    const records = await this.records();
    const { entities } = this.entitiesOf(project, records, [...new Set(batch.map((r) => r.entityId))]);
    const byId = new Map(entities.map((e) => [e.id, e]));
    const texts = new Map<string, string | null>();
    const textOf = async (file: string) => {
      if (!texts.has(file)) texts.set(file, await readText(path.join(this.dir, file)));
      return texts.get(file)!;
    };
    const outcomes: RepairOutcome[] = [];
    const applied: { entity: CatalogEntity; r: RepairRequest }[] = [];
    for (const r of batch) {
      const e = byId.get(r.entityId);
      const loc = project.locations.get(r.entityId);
      if (!e || !loc) {
        outcomes.push({ proposalId: r.proposalId, status: 'conflict', note: 'node no longer in the dbt manifest' });
        continue;
      }
      try {
        const o = await this.applyOne(r, e, loc, await textOf(loc.writePath), opts.overwriteHumanText);
        outcomes.push(o.outcome);
        if (o.text !== undefined) texts.set(loc.writePath, o.text);
        if (o.outcome.status === 'written') {
          applied.push({ entity: e, r });
          if (r.change.kind === 'description')
            records[recordKey(loc, r.change.target === 'table' ? '' : (r.change.column ?? ''))] = r.change.text;
          else if (r.change.kind === 'pii_tag') {
            const tag: PiiTag = {
              kind: 'pii',
              category: r.change.category,
              confidence: r.change.confidence,
              explanation: r.change.explanation,
              source: 'argus',
              proposalId: r.proposalId,
            };
            records[tagRecordKey(loc, r.change.column)] = JSON.stringify(tag);
          }
        }
      } catch (err) {
        outcomes.push({
          proposalId: r.proposalId,
          status: 'failed',
          note: `${loc.writePath}: ${(err as Error).message}`,
        });
      }
    }
    await opts.beforeCommit?.(outcomes);
    // Files one by one (a dbt project has no transaction): the write-ahead intent above knows every edit, so a
    // retry after a crash between two files finds each edit landed or not.
    const changed = new Set(
      outcomes.flatMap((o, i) =>
        o.status === 'written' && !o.landedEarlier ? [project.locations.get(batch[i]!.entityId)!.writePath] : [],
      ),
    );
    for (const file of changed) await writeText(path.join(this.dir, file), texts.get(file) ?? null);
    if (changed.size) await writeText(this.recordFile, JSON.stringify(records));
    // The manifest is only rebuilt by dbt; keep what this worker knows current (the figures after the write read
    // it), with the same change the file catalog makes to its entities.
    for (const { entity, r } of applied) {
      applyChange(entity, r.change, r.proposalId, true);
      this.noteInFacts(project.facts.get(entity.id), r);
    }
    return outcomes;
  }

  private async applyOne(
    r: RepairRequest,
    e: CatalogEntity,
    loc: DbtEntityLocation,
    text: string | null,
    overwrite: boolean,
  ): Promise<{ outcome: RepairOutcome; text?: string | null }> {
    const id = r.proposalId;
    const c = r.change;
    if (!loc.writable)
      return {
        outcome: {
          proposalId: id,
          status: 'failed',
          note: `${loc.uniqueId} belongs to an installed package; not edited`,
        },
      };
    if (c.kind === 'lineage_flag')
      return {
        outcome: {
          proposalId: id,
          // Not a failure: the finding stands in the report, there is just nothing ARGUS can write for it.
          status: 'conflict',
          note: "a dbt node's lineage is its ref() and source() calls; ARGUS does not edit SQL",
        },
      };
    let edit: YamlEditResult;
    let before: DbtBefore;
    let after: unknown;
    if (c.kind === 'description' || c.kind === 'description_removal') {
      const column = c.target === 'table' ? undefined : c.column;
      const holder = column === undefined ? e : e.columns.find((x) => x.name === column);
      if (!holder)
        return { outcome: { proposalId: id, status: 'conflict', note: `column ${column ?? '?'} no longer exists` } };
      const docBlock = column === undefined ? loc.docBlocks.node : loc.docBlocks.columns.includes(column);
      if (c.kind === 'description_removal') {
        if (!holder.description?.trim()) {
          if (r.landed) return { outcome: { proposalId: id, status: 'written', ...r.landed, landedEarlier: true } };
          return { outcome: { proposalId: id, status: 'already', note: 'description already removed' } };
        }
        if (docBlock || holder.description !== c.text || holder.description_source !== 'argus')
          return {
            outcome: {
              proposalId: id,
              status: 'conflict',
              note: "the description is no longer ARGUS's text the removal was proposed for",
            },
          };
        // dbt reads an empty description as none: the key stays, so undo puts the text back where it was.
        edit = setDescription(text, loc.yamlNode, column, '');
        after = { description: null };
        if (!edit.changed) {
          if (r.landed) return { outcome: { proposalId: id, status: 'written', ...r.landed, landedEarlier: true } };
          return { outcome: { proposalId: id, status: 'already', note: 'description already removed from the YAML' } };
        }
        before = { description: holder.description, file: loc.writePath, undo: edit.undo };
      } else {
        edit = setDescription(text, loc.yamlNode, column, c.text);
        after = { description: c.text };
        if (!edit.changed) {
          // Already in the file: an earlier attempt of this run wrote it (its intent says so), or it was there.
          if (r.landed) return { outcome: { proposalId: id, status: 'written', ...r.landed, landedEarlier: true } };
          return { outcome: { proposalId: id, status: 'already', note: 'description already in the YAML' } };
        }
        const human = docBlock || (Boolean(holder.description?.trim()) && holder.description_source !== 'argus');
        if (human && (docBlock || !overwrite))
          return {
            outcome: {
              proposalId: id,
              status: 'kept_human',
              note: docBlock
                ? 'the description is a doc block a person wrote; not overwritten'
                : 'a person wrote this description; not overwritten (overwriteHumanText is off)',
            },
          };
        before = { description: holder.description ?? null, file: loc.writePath, undo: edit.undo };
      }
    } else {
      const col = e.columns.find((x) => x.name === c.column);
      if (!col) return { outcome: { proposalId: id, status: 'conflict', note: `column ${c.column} no longer exists` } };
      edit = addPiiTag(text, loc.yamlNode, c.column, c.category, {
        tag: this.ref.piiTag,
        categoryKey: this.ref.piiCategoryKey,
      });
      after = { tag: this.ref.piiTag, category: c.category };
      if (!edit.changed) {
        if (r.landed) return { outcome: { proposalId: id, status: 'written', ...r.landed, landedEarlier: true } };
        return { outcome: { proposalId: id, status: 'already', note: 'tag already in the YAML' } };
      }
      const existing = col.tags.find((t) => t.kind === 'pii');
      if (existing)
        return { outcome: { proposalId: id, status: 'already', note: `column already tagged ${existing.category}` } };
      before = { file: loc.writePath, undo: edit.undo };
    }
    return { outcome: { proposalId: id, status: 'written', before, after, landedEarlier: false }, text: edit.text };
  }

  async revertRepairs(batch: RevertRequest[]): Promise<RevertOutcome[]> {
    const texts = new Map<string, string | null>();
    const touched = new Set<string>();
    const out: RevertOutcome[] = [];
    for (const w of batch) {
      const before = w.before as DbtBefore | null;
      if (!before?.file || !before.undo) {
        out.push({ proposalId: w.proposalId, status: 'conflict', note: 'no undo record for this write' });
        continue;
      }
      const file = path.join(this.dir, before.file);
      if (!texts.has(file)) texts.set(file, await readText(file));
      try {
        const reverted = undoYamlEdit(texts.get(file)!, before.undo);
        texts.set(file, reverted);
        touched.add(file);
        out.push({ proposalId: w.proposalId, status: 'reverted', note: 'YAML restored' });
      } catch (err) {
        if (!(err instanceof YamlEditError)) throw err;
        // An intent whose edit never reached the file, or an edit someone changed since.
        out.push({
          proposalId: w.proposalId,
          status: w.unconfirmed ? 'not_landed' : 'conflict',
          note: w.unconfirmed ? 'the edit never reached the YAML' : err.message,
        });
      }
    }
    for (const file of touched) await writeText(file, texts.get(file) ?? null);
    return out;
  }

  /**
   * Up to `rows` (at most 100) values of each column, read by one `dbt show --inline` of the node's `ref()` or
   * `source()` in the project folder, with the profile and target dbt resolves there (sample-values.ts: no log file,
   * a temporary target folder, two time limits). Text as the warehouse casts it, cut at 512 characters; the first
   * rows the warehouse returns. Raises CatalogError for an entity or column not in the manifest or a read that
   * fails, in words that never quote dbt or the database.
   */
  async sampleColumnValues(entityId: string, columns: string[], rows: number): Promise<Map<string, (string | null)[]>> {
    const limit = Number.isFinite(rows) ? Math.max(0, Math.min(SAMPLE_MAX_ROWS, Math.floor(rows))) : 0;
    const wanted = [...new Set(columns)];
    const { project } = await this.project();
    const entity = project.entities.find((e) => e.id === entityId);
    const loc = project.locations.get(entityId);
    if (!entity || !loc)
      throw new CatalogError(`dbt catalog ${this.dir}: no model, seed, snapshot or source ${entityId} to sample`);
    const byName = new Map(entity.columns.map((c) => [c.name, c]));
    const unknown = wanted.filter((c) => !byName.has(c));
    if (unknown.length)
      throw new CatalogError(
        `dbt catalog ${this.dir}: ${entityId} has no column ${unknown.map((u) => JSON.stringify(u)).join(', ')} to sample`,
      );
    const out = new Map<string, (string | null)[]>(wanted.map((c) => [c, []]));
    // A column catalog.json does not list for a relation it lists is not in the warehouse (declared in YAML only):
    // it gets no values, and the table's other columns are still read.
    const read = wanted.filter((c) => loc.storedColumns === undefined || loc.storedColumns[c] !== undefined);
    if (limit === 0 || read.length === 0) return out;
    const sql = sampleQuery(
      loc.relation,
      read.map((c) => {
        const stored = loc.storedColumns?.[c];
        return { name: stored ?? c, stored: stored !== undefined, type: byName.get(c)!.type };
      }),
    );
    const env = this.options.env ?? process.env;
    const run = {
      executable: env.ARGUS_DBT || 'dbt',
      projectDir: this.dir,
      partialParse: path.join(path.dirname(path.resolve(this.dir, this.ref.manifest)), 'partial_parse.msgpack'),
      env,
      limits: this.options.sampleLimits ?? DEFAULT_SAMPLE_LIMITS,
    };
    const show = this.sampling.then(() => dbtShow(run, sql, limit, read.length));
    this.sampling = show.catch(() => undefined);
    let values: (string | null)[][];
    try {
      values = await show;
    } catch (err) {
      if (!(err instanceof DbtSampleError)) throw err;
      throw new CatalogError(`dbt catalog ${this.dir}: sampling ${entityId}: ${err.message}`);
    }
    for (const row of values) read.forEach((c, i) => out.get(c)!.push(row[i] ?? null));
    return out;
  }
}
