import { SingleBar, Presets } from 'cli-progress';
import type { WorkflowHandle } from '@temporalio/client';
import { progressQuery, type SweepProgress } from '../workflows/messages';

/** One plain line of progress, for logs and pipes. */
export function progressLine(p: SweepProgress): string {
  if (p.phase === 'opening') return `opening ${p.catalog || 'the catalog'} (${p.mode} review)`;
  const parts = [
    `${p.phase} ${p.catalog}`,
    `page ${p.pagesDone}/${p.pageCount}`,
    `${p.entitiesDone}/${p.entitiesRequested} entities`,
    `${p.approved} approved, ${p.rejected} rejected, ${p.notReviewed} not reviewed, ${p.written} written`,
  ];
  if (p.awaitingReview) parts.push(`${p.awaitingReview} awaiting human review`);
  if (p.failures) parts.push(`${p.failures} failures`);
  if (p.retiredEndpoints.length) parts.push(`retired: ${p.retiredEndpoints.join(', ')}`);
  if (p.breakerTripped) parts.push('breaker tripped');
  if (p.execution > 1) parts.push(`execution ${p.execution}`);
  return parts.join('; ');
}

interface Sink {
  update(p: SweepProgress): void;
  stop(): void;
}

/** Plain lines, each printed only when something changed. */
function lineSink(stream: NodeJS.WritableStream): Sink {
  let last = '';
  return {
    update(p) {
      const line = progressLine(p);
      if (line !== last) stream.write(`[progress] ${line}\n`);
      last = line;
    },
    stop() {},
  };
}

/** A redrawn bar on a terminal: pages done of pages, with the running counts beside it. */
function barSink(stream: NodeJS.WriteStream): Sink {
  const bar = new SingleBar(
    {
      stream,
      format:
        '{phase} |{bar}| {value}/{total} pages | {entities} entities | ' +
        '{approved} approved, {rejected} rejected, {notReviewed} not reviewed, {written} written{extra}',
      hideCursor: true,
      clearOnComplete: false,
      noTTYOutput: false,
    },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update(p) {
      const payload = {
        phase: p.phase.padEnd(9),
        entities: `${p.entitiesDone}/${p.entitiesRequested}`,
        approved: p.approved,
        rejected: p.rejected,
        notReviewed: p.notReviewed,
        written: p.written,
        extra:
          (p.awaitingReview ? ` | ${p.awaitingReview} awaiting review` : '') +
          (p.failures ? ` | ${p.failures} failures` : '') +
          (p.retiredEndpoints.length ? ` | retired: ${p.retiredEndpoints.join(', ')}` : ''),
      };
      const total = Math.max(p.pageCount, 1);
      if (!started) {
        bar.start(total, p.pagesDone, payload);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(p.pagesDone, payload);
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * Wait for `done` while showing the sweep's `progress` query every `intervalMs` on `stream` (stderr by default):
 * a bar on a terminal, plain lines otherwise. A query that fails (the first workflow task has not run yet, or the
 * run is continuing as new) is skipped; the result is what `done` settles to.
 */
export async function followProgress<T>(
  handle: Pick<WorkflowHandle, 'query'>,
  done: Promise<T>,
  opts: { stream?: NodeJS.WriteStream; intervalMs?: number; tty?: boolean } = {},
): Promise<T> {
  const stream = opts.stream ?? process.stderr;
  const tty = opts.tty ?? Boolean(stream.isTTY);
  const sink = tty ? barSink(stream) : lineSink(stream);
  let settled = false;
  const finished = done.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  try {
    while (!settled) {
      try {
        sink.update(await handle.query(progressQuery));
      } catch {
        // Not answerable right now; try again on the next tick.
      }
      await Promise.race([finished, sleep(opts.intervalMs ?? 1000)]);
    }
    // One last look so the bar ends on the final counts; a closed workflow still answers queries (briefly wait).
    const last = await Promise.race([handle.query(progressQuery).catch(() => undefined), sleep(2000)]);
    if (last) sink.update(last);
  } finally {
    sink.stop();
  }
  return done;
}
