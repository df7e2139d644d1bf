import * as path from 'node:path';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { log, Context } from '@temporalio/activity';
import type { CatalogEntity } from '../domain/catalog';
import type { AgentName, EntityFailure, Outcome, Proposal, ProposalChange } from '../domain/proposal';
import type { CatalogRef, ReviewMode } from '../domain/sweep';
import type { SweepReport, ReportProposal, KindCounts, RetiredEndpoint } from '../domain/report';
import { proposalId } from '../domain/digest';
import type { CatalogAdapterFactory, RepairRequest } from '../catalog/adapter';
import { AuditLog, type AuditEntry } from './audit-log';
import { SweepLedger, type CatalogStats, type PageWrites, type WriteRecord } from './ledger';
import { auditFileFor, catalogContext } from './catalog-access';
import { faultPoint } from './fault-points';
import { draftDescriptions } from './agents/description-drafter';
import { proposePiiTags, looksLikePii } from './agents/pii-classifier';
import { checkLineage } from './agents/lineage-checker';
import { mechanicalReview } from './review/mechanical-gate';
import type { CatalogContext } from './agents/catalog-context';
import { writeFileAtomic } from './paths';

export interface ActivityDeps {
  stateDir: string;
  /** Opens the catalog a sweep input names (catalog/): activities never construct a catalog themselves. */
  catalogs: CatalogAdapterFactory;
}

/** What a no-model agent computes for one entity. */
type AgentFn = (entity: CatalogEntity, ctx: CatalogContext) => ProposalChange[];

const NO_MODEL_AGENTS: Record<AgentName, AgentFn> = {
  'description-drafter': (e, ctx) => draftDescriptions(e, ctx),
  'pii-classifier': (e) => proposePiiTags(e),
  'lineage-checker': (e, ctx) => checkLineage(e, ctx),
};

const EVIDENCE: Record<AgentName, (e: CatalogEntity, c: ProposalChange) => string[]> = {
  'description-drafter': (e, c) => [
    `schema: ${e.kind} ${e.id} with ${e.columns.length} columns`,
    ...(c.kind === 'description' && c.column
      ? [`column ${c.column}: ${e.columns.find((x) => x.name === c.column)?.type ?? '?'}`]
      : []),
    ...(e.upstream.length ? [`recorded upstream: ${e.upstream.slice(0, 8).join(', ')}`] : []),
  ],
  'pii-classifier': (e, c) => (c.kind === 'pii_tag' ? [`column ${c.column} of ${e.id}`, c.explanation] : []),
  'lineage-checker': (e, c) =>
    c.kind === 'lineage_flag'
      ? [`recorded upstream: ${e.upstream.join(', ') || '(none)'}`, `finding: ${c.finding} ${c.upstream}`]
      : [],
};

/** One line saying what a proposal would write. */
export function summarize(entityId: string, c: ProposalChange): string {
  switch (c.kind) {
    case 'description':
      return `describe ${c.target === 'table' ? entityId : `${entityId}.${c.column ?? '?'}`}: "${c.text.slice(0, 160)}"`;
    case 'pii_tag':
      return `tag ${entityId}.${c.column} as ${c.category} (${c.confidence.toFixed(2)}): ${c.explanation.slice(0, 120)}`;
    case 'lineage_flag':
      return c.finding === 'dangling_edge'
        ? `remove dangling edge ${entityId} ← ${c.upstream}`
        : `record edge ${entityId} ← ${c.upstream} (read by its SQL)`;
  }
}

export function catalogStats(entities: CatalogEntity[]): CatalogStats {
  let describable = 0;
  let described = 0;
  let piiLooking = 0;
  let tagged = 0;
  for (const e of entities) {
    describable += 1 + e.columns.length;
    if (e.description?.trim()) described++;
    for (const c of e.columns) {
      if (c.description?.trim()) described++;
      const isTagged = c.tags.some((t) => t.kind === 'pii');
      if (isTagged) tagged++;
      if (isTagged || (!e.pii_exceptions.includes(c.name) && looksLikePii(c, e))) piiLooking++;
    }
  }
  return { describable, described, piiLooking, tagged };
}

function emptyKinds(): Record<ProposalChange['kind'], KindCounts> {
  const z = (): KindCounts => ({ proposed: 0, approved: 0, rejected: 0, not_reviewed: 0, written: 0 });
  return { description: z(), pii_tag: z(), lineage_flag: z() };
}

