import { log } from '@temporalio/activity';
import type { RepairRequest } from '../catalog/adapter';
import { addVector, catalogStats, emptyStats } from '../judgment/catalog-stats';
import type { AuditEntry, PageWrites, WriteRecord } from '../state/store';
import { faultPoint } from './fault-points';
import { catalogContext } from './catalog-access';
import { inPart, type PagePart } from '../domain/ids';
import {
  entityStateOf,
  incrementalDocName,
  pagePrintsDocName,
  pageStatsDocName,
  piiReadDocName,
  lineageReadDocName,
} from './incremental-activities';
import { sweepContext, type ActivityDeps } from './sweep-context';

/** What the write step is asked to write: one page of a sweep, in one round. */
export interface WritePageInput {
  ledgerKey: string;
  sweepId: string;
  pageIndex: number;
  /** The page's entity ids (their figures after the write go to the ledger); absent: read from the ledger. */
  ids?: string[];
  overwriteHumanText: boolean;
  dryRun: boolean;
  /** 0: the sweep's own write of the page; later rounds write what people approved afterwards. */
  round?: number;
  /** The proposals people decided in that round, whose decisions it logs. */
  proposalIds?: string[];
  /**
   * The page's part (domain/ids.ts PagePart) when the page reaches its fixed point in one pass: `lineage` (in round
   * LINEAGE_WRITE_ROUND) writes the lineage checker's flags and keeps the page's prints as they leave it
   * (lineageReadDocName), what the drafter reads next; `evidence` writes the drafter's descriptions and removals and
   * keeps what the PII classifier then reads of each entity (piiReadDocName); `pii` (in round PII_WRITE_ROUND)
   * writes the PII classifier's tags. Only the part's proposals are written and their decisions logged.
   */
  part?: PagePart;
}

/** The write step: approved repairs into the catalog, once, each with its audit line. */
export function createWriteActivities(deps: ActivityDeps) {
  const { store, ledgerFor, catalogOf, metrics } = sweepContext(deps);
  return {
    /**
     * Write a page's approved repairs, once. Idempotent per proposal id (the audit log's applied index plus
     * content checks), atomic per page, never overwrites a person's text unless asked. Unreviewed and
     * rejected proposals are never written. Runs holding the fleet-wide lock of the page (and round), so a
     * retry racing a slow attempt on another worker waits for it and then finds the page written.
     *
     * `round` 0 is the sweep's own write of the page; a later round writes what people approved afterwards
     * (`proposalIds`: the proposals people decided in that round, whose decisions it logs).
     */
    async applyApprovedRepairs(
      input: WritePageInput,
    ): Promise<{ written: number; already: number; keptHuman: number }> {
      const round = input.round ?? 0;
      return store.exclusive(`write:${input.ledgerKey}#${input.pageIndex}.${round}`, () => writePage(input, round));
    },
  };

  async function writePage(
    input: WritePageInput,
    round: number,
  ): Promise<{ written: number; already: number; keptHuman: number }> {
    const ledger = ledgerFor(input.ledgerKey);
    const { meta, catalog } = await catalogOf(ledger);
    const recordAfter = async () => {
      const ids = input.ids ?? (await ledger.pageIds(input.pageIndex));
      // An incremental sweep's memory keeps each entity's figures as the write left them (entity-stats-after-<page>);
      // the page's are their sum, so each entity is counted once.
      if (await ledger.doc(incrementalDocName)) {
        const { entities, digests } = await catalog.getEntities(ids, { digests: true });
        const { figures, prints } = await entityStateOf(catalog, entities, await catalogContext(catalog), digests);
        const sum = emptyStats();
        for (const [, v] of Object.values(figures)) addVector(sum, v);
        await ledger.writeStats(input.pageIndex, 'after', sum);
        await ledger.writeDoc(pageStatsDocName(input.pageIndex), figures);
        await ledger.writeDoc(pagePrintsDocName(input.pageIndex), prints);
        // What the page's PII classifier reads next, of each entity: the pass's detection takes its judgment as
        // resting on this, not on the entity as the pass found it.
        if (input.part === 'evidence')
          await ledger.writeDoc(
            piiReadDocName(input.pageIndex),
            Object.fromEntries(Object.entries(prints).map(([id, p]) => [id, p[1]])),
          );
        // What the page's drafter (and PII classifier) read next, after its lineage flags.
        else if (input.part === 'lineage') await ledger.writeDoc(lineageReadDocName(input.pageIndex), prints);
      } else await ledger.writeStats(input.pageIndex, 'after', catalogStats((await catalog.getEntities(ids)).entities));
    };
    const done = await ledger.writes(input.pageIndex, round);
    // A page that wrote nothing keeps its figures from before (the report reads those when 'after' is missing):
    // no second read of the page and no second count.
    if (done) {
      if (done.written.length) await recordAfter();
      return { written: done.written.length, already: done.already.length, keptHuman: done.keptHuman.length };
    }
    const audit = store.audit(meta.auditFile);
    const only = input.proposalIds ? new Set(input.proposalIds) : undefined;
    const proposals = (await ledger.proposals(input.pageIndex)).filter(
      (p) => (!only || only.has(p.id)) && inPart(input.part, p.agent),
    );
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
      ...(round > 0 ? { round } : {}),
      decisions: decisions.length,
      writes,
    });
    if (input.dryRun) {
      for (const p of approved) w.notes[p.id] = 'dry run: not written';
      if (!(await audit.pageLogged(input.ledgerKey, input.pageIndex, round)))
        await audit.append([...decisions, pageLine(0)]);
      await ledger.writeWrites(input.pageIndex, w, round);
      return { written: 0, already: 0, keptHuman: 0 };
    }
    const applied = await audit.applied(approved.map((p) => p.id));
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
        // Written by an earlier sweep and not undone: in the catalog, or removed by a person since, which is
        // that person's decision. Either way it is not written again (only an undo makes it writable again).
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
        if (writeLines.length) await ledger.writeIntent(input.pageIndex, writeLines, round);
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
    if (!(await audit.pageLogged(input.ledgerKey, input.pageIndex, round)))
      await audit.append([...decisions, ...(writeLines ?? writes), pageLine(writes.length + loggedBefore)]);
    await ledger.writeWrites(input.pageIndex, w, round);
    // Counted once the page's writes are recorded: a retry finds them recorded and returns above, uncounted.
    const kind = meta.catalogRef.kind;
    metrics.writes(kind, 'written', w.written.length);
    metrics.writes(kind, 'already', w.already.length);
    metrics.writes(kind, 'kept_human', w.keptHuman.length);
    metrics.writes(kind, 'conflict', w.conflicts.length);
    metrics.writes(kind, 'failed', w.failed?.length ?? 0);
    if (w.written.length) await recordAfter();
    if (w.written.length)
      log.info('repairs written', { sweepId: input.sweepId, page: input.pageIndex, written: w.written.length });
    return { written: w.written.length, already: w.already.length, keptHuman: w.keptHuman.length };
  }
}
