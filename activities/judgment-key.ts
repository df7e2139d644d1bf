import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { digest64, stableJson } from '../domain/digest';
import { projectRoot } from './paths';
import type { JudgmentSettings } from '../domain/sweep';

export type { JudgmentSettings };

/**
 * The code whose change changes a decision: the rules (judgment/), the model prompts and the code that turns
 * answers into proposals and verdicts, and the wiring that feeds them evidence; and the schema that makes an entity
 * of a record (the memory keeps what judgment computed of a record with the record's digest). Relative to the
 * package root; the same layout holds in the sources and in dist/.
 */
const RULE_SOURCES = [
  'judgment',
  'domain/catalog',
  'llm/prompts',
  'activities/model',
  'activities/agent-activities',
  'activities/review-activities',
  'activities/neighbours',
  'activities/value-sampling',
];

function filesUnder(root: string, rel: string): string[] {
  const full = path.join(root, rel);
  for (const ext of ['.ts', '.js']) if (fs.existsSync(full + ext)) return [rel + ext];
  if (!fs.existsSync(full) || !fs.statSync(full).isDirectory()) return [];
  const out: string[] = [];
  for (const name of fs.readdirSync(full).sort()) {
    const child = path.join(rel, name);
    if (fs.statSync(path.join(root, child)).isDirectory()) out.push(...filesUnder(root, child));
    else if (/\.(ts|js)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.map')) out.push(child);
  }
  return out;
}

/**
 * A digest of the rule sources under `root`: it changes whenever judgment code changes, with nobody bumping a
 * number. When the sources cannot be found (an unusual install), a value of this process alone: memory is then
 * never trusted across workers or restarts rather than trusted wrongly.
 */
export function rulesVersion(root = projectRoot()): string {
  const files = RULE_SOURCES.flatMap((rel) => filesUnder(root, rel));
  if (files.length === 0) return `unknown-${randomUUID()}`;
  const h = createHash('sha256');
  for (const f of files)
    h.update(f.replace(/\.(ts|js)$/, ''))
      .update('\0')
      .update(fs.readFileSync(path.join(root, f)));
  return h.digest('hex').slice(0, 16);
}

let cached: string | undefined;
/** This worker's rules version, computed once. */
export function workerRulesVersion(): string {
  return (cached ??= rulesVersion());
}

/** The sweep's judgment key: rules version plus its settings. Memory under another key is not used. */
export function judgmentKey(s: JudgmentSettings, rules: string = workerRulesVersion()): string {
  const models = s.agentBackend === 'model' || s.review === 'model' ? s.models : [];
  return `${rules}-${digest64(
    stableJson({
      agentBackend: s.agentBackend,
      agents: [...s.agents].sort(),
      review: s.review,
      models,
      humanReviewKinds: s.humanReviewKinds ? [...s.humanReviewKinds].sort() : null,
      overwriteHumanText: s.overwriteHumanText,
      sampleRows: s.sampleRows ?? null,
    }),
  )}`;
}
