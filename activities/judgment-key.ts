import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { digest64, stableJson } from '../domain/digest';
import { projectRoot } from './paths';
import type { JudgmentSettings } from '../domain/sweep';
import type { AgentName } from '../domain/proposal';

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

/** Each agent's one-letter mark in a judgment key. */
const AGENT_MARKS: Record<AgentName, string> = {
  'description-drafter': 'd',
  'lineage-checker': 'l',
  'pii-classifier': 'p',
};

/** What one agent's decisions rest on besides the rules and the settings every agent shares. */
function agentSettings(agent: string, s: JudgmentSettings): Record<string, unknown> {
  if (agent === 'description-drafter') return { overwriteHumanText: s.overwriteHumanText };
  if (agent === 'pii-classifier') return { sampleRows: s.sampleRows ?? null };
  return {};
}

/**
 * The sweep's judgment key: `<rules version>-<digest of the shared settings>~<one part per agent>`. The shared
 * settings (agent backend, review mode, models, human-review kinds) decide every outcome; an agent's part holds the
 * settings only its decisions rest on (the drafter's `overwriteHumanText`, the PII classifier's `sampleRows`), and
 * an agent not run has none. agentsToRejudge reads two keys apart.
 */
export function judgmentKey(s: JudgmentSettings, rules: string = workerRulesVersion()): string {
  const models = s.agentBackend === 'model' || s.review === 'model' ? s.models : [];
  const shared = digest64(
    stableJson({
      agentBackend: s.agentBackend,
      review: s.review,
      models,
      humanReviewKinds: s.humanReviewKinds ? [...s.humanReviewKinds].sort() : null,
    }),
  );
  const agents = [...new Set(s.agents)]
    .sort()
    .map((a) => `${AGENT_MARKS[a as AgentName] ?? a}${digest64(stableJson(agentSettings(a, s))).slice(0, 8)}`);
  return `${rules}-${shared}~${agents.join('.')}`;
}

/**
 * What must judge again an entity unchanged since it was judged under the key `before`, now that the key is `now`:
 * nothing when they are equal; `all` when the rules or a shared setting changed (or `before` is of an older form);
 * else the agents whose own settings changed or that were not run then (none when an agent was only dropped).
 */
export function agentsToRejudge(before: string, now: string): 'all' | AgentName[] {
  if (before === now) return [];
  const [base, parts] = before.split('~');
  const [nowBase, nowParts] = now.split('~');
  if (parts === undefined || nowParts === undefined || base !== nowBase) return 'all';
  const had = new Set(parts.split('.'));
  const out: AgentName[] = [];
  for (const [agent, mark] of Object.entries(AGENT_MARKS) as [AgentName, string][]) {
    const part = nowParts.split('.').find((p) => p.startsWith(mark));
    if (part !== undefined && !had.has(part)) out.push(agent);
  }
  return out;
}
