import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { classifyColumn, type ColumnCategory } from '../judgment/pii/classifier';
import { piiShapeOf } from '../judgment/pii/shape';
import type { TableReading } from '../domain/proposal';
import { convertPublicSchema, PublicSchemaFormatError, type PiiLabel } from './public-schema';
import { runScript } from './run-script';

/**
 * `npm run --silent eval:pii -- <folder> [--json]`: runs the no-model PII classifier over every *.json
 * public-schema file in a folder and scores it against the labels (non-ambiguous labelled columns only).
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
    const counts: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
    let columnCount = 0;
    for (const entity of catalog.entities) {
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
    files.push({
      file: name,
      database: catalog.name,
      labelled: labels.size > 0,
      columns: columnCount,
      scored: scoredCount,
      ...counts,
      precision: scoredCount > 0 ? precisionOf(counts) : null,
      recall: scoredCount > 0 ? recallOf(counts) : null,
    });
  }
  const scored = total.tp + total.fp + total.fn + total.tn;
  return {
    folder: dir,
    precision: scored > 0 ? precisionOf(total) : null,
    recall: scored > 0 ? recallOf(total) : null,
    scored,
    ...total,
    files,
    columns,
  };
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
    .description('Score the no-model PII classifier on a folder of labelled public-schema JSON files')
    .argument('<folder>', 'folder holding *.json files in the public-schemas format')
    .option('--json', 'print one JSON object on stdout')
    .option('--steward', "also: precision left after a steward decides each shape's first proposal (stewardMeasure)")
    .action((folder: string, opts: { json?: boolean; steward?: boolean }) => {
      try {
        const result = evaluatePiiFolder(folder);
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
          process.stdout.write(
            `${JSON.stringify({ precision, recall, scored, tp, fp, fn, tn, files, columns }, null, 2)}\n`,
          );
        } else {
          process.stdout.write(`${renderEvaluationText(result)}\n`);
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
