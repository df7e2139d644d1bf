import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { CatalogError } from '../catalog/adapter';
import { DbtCatalogAdapter } from '../catalog/dbt/adapter';
import type { CatalogEntity } from '../domain/catalog';
import { CatalogRef } from '../domain/sweep';
import { classifyColumn, type ColumnCategory } from '../judgment/pii/classifier';
import { piiShapeOf } from '../judgment/pii/shape';
import type { TableReading } from '../domain/proposal';
import { convertPublicSchema, PublicSchemaFormatError, type PiiLabel } from './public-schema';
import { runScript } from './run-script';

/**
 * `npm run --silent eval:pii -- <folder> [--json]`: runs the no-model PII classifier over every *.json
 * public-schema file in a folder and scores it against the labels (non-ambiguous labelled columns only).
 * A folder holding dbt_project.yml is a dbt project instead: read as a sweep reads it (the dbt adapter, types from
 * its target/catalog.json, or none with `--without-catalog`) and scored against its DBT_LABELS_FILE.
 */

const EXIT = { ok: 0, usage: 2 } as const;

export interface EvaluatedColumn {
  file: string;
  table: string;
  column: string;
  pii: boolean;
  category: ColumnCategory;
  confidence: number;
  explanation: string;
  /** Whose record the classifier read the table's rows as. */
  reading: TableReading;
  /** The ground-truth label, null when the file or column carries none. */
  label: PiiLabel | null;
  /** Counted in precision/recall: labelled and not ambiguous. */
  scored: boolean;
}

export interface Counts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

export interface EvaluatedFile extends Counts {
  file: string;
  database: string;
  labelled: boolean;
  columns: number;
  scored: number;
  /** null when nothing in the file was scored. */
  precision: number | null;
  recall: number | null;
}

export interface PiiEvaluation extends Counts {
  folder: string;
  /** Over every scored column of every labelled file; null when nothing was scored. */
  precision: number | null;
  recall: number | null;
  scored: number;
  files: EvaluatedFile[];
  columns: EvaluatedColumn[];
}

/** A missing folder, an empty folder or a file that is not JSON / not in the public-schema format. */
export class EvalInputError extends Error {
  override readonly name = 'EvalInputError';
}

// With nothing predicted positive there is no false claim (precision 1); with nothing to find nothing was missed.
function precisionOf(c: Counts): number {
  return c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp);
}
function recallOf(c: Counts): number {
  return c.tp + c.fn === 0 ? 1 : c.tp / (c.tp + c.fn);
}

function add(into: Counts, predicted: boolean, actual: boolean): void {
  if (predicted && actual) into.tp += 1;
  else if (predicted) into.fp += 1;
  else if (actual) into.fn += 1;
  else into.tn += 1;
}

/**
 * Classifies every column of every *.json file in `folder` (sorted by name) and scores the labelled ones.
 * Throws EvalInputError on a missing or empty folder, unreadable JSON or a file in the wrong format.
 */
export function evaluatePiiFolder(folder: string): PiiEvaluation {
  const dir = resolve(folder);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new EvalInputError(`folder not found: ${folder}`);
  // Its labels file alone would score without the descriptions, keys and types the project gives its columns.
  if (existsSync(join(dir, 'dbt_project.yml')))
    throw new EvalInputError(`${folder} is a dbt project: score it with evaluateDbtProject (eval:pii does)`);
  const names = readdirSync(dir)
    .filter((n) => n.toLowerCase().endsWith('.json'))
    .sort();
  if (names.length === 0) throw new EvalInputError(`no *.json files in ${folder}`);

  const total: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  const files: EvaluatedFile[] = [];
  const columns: EvaluatedColumn[] = [];
  for (const name of names) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    } catch (e) {
      throw new EvalInputError(`${name}: not readable JSON (${e instanceof Error ? e.message : String(e)})`);
    }
    let converted;
    try {
      converted = convertPublicSchema(json, name);
    } catch (e) {
      if (e instanceof PublicSchemaFormatError) throw new EvalInputError(e.message);
      throw e;
    }
    const { catalog, labels } = converted;
    scoreFile({ file: name, database: catalog.name, entities: catalog.entities, labels }, total, files, columns);
  }
  return summarise(dir, total, files, columns);
}

/** One labelled file's entities, classified as a sweep classifies them, and its labels keyed `${entity}.${column}`. */
export interface LabelledEntities {
  file: string;
  database: string;
  entities: readonly CatalogEntity[];
  labels: ReadonlyMap<string, PiiLabel>;
}