/** Every activity ARGUS runs, built from its dependencies (the state folder). */
export function createSweepActivities(deps: ActivityDeps) {
  const ledgerFor = (key: string) => new SweepLedger(deps.stateDir, key);

  /** The sweep's metadata and its catalog, through the adapter factory the worker was built with. */
  async function catalogOf(ledger: SweepLedger) {
    const meta = await ledger.meta();
    return { meta, catalog: await deps.catalogs(meta.catalogRef) };
  }

  return {
    /** Resolve and open the catalog and start the sweep's ledger. Raises InvalidCatalog (non-retryable). */
    async openCatalog(input: {
      sweepId: string;
      ledgerKey: string;
      catalog: CatalogRef;
    }): Promise<{ catalogName: string; entityCount: number }> {
      const ledger = ledgerFor(input.ledgerKey);
      const catalog = await deps.catalogs(input.catalog);
      const snap = await catalog.snapshot();
      await ledger.writeMeta({
        sweepId: input.sweepId,
        ledgerKey: input.ledgerKey,
        catalogRef: input.catalog,
        catalogKey: catalog.identity.key,
        catalogLabel: catalog.identity.label,
        catalogName: snap.name,
        auditFile: auditFileFor(deps.stateDir, catalog.identity, snap.name),
        startedAt: new Date().toISOString(),
      });
      return { catalogName: snap.name, entityCount: snap.ids.length };
    },

    /** Read one page of entity ids; records that fail validation come back as per-entity failures. */
    async loadCatalogPage(input: {
      ledgerKey: string;
      pageIndex: number;
      pageSize: number;
    }): Promise<{ ids: string[]; failures: EntityFailure[] }> {
      const ledger = ledgerFor(input.ledgerKey);
      const { catalog } = await catalogOf(ledger);
      const snap = await catalog.snapshot();
      const slice = snap.ids.slice(input.pageIndex * input.pageSize, (input.pageIndex + 1) * input.pageSize);
      const { entities, invalid } = await catalog.getEntities(slice);
      const failures: EntityFailure[] = invalid.map((i) => ({
        entity: i.id,
        stage: 'load',
        category: 'invalid_entity',
        retryable: false,
        message: i.message,
      }));
      await ledger.writeFailures(input.pageIndex, 'load', failures);
      // Coverage before the sweep, page by page: each entity belongs to one page and only that page's write
      // touches it, so the sums are the catalog's figures without a pass over the whole catalog.
      await ledger.writeStats(input.pageIndex, 'before', catalogStats(entities));
      return { ids: entities.map((e) => e.id), failures };
    },

    /** Run one no-model agent over a page; proposals go to the ledger, the count to the history. */
    async runAgent(input: {
      ledgerKey: string;
      pageIndex: number;
      ids: string[];
      agent: AgentName;
    }): Promise<{ proposals: number; failures: EntityFailure[] }> {
      faultPoint('agent-start');
      const ledger = ledgerFor(input.ledgerKey);
      const { meta, catalog } = await catalogOf(ledger);
      const ctx = await catalogContext(catalog);
      const { entities } = await catalog.getEntities(input.ids);
      const fn = NO_MODEL_AGENTS[input.agent];
      const proposals: Proposal[] = [];
      const failures: EntityFailure[] = [];
      for (const e of entities) {
        try {
          for (const change of fn(e, ctx)) {
            proposals.push({
              id: proposalId(meta.catalogName, e.id, change),
              entityId: e.id,
              agent: input.agent,
              change,
              evidence: EVIDENCE[input.agent](e, change).map((s) => s.slice(0, 300)),
            });
          }
        } catch (err) {
          failures.push({
            entity: e.id,
            stage: input.agent,
            category: 'agent_error',
            retryable: false,
            message: String((err as Error).message ?? err).slice(0, 500),
          });
        }
      }
      await ledger.writeProposals(input.pageIndex, input.agent, proposals);
      await ledger.writeFailures(input.pageIndex, input.agent, failures);
      return { proposals: proposals.length, failures };
    },

    /**
     * The mechanical gate over a page's proposals. In mechanical mode its decision is final; in model mode
     * its rejections are final and what it approves is handed to the model (returned as `passed`).
     */
    async reviewPageMechanically(input: { ledgerKey: string; pageIndex: number; mode: ReviewMode }): Promise<{
      approved: number;
      rejected: number;
      passed: Record<string, string[]>;
    }> {
      const ledger = ledgerFor(input.ledgerKey);
      const { catalog } = await catalogOf(ledger);
      const ctx = await catalogContext(catalog);
      const proposals = await ledger.proposals(input.pageIndex);
      const { entities } = await catalog.getEntities([...new Set(proposals.map((p) => p.entityId))]);
      const byId = new Map(entities.map((e) => [e.id, e]));
      const outcomes: Outcome[] = [];
      const passed: Record<string, string[]> = {};
      let approved = 0;
      let rejected = 0;
      for (const p of proposals) {
        const r = mechanicalReview(p, byId.get(p.entityId), ctx);
        if (r.decision === 'rejected') {
          rejected++;
          outcomes.push({ proposalId: p.id, decision: 'rejected', reason: r.reason, reviewer: 'mechanical-gate' });
        } else if (input.mode === 'mechanical') {
          approved++;
          outcomes.push({ proposalId: p.id, decision: 'approved', reason: r.reason, reviewer: 'mechanical-gate' });
        } else {
          (passed[p.entityId] ??= []).push(p.id);
        }
      }
      await ledger.putOutcomes(input.pageIndex, 'gate', outcomes);
      return { approved, rejected, passed };
    },

    /** Approved proposals of the given kinds on a page: what the human review gate holds back. */
    async listForHumanReview(input: {
      ledgerKey: string;
      pageIndex: number;
      kinds: string[];
    }): Promise<
      { proposalId: string; entityId: string; kind: ProposalChange['kind']; summary: string; arbiterReason: string }[]
    > {
      const ledger = ledgerFor(input.ledgerKey);
      const outcomes = new Map((await ledger.outcomes(input.pageIndex)).map((o) => [o.proposalId, o]));
      return (await ledger.proposals(input.pageIndex))
        .filter((p) => input.kinds.includes(p.change.kind) && outcomes.get(p.id)?.decision === 'approved')
        .map((p) => ({
          proposalId: p.id,
          entityId: p.entityId,
          kind: p.change.kind,
          summary: summarize(p.entityId, p.change),
          arbiterReason: outcomes.get(p.id)?.reason ?? '',
        }));
    },

    /** Record outcomes decided in the workflow (not_reviewed after the breaker, human decisions). */
    async recordOutcomes(input: {
      ledgerKey: string;
      pageIndex: number;
      tag: 'not-reviewed' | 'human';
      outcomes: Outcome[];
    }): Promise<number> {
      await ledgerFor(input.ledgerKey).putOutcomes(input.pageIndex, input.tag, input.outcomes);
      return input.outcomes.length;
    },

    /**
     * Write a page's approved repairs, once. Idempotent per proposal id (the audit log's applied index plus
     * content checks), atomic per page, never overwrites a person's text unless asked. Unreviewed and
     * rejected proposals are never written.
     */
    async applyApprovedRepairs(input: {
      ledgerKey: string;
      sweepId: string;
      pageIndex: number;
      /** The page's entity ids: their figures after the write go to the ledger. */
      ids: string[];
      overwriteHumanText: boolean;
      dryRun: boolean;
    }): Promise<{ written: number; already: number; keptHuman: number }> {
      const ledger = ledgerFor(input.ledgerKey);
      const { meta, catalog } = await catalogOf(ledger);
      const recordAfter = async () =>
        ledger.writeStats(input.pageIndex, 'after', catalogStats((await catalog.getEntities(input.ids)).entities));
      const done = await ledger.writes(input.pageIndex);
      if (done) {
        await recordAfter();
        return { written: done.written.length, already: done.already.length, keptHuman: done.keptHuman.length };
      }
      const audit = new AuditLog(meta.auditFile);
      const proposals = await ledger.proposals(input.pageIndex);
      const outcomes = new Map((await ledger.outcomes(input.pageIndex)).map((o) => [o.proposalId, o]));
      const time = new Date().toISOString();
      const decisions: AuditEntry[] = [];
      for (const p of proposals) {
        const o = outcomes.get(p.id);
        decisions.push({
          type: 'decision',
          time,
          sweepId: input.sweepId,
          proposalId: p.id,
          entityId: p.entityId,
          change: p.change,
          evidence: p.evidence,
          outcome: o?.decision ?? 'not_reviewed',
          reason: o?.reason ?? 'no review outcome recorded',
          reviewer: o?.reviewer ?? 'none',
        });
      }
      const approved = proposals.filter((p) => outcomes.get(p.id)?.decision === 'approved');
      const w: PageWrites = { written: [], already: [], keptHuman: [], conflicts: [], notes: {} };
      const pageLine = (writes: number): AuditEntry => ({
        type: 'page',
        time,
        sweepId: input.sweepId,
        ledgerKey: input.ledgerKey,
        page: input.pageIndex,
        decisions: decisions.length,
        writes,
      });
      if (input.dryRun) {
        for (const p of approved) w.notes[p.id] = 'dry run: not written';
        if (!(await audit.pageLogged(input.ledgerKey, input.pageIndex)))
          await audit.append([...decisions, pageLine(0)]);
        await ledger.writeWrites(input.pageIndex, w);
        await recordAfter();
        return { written: 0, already: 0, keptHuman: 0 };
      }
      const applied = await audit.applied();
      // What an earlier attempt of this page was about to write: a crash after its catalog write and before
      // its audit append leaves those changes in the catalog with no audit line.
      const intended = new Map((await ledger.intent(input.pageIndex)).map((r) => [r.proposalId, r]));
      // Written by an earlier attempt of this very run and already in the audit log: counted, not logged again.
      let loggedBefore = 0;
      const batch: RepairRequest[] = [];
      for (const p of approved) {
        const by = applied.get(p.id);
        if (by && by.ledgerKey === input.ledgerKey) {
          w.written.push(p.id);
          loggedBefore++;
        } else if (by) {
          w.already.push(p.id);
          w.notes[p.id] = `already written by ${by.sweepId}`;
        } else {
          const prior = intended.get(p.id);
          batch.push({
            proposalId: p.id,
            entityId: p.entityId,
            change: p.change,
            ...(prior ? { landed: { before: prior.before, after: prior.after } } : {}),
          });
        }
      }
      const byId = new Map(approved.map((p) => [p.id, p]));
      const writes: WriteRecord[] = [];
      // The write records serialised once, for the intent and then the audit log (undefined: no commit ran).
      let writeLines: string[] | undefined;
      const results = await catalog.applyRepairs(batch, {
        overwriteHumanText: input.overwriteHumanText,
        sweepId: input.sweepId,
        // Write-ahead: the changes' audit lines are stored in the ledger before the catalog changes.
        beforeCommit: async (repaired) => {
          writes.length = 0;
          for (const o of repaired) {
            if (o.status !== 'written') continue;
            const p = byId.get(o.proposalId)!;
            // A change that landed in a crashed attempt keeps that attempt's record (its time and before/after).
            const prior = o.landedEarlier ? intended.get(o.proposalId) : undefined;
            writes.push(
              prior ?? {
                type: 'write',
                time,
                sweepId: input.sweepId,
                ledgerKey: input.ledgerKey,
                proposalId: p.id,
                entityId: p.entityId,
                change: p.change,
                reviewer: outcomes.get(p.id)?.reviewer ?? 'unknown',
                before: o.before,
                after: o.after,
              },
            );
          }
          writeLines = writes.map((r) => JSON.stringify(r));
          if (writeLines.length) await ledger.writeIntent(input.pageIndex, writeLines);
        },
      });
      for (const o of results) {
        if (o.status === 'written') w.written.push(o.proposalId);
        else if (o.status === 'already') w.already.push(o.proposalId);
        else if (o.status === 'kept_human') w.keptHuman.push(o.proposalId);
        else if (o.status === 'failed') (w.failed ??= []).push({ proposalId: o.proposalId, note: o.note });
        else w.conflicts.push({ proposalId: o.proposalId, note: o.note });
        if (o.status !== 'written') w.notes[o.proposalId] = o.note;
      }
      faultPoint('after-catalog-replace');
      // The catalog is written first, then its audit lines: a retry after a crash in between finds the
      // changes through the intent above and logs them; one after a partial append logs only what is missing.
      if (!(await audit.pageLogged(input.ledgerKey, input.pageIndex)))
        await audit.append([...decisions, ...(writeLines ?? writes), pageLine(writes.length + loggedBefore)]);
      await ledger.writeWrites(input.pageIndex, w);
      await recordAfter();
      if (w.written.length)
        log.info('repairs written', { sweepId: input.sweepId, page: input.pageIndex, written: w.written.length });
      return { written: w.written.length, already: w.already.length, keptHuman: w.keptHuman.length };
    },

    /** Build the report from the ledger and the catalog as it now is; saves it beside the ledger. */
    async finalizeSweep(input: {
      ledgerKey: string;
      sweepId: string;
      mode: ReviewMode;
      dryRun: boolean;
      requested: number;
      workflowFailures: EntityFailure[];
      workflowFailuresDropped: number;
      retired: RetiredEndpoint[];
      breakerTripped: boolean;
      executions: number;
      extraPartialReasons: string[];
      maxProposalsInReport?: number;
    }): Promise<SweepReport> {
      const ledger = ledgerFor(input.ledgerKey);
      const { meta } = await catalogOf(ledger);
      const byKind = emptyKinds();
      const outcomesCount = { approved: 0, rejected: 0, not_reviewed: 0 };
      const failures: EntityFailure[] = [...input.workflowFailures];
      let written = 0;
      let already = 0;
      let keptHuman = 0;
      let writesFailed = 0;
      let total = 0;
      // The report file holds every proposal; the workflow result (a Temporal payload) carries the first ones.
      const limit = input.maxProposalsInReport ?? 1000;
      const kept: ReportProposal[] = [];
      const spool = new ReportSpool(ledger.reportFile());
      const fs = await import('node:fs/promises');
      const before: CatalogStats = { describable: 0, described: 0, piiLooking: 0, tagged: 0 };
      const after: CatalogStats = { describable: 0, described: 0, piiLooking: 0, tagged: 0 };
      const add = (to: CatalogStats, s: CatalogStats | undefined) => {
        if (!s) return;
        to.describable += s.describable;
        to.described += s.described;
        to.piiLooking += s.piiLooking;
        to.tagged += s.tagged;
      };
      try {
        for (const n of await ledger.pageNumbers()) {
          Context.current().heartbeat(n);
          const pageBefore = await ledger.stats(n, 'before');
          add(before, pageBefore);
          // A page whose write never ran still holds what it held before.
          add(after, (await ledger.stats(n, 'after')) ?? pageBefore);
          const dir = path.join(ledger.dir, 'pages', String(n).padStart(6, '0'));
          for (const f of (await fs.readdir(dir)).filter((x) => x.startsWith('failures-'))) {
            failures.push(...(JSON.parse(await fs.readFile(path.join(dir, f), 'utf8')) as EntityFailure[]));
          }
          const proposals = await ledger.proposals(n);
          const outcomes = new Map((await ledger.outcomes(n)).map((o) => [o.proposalId, o]));
          const w = await ledger.writes(n);
          const writtenSet = new Set(w?.written ?? []);
          written += w?.written.length ?? 0;
          already += w?.already.length ?? 0;
          keptHuman += w?.keptHuman.length ?? 0;
          writesFailed += w?.failed?.length ?? 0;
          const pageRows: ReportProposal[] = [];
          for (const p of proposals) {
            total++;
            const o = outcomes.get(p.id);
            const decision = o?.decision ?? 'not_reviewed';
            const k = byKind[p.change.kind];
            k.proposed++;
            k[decision]++;
            outcomesCount[decision]++;
            if (writtenSet.has(p.id)) k.written++;
            const row: ReportProposal = {
              id: p.id,
              entityId: p.entityId,
              agent: p.agent,
              kind: p.change.kind,
              change: p.change,
              outcome: decision,
              reason: o?.reason ?? 'no review outcome recorded',
              reviewer: o?.reviewer ?? 'none',
              written: writtenSet.has(p.id),
              ...(w?.notes[p.id] ? { writeNote: w.notes[p.id] } : {}),
            };
            pageRows.push(row);
            if (kept.length < limit) kept.push(row);
          }
          await spool.add(pageRows);
        }
      } catch (e) {
        await spool.abort();
        throw e;
      }
      const failedEntities = new Set(failures.map((f) => f.entity));
      const processed = Math.max(0, input.requested - failedEntities.size);
      const partialReasons: string[] = [...input.extraPartialReasons];
      if (failedEntities.size > 0)
        partialReasons.push(`${failedEntities.size} of ${input.requested} entities failed (see failures)`);
      if (writesFailed > 0)
        partialReasons.push(
          `${writesFailed} approved repairs could not be written (each proposal's writeNote says why)`,
        );
      if (outcomesCount.not_reviewed > 0)
        partialReasons.push(`${outcomesCount.not_reviewed} proposals were not reviewed and were not written`);
      if (input.breakerTripped) {
        const why = input.retired.map(
          (r) =>
            `${r.endpointId}: ${r.reason}${r.providerMessage ? ` (provider said: ${r.providerMessage.slice(0, 300)})` : ''}`,
        );
        partialReasons.push(`model budget exhausted on every endpoint: ${why.join('; ')}`);
      }
      const ratio = (a: number, b: number) => (b === 0 ? 1 : Math.round((a / b) * 10000) / 10000);
      const report: SweepReport = {
        reportVersion: 1,
        sweepId: input.sweepId,
        catalog: meta.catalogName,
        mode: input.mode,
        dryRun: input.dryRun,
        startedAt: meta.startedAt,
        finishedAt: new Date().toISOString(),
        partial: partialReasons.length > 0,
        partialReasons,
        // Early in the result, so a person reading it (the Web UI shows the result whole) finds the full report.
        reportFile: ledger.reportFile(),
        entities: { requested: input.requested, processed, failed: failedEntities.size },
        outcomes: outcomesCount,
        byKind,
        written,
        alreadyApplied: already,
        keptHumanText: keptHuman,
        writesFailed,
        coverage: {
          descriptionsBefore: ratio(before.described, before.describable),
          descriptionsAfter: ratio(after.described, after.describable),
          describedBefore: before.described,
          describedAfter: after.described,
          describable: after.describable,
        },
        piiGovernance: {
          tagged: after.tagged,
          piiLooking: after.piiLooking,
          ratio: ratio(after.tagged, after.piiLooking),
          taggedBefore: before.tagged,
        },
        failures: failures.slice(0, 500),
        failuresTruncated: Math.max(0, failures.length - 500) + input.workflowFailuresDropped,
        endpoints: { retired: input.retired, breakerTripped: input.breakerTripped },
        proposals: kept,
        proposalsTruncated: Math.max(0, total - limit),
        executions: input.executions,
      };
      await spool.finish(report);
      return report;
    },
  };
}

