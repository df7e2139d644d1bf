import { writeFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { SweepReport } from '../../domain/report';
import { renderReportText } from '../render';
import { renderReportMarkdown } from '../render-markdown';
import { renderReportHtml } from '../render-html';
import { withClient } from '../connect';
import { resultOf } from '../sweeps';
import { err, EXIT_HELP, exitFor, out } from './output';

export const FORMATS = ['text', 'markdown', 'html', 'json'] as const;
export type Format = (typeof FORMATS)[number];

/** The report in one of FORMATS; `link` (the Web UI) goes in every format. */
export function renderReport(r: SweepReport, format: Format, link?: string): string {
  switch (format) {
    case 'json':
      return JSON.stringify(link ? { ...r, webUi: link } : r, null, 2) + '\n';
    case 'markdown':
      return renderReportMarkdown(r, { uiLink: link });
    case 'html':
      return renderReportHtml(r, { uiLink: link });
    case 'text':
      return renderReportText(r, { uiLink: link }) + '\n';
  }
}

async function reportCommand(id: string, o: { format?: Format; json?: boolean; out?: string }): Promise<void> {
  const format: Format = o.json ? 'json' : (o.format ?? 'text');
  await withClient(async (c) => {
    const r = await resultOf(c.client.workflow.getHandle(id));
    const text = renderReport(r, format);
    if (o.out) {
      writeFileSync(o.out, text);
      err(`Wrote the ${format} report of ${id} to ${o.out}${r.partial ? ' (PARTIAL sweep)' : ''}`);
    } else out(text);
    process.exitCode = exitFor(r);
  });
}

/** `argus report <sweep-id>`: a sweep's report as text, Markdown, HTML or JSON. */
export function addReportCommand(program: Command): void {
  program
    .command('report <sweep-id>')
    .description('Print (or write) the report of a sweep, waiting for it to finish if it is still running.')
    .addOption(
      new Option('--format <format>', 'text, markdown, html (one self-contained page) or json')
        .choices(FORMATS)
        .default('text'),
    )
    .option('--json', 'same as --format json')
    .option('--out <file>', 'write the report to this file instead of stdout')
    .addHelpText(
      'after',
      `\nExamples:\n  argus report sweep/demo/2026-11-29T14-43-17-729Z --format markdown > report.md\n  argus report sweep/demo/2026-11-29T14-43-17-729Z --format html --out report.html\n\n${EXIT_HELP}`,
    )
    .action(async (id: string, o: { format?: Format; json?: boolean; out?: string }) => reportCommand(id, o));
}