/**
 * Classifies every column of one file's entities and scores the labelled ones, adding to `total`, `files` and
 * `columns`: the one place a verdict meets its label, whatever read the entities (a public-schema file, a dbt project).
 */
export function scoreFile(
  input: LabelledEntities,
  total: Counts,
  files: EvaluatedFile[],
  columns: EvaluatedColumn[],
): EvaluatedFile {
  const { file: name, labels } = input;
  const counts: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  let columnCount = 0;
  for (const entity of input.entities) {
    for (const column of entity.columns) {
      columnCount += 1;
      const result = classifyColumn(column, entity);
      const label = labels.get(`${entity.id}.${column.name}`) ?? null;
      const scored = label !== null && !label.ambiguous;
      if (scored) {
        add(counts, result.pii, label.pii);
        add(total, result.pii, label.pii);
      }
      columns.push({
        file: name,
        table: entity.id,
        column: column.name,
        pii: result.pii,
        category: result.category,
        confidence: result.confidence,
        explanation: result.explanation,
        reading: result.reading,
        label,
        scored,
      });
    }
  }
  const scoredCount = counts.tp + counts.fp + counts.fn + counts.tn;
  const evaluated: EvaluatedFile = {
    file: name,
    database: input.database,
    labelled: labels.size > 0,
    columns: columnCount,
    scored: scoredCount,
    ...counts,
    precision: scoredCount > 0 ? precisionOf(counts) : null,
    recall: scoredCount > 0 ? recallOf(counts) : null,
  };
  files.push(evaluated);
  return evaluated;
}

/** The folder's figures over every scored column of every file. */
export function summarise(
  folder: string,
  total: Counts,
  files: EvaluatedFile[],
  columns: EvaluatedColumn[],
): PiiEvaluation {
  const scored = total.tp + total.fp + total.fn + total.tn;
  return {
    folder,
    precision: scored > 0 ? precisionOf(total) : null,
    recall: scored > 0 ? recallOf(total) : null,
    scored,
    ...total,
    files,
    columns,
  };
}

/** A dbt hold-out's labels: a public-schema file (tables named by entity id) at the project's root. */
export const DBT_LABELS_FILE = 'pii-labels.json';

/** What reading a dbt project through the adapter found, beside the figures. */
export interface DbtProjectEvaluation extends PiiEvaluation {
  /** The entities as the adapter read them (their columns' types included): what was classified. */
  entities: CatalogEntity[];
  project: {
    /** Whether column types came from catalog.json (false: every type the YAML does not declare is unknown). */
    typesKnown: boolean;
    /** The adapter's notes (catalog.json missing or stale, nodes left out), as a sweep's report gives them. */
    notes: string[];
    /** `entity.column` the project has and the labels lack: not scored. */
    unlabelled: string[];
    /** Labelled `entity.column` the adapter did not read (a node left out, a column it does not know). */
    absent: string[];
  };
}

/**
 * Reads a dbt project as a sweep does (DbtCatalogAdapter: target/manifest.json, and target/catalog.json for types
 * unless `withoutCatalog`), classifies every column and scores it against DBT_LABELS_FILE. Labels match columns by
 * name without regard to case, as the adapter matches catalog.json's. The project must have been built and documented
 * (`dbt build && dbt docs generate`); throws EvalInputError when it was not or its labels are unreadable.
 */