export type SweepActivities = ReturnType<typeof createSweepActivities>;

/**
 * The report file, written page by page: up to 5,000 proposals are held in memory and the report comes out
 * indented for people; past that every proposal goes to a spool file as the pages are read, so a report of
 * ~76,000 proposals never sits in memory whole, and the report is compact with the proposals last.
 */
const SMALL_REPORT = 5000;

class ReportSpool {
  private held: ReportProposal[] = [];
  private count = 0;
  private spool: { file: string; fh: FileHandle } | undefined;
  constructor(private readonly file: string) {}

  async add(rows: ReportProposal[]): Promise<void> {
    if (rows.length === 0) return;
    if (!this.spool && this.held.length + rows.length <= SMALL_REPORT) {
      this.held.push(...rows);
      return;
    }
    if (!this.spool) {
      await fsp.mkdir(path.dirname(this.file), { recursive: true });
      const file = `${this.file}.${process.pid}.${Math.random().toString(36).slice(2)}.proposals.tmp`;
      this.spool = { file, fh: await fsp.open(file, 'w') };
      rows = [...this.held, ...rows];
      this.held = [];
    }
    await this.spool.fh.writeFile(rows.map((r) => (this.count++ === 0 ? '' : ',') + JSON.stringify(r)).join(''));
  }

  async abort(): Promise<void> {
    if (!this.spool) return;
    await this.spool.fh.close().catch(() => undefined);
    await fsp.rm(this.spool.file, { force: true });
  }

  /** Write the report file atomically: the report's fields with every spooled proposal. */
  async finish(report: SweepReport): Promise<void> {
    const whole = { ...report, proposalsTruncated: 0 };
    if (!this.spool) {
      await writeFileAtomic(this.file, JSON.stringify({ ...whole, proposals: this.held }, null, 2));
      return;
    }
    const spool = this.spool;
    await spool.fh.close();
    try {
      const { proposals: _kept, ...rest } = whole;
      void _kept;
      const tmp = `${this.file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      const out = await fsp.open(tmp, 'w');
      try {
        const head = JSON.stringify(rest);
        await out.writeFile(`${head.slice(0, -1)},"proposals":[`);
        const src = await fsp.open(spool.file, 'r');
        try {
          const buf = Buffer.alloc(1 << 20);
          for (;;) {
            const { bytesRead } = await src.read(buf, 0, buf.length, null);
            if (bytesRead === 0) break;
            await out.writeFile(buf.subarray(0, bytesRead));
          }
        } finally {
          await src.close();
        }
        await out.writeFile(']}');
        await out.close();
        await fsp.rename(tmp, this.file);
      } catch (e) {
        await out.close().catch(() => undefined);
        await fsp.rm(tmp, { force: true });
        throw e;
      }
    } finally {
      await fsp.rm(spool.file, { force: true });
    }
  }
}