export async function evaluateDbtProject(
  projectDir: string,
  options: { withoutCatalog?: boolean } = {},
): Promise<DbtProjectEvaluation> {
  const dir = resolve(projectDir);
  if (!existsSync(join(dir, 'dbt_project.yml'))) throw new EvalInputError(`not a dbt project: ${projectDir}`);
  const labelsFile = join(dir, DBT_LABELS_FILE);
  let labelled;
  try {
    labelled = convertPublicSchema(JSON.parse(readFileSync(labelsFile, 'utf8')), DBT_LABELS_FILE);
  } catch (e) {
    throw new EvalInputError(`${labelsFile}: ${e instanceof Error ? e.message : String(e)}`);
  }
  // The adapter keeps its record of ARGUS's own writes here: none, for an evaluation. Without catalog.json: a path
  // inside that fresh folder, which nothing can have written.
  const state = mkdtempSync(join(tmpdir(), 'argus-eval-dbt-'));
  try {
    const ref = CatalogRef.parse({
      kind: 'dbt',
      projectDir: dir,
      ...(options.withoutCatalog ? { catalog: join(state, 'no-catalog.json') } : {}),
    });
    if (ref.kind !== 'dbt') throw new Error('unreachable: a dbt ref parsed as another kind');
    const adapter = new DbtCatalogAdapter(ref, state);
    let entities: CatalogEntity[];
    let notes: string[];
    try {
      const read = await adapter.getEntities((await adapter.snapshot()).ids);
      if (read.invalid.length > 0) throw new EvalInputError(`${projectDir}: ${read.invalid[0]!.message}`);
      entities = read.entities;
      notes = await adapter.notes();
    } catch (e) {
      if (e instanceof CatalogError)
        throw new EvalInputError(`${e.message} (a copy of the project, then \`dbt build && dbt docs generate\` in it)`);
      throw e;
    }
    const byLower = new Map([...labelled.labels].map(([k, v]) => [k.toLowerCase(), { key: k, label: v }]));
    const labels = new Map<string, PiiLabel>();
    const unlabelled: string[] = [];
    for (const e of entities)
      for (const c of e.columns) {
        const found = byLower.get(`${e.id}.${c.name}`.toLowerCase());
        if (!found) unlabelled.push(`${e.id}.${c.name}`);
        else {
          labels.set(`${e.id}.${c.name}`, found.label);
          byLower.delete(`${e.id}.${c.name}`.toLowerCase());
        }
      }
    const total: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
    const files: EvaluatedFile[] = [];
    const columns: EvaluatedColumn[] = [];
    scoreFile({ file: DBT_LABELS_FILE, database: labelled.catalog.name, entities, labels }, total, files, columns);
    return {
      ...summarise(dir, total, files, columns),
      entities,
      project: {
        typesKnown: !options.withoutCatalog && existsSync(resolve(dir, ref.catalog)),
        notes,
        unlabelled,
        absent: [...byLower.values()].map((v) => v.key),
      },
    };
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

/** The steward measure: a person decides the first proposal of each shape (judgment/pii/shape.ts) by its label. */
export interface StewardMeasure {
  /** Scored proposals (columns the classifier tags), before any decision. */
  proposals: number;
  precisionBefore: number | null;
  /** Proposals a steward decided: the first of each shape, per file (a decision never leaves its catalog). */
  decided: number;
  /** Proposals the gate rejected for a shape a steward rejected. */
  rejectedByShape: number;
  /** What is left for the catalog (or a further review): neither decided nor rejected by shape. */
  remaining: number;
  precisionRemaining: number | null;
  /** True PII tags the shape rejections took away (a steward's rejection spread to a column that is PII). */
  truePiiLost: number;
}

/**
 * Precision of the proposals left after a steward decides the first proposal of each shape in each file, by its
 * label, and the gate applies each rejection to the rest of that shape (as a sweep does). Scored columns only.
 */
export function stewardMeasure(e: PiiEvaluation): StewardMeasure {
  const proposed = e.columns.filter((c) => c.scored && c.pii);
  const decidedShape = new Map<string, boolean>();
  let tpBefore = 0;
  let decided = 0;
  let rejectedByShape = 0;
  let truePiiLost = 0;
  const left: EvaluatedColumn[] = [];
  for (const c of proposed) {
    if (c.label!.pii) tpBefore++;
    const key = `${c.file}\u0000${piiShapeOf({ column: c.column, category: c.category, reading: c.reading })}`;
    const approved = decidedShape.get(key);
    if (approved === undefined) {
      decidedShape.set(key, c.label!.pii);
      decided++;
    } else if (!approved) {
      rejectedByShape++;
      if (c.label!.pii) truePiiLost++;
    } else left.push(c);
  }
  const tpLeft = left.filter((c) => c.label!.pii).length;
  return {
    proposals: proposed.length,
    precisionBefore: proposed.length ? tpBefore / proposed.length : null,
    decided,
    rejectedByShape,
    remaining: left.length,
    precisionRemaining: left.length ? tpLeft / left.length : null,
    truePiiLost,
  };
}

const fmt = (x: number | null): string => (x === null ? '-' : x.toFixed(3));

function grid(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  '))
    .join('\n');
}

/** The readable report: per-file figures, the overall figures, then every misclassified scored column. */
export function renderEvaluationText(e: PiiEvaluation): string {
  const out: string[] = [];
  out.push(`PII classifier (no model) on ${e.folder}`);
  out.push('');
  out.push(
    grid([
      ['file', 'columns', 'scored', 'tp', 'fp', 'fn', 'precision', 'recall'],
      ...e.files.map((f) => [
        f.labelled ? f.file : `${f.file} (unlabelled)`,
        String(f.columns),
        String(f.scored),
        String(f.tp),
        String(f.fp),
        String(f.fn),
        fmt(f.precision),
        fmt(f.recall),
      ]),
      [
        'all',
        String(e.columns.length),
        String(e.scored),
        String(e.tp),
        String(e.fp),
        String(e.fn),
        fmt(e.precision),
        fmt(e.recall),
      ],
    ]),
  );
  const wrong = e.columns.filter((c) => c.scored && c.label !== null && c.label.pii !== c.pii);
  out.push('');
  if (wrong.length === 0) {
    out.push('No misclassified columns.');
  } else {
    out.push(`Misclassified (${wrong.length}):`);
    for (const c of wrong) {
      const kind = c.pii ? 'false positive' : 'false negative';
      out.push(
        `  ${kind}  ${c.file}  ${c.table}.${c.column}  said ${c.category} (${c.confidence}), label ${c.label?.category ?? '?'}, table read as ${c.reading}`,
      );
      out.push(`      ${c.explanation}`);
    }
  }
  return out.join('\n');
}

/** Runs the command; returns the exit code (0 ok, 2 on bad input). */
export async function main(argv: readonly string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command()
    .name('eval:pii')
    .description('Score the no-model PII classifier on a folder of labelled public-schema JSON files, or a dbt project')
    .argument(
      '<folder>',
      `folder holding *.json files in the public-schemas format, or a built dbt project (${DBT_LABELS_FILE})`,
    )
    .option('--json', 'print one JSON object on stdout')
    .option('--steward', "also: precision left after a steward decides each shape's first proposal (stewardMeasure)")
    .option('--without-catalog', 'a dbt project: read it without target/catalog.json, so column types are unknown')
    .action(async (folder: string, opts: { json?: boolean; steward?: boolean; withoutCatalog?: boolean }) => {
      try {
        const dbt = existsSync(join(resolve(folder), 'dbt_project.yml'));
        if (opts.withoutCatalog && !dbt) throw new EvalInputError('--without-catalog is for a dbt project');
        const result = dbt
          ? await evaluateDbtProject(folder, { withoutCatalog: opts.withoutCatalog === true })
          : evaluatePiiFolder(folder);
        const project = 'project' in result ? (result as DbtProjectEvaluation).project : undefined;
        if (opts.steward) {
          const m = stewardMeasure(result);
          process.stdout.write(
            opts.json
              ? `${JSON.stringify(m)}\n`
              : `${m.proposals} proposals, precision ${fmt(m.precisionBefore)}; a steward decides ${m.decided} (the ` +
                  `first of each shape), ${m.rejectedByShape} are rejected by shape (${m.truePiiLost} of them PII), ` +
                  `${m.remaining} remain at precision ${fmt(m.precisionRemaining)}\n`,
          );
          return;
        }
        if (opts.json) {
          const { precision, recall, scored, tp, fp, fn, tn, files } = result;
          const columns = result.columns.map((c) => ({
            file: c.file,
            table: c.table,
            column: c.column,
            pii: c.pii,
            category: c.category,
            confidence: c.confidence,
            explanation: c.explanation,
            reading: c.reading,
            label: c.label,
            scored: c.scored,
          }));
          const out = { precision, recall, scored, tp, fp, fn, tn, files, columns, ...(project ? { project } : {}) };
          process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        } else {
          const said = project
            ? [
                `dbt project, column types ${project.typesKnown ? 'from catalog.json' : 'unknown (no catalog.json)'}`,
                ...project.notes,
                ...(project.unlabelled.length ? [`unlabelled, not scored: ${project.unlabelled.join(', ')}`] : []),
                ...(project.absent.length ? [`labelled but not read: ${project.absent.join(', ')}`] : []),
              ].join('\n') + '\n\n'
            : '';
          process.stdout.write(`${said}${renderEvaluationText(result)}\n`);
        }
      } catch (e) {
        if (!(e instanceof EvalInputError)) throw e;
        process.stderr.write(`eval:pii: ${e.message}\n`);
        code = EXIT.usage;
      }
    });
  program.exitOverride();
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (e) {
    // Commander has already printed its usage message.
    const exitCode = (e as { exitCode?: number }).exitCode;
    return exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  return code;
}

if (require.main === module) runScript('eval:pii', main);
