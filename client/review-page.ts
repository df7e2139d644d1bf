// The review page's HTML: every proposal waiting for people, grouped by sweep, kind and class, with its
// evidence, the Arbiter's reasons and the catalog's current text, in one form that sends exactly the ids it
// lists. Pure functions of their input: no script at all (the CSP forbids it), every value escaped.
import { PROPOSAL_KINDS, type ProposalKind } from '../domain/proposal';
import { basisOfArgusText } from '../judgment/description-evidence';
import { DECIDED_BEFORE } from '../judgment/pii/shape';
import type { ForgottenDecision, Inbox, InboxProposal, InboxSweep, RecordedDecisions } from './review-inbox';
import type { StandingDecision } from '../activities/forget-decision';
import type { CatalogText } from './review-details';

/** Escape text for HTML element content and quoted attribute values. */
export function esc(v: string | number | null | undefined): string {
  return String(v ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const KIND_TITLE: Record<ProposalKind, string> = {
  description: 'Descriptions',
  pii_tag: 'PII tags',
  lineage_flag: 'Lineage flags',
  description_removal: 'Description removals',
};

const READINGS: Record<string, string> = {
  person: 'person',
  people: 'person',
  persons: 'person',
  organisation: 'organisation',
  organisations: 'organisation',
  organization: 'organisation',
  organizations: 'organisation',
  company: 'organisation',
  companies: 'organisation',
  machine: 'machine',
  machines: 'machine',
  event: 'event',
  events: 'event',
  thing: 'thing',
  things: 'thing',
};

/**
 * The table reading a PII proposal names (person, organisation, machine, event, thing), if any: a `reading` or
 * `tableReading` field of its change, else a line of its evidence ("table reading: person", "table reads as an
 * organisation", "rows are machines").
 */
export function tableReadingOf(evidence: readonly string[] | undefined, change?: object): string | undefined {
  const field =
    change && ((change as { tableReading?: unknown }).tableReading ?? (change as { reading?: unknown }).reading);
  if (typeof field === 'string' && READINGS[field.toLowerCase()]) return READINGS[field.toLowerCase()];
  for (const line of evidence ?? []) {
    const m =
      /\btable[ _-]?reading\b\W*(?:an?\s+|the\s+)?([a-z]+)/i.exec(line) ??
      /\b(?:table|rows?)\s+(?:reads?|read)\s+as\s+(?:an?\s+)?([a-z]+)/i.exec(line) ??
      /\brows are\s+(?:an?\s+)?([a-z]+)/i.exec(line);
    const reading = m?.[1] ? READINGS[m[1].toLowerCase()] : undefined;
    if (reading) return reading;
  }
  return undefined;
}

/**
 * The class a proposal is grouped by within its kind: a PII tag's category and table reading, a description's
 * basis (inherited, derived, model), a lineage flag's finding. Without the sweep's state, what the summary says.
 */
export function classOf(p: InboxProposal): string {
  const c = p.change;
  switch (p.kind) {
    case 'pii_tag': {
      const category = c?.kind === 'pii_tag' ? c.category : (/ as ([a-z_]+) \(/.exec(p.summary)?.[1] ?? 'unknown');
      const reading = tableReadingOf(p.evidence, c);
      const cls = reading ? `${category} · ${reading} table` : category;
      // A person approved this shape before: the class is settled with one click.
      return p.arbiterReason.includes(DECIDED_BEFORE) ? `decided before · ${cls}` : cls;
    }
    case 'description':
      return c?.kind === 'description' ? basisOfArgusText(c.text) : 'basis not known here';
    case 'description_removal':
      return "inherited text whose origin's text is gone";
    case 'lineage_flag':
      return c?.kind === 'lineage_flag'
        ? c.finding.replace('_', ' ')
        : /^remove dangling/.test(p.summary)
          ? 'dangling edge'
          : 'unrecorded read';
  }
}

/** "3 h 20 min left", "45 s left", "past" (the deadline is read-only then). */
export function timeLeft(deadline: string, now: Date): string {
  const ms = Date.parse(deadline) - now.getTime();
  if (!(ms > 0)) return 'past';
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h left`;
  if (h > 0) return `${h} h ${m} min left`;
  if (m > 0) return `${m} min left`;
  return `${s} s left`;
}

/** Whether a sweep takes decisions: its deadline (if it has one yet) has not passed. */
export const isOpen = (s: InboxSweep, now: Date): boolean => !s.deadline || Date.parse(s.deadline) > now.getTime();

export interface Group {
  kind: ProposalKind;
  cls: string;
  proposals: InboxProposal[];
}

/** A sweep's proposals by kind (schema order), then class (alphabetical), then entity. */
export function groupsOf(s: InboxSweep): Group[] {
  const groups = new Map<string, Group>();
  for (const p of s.proposals) {
    const cls = classOf(p);
    const key = `${p.kind}\u0000${cls}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { kind: p.kind, cls, proposals: [] }));
    g.proposals.push(p);
  }
  const kindRank = (k: ProposalKind) => PROPOSAL_KINDS.indexOf(k);
  return [...groups.values()]
    .sort((a, b) => kindRank(a.kind) - kindRank(b.kind) || a.cls.localeCompare(b.cls))
    .map((g) => ({
      ...g,
      proposals: [...g.proposals].sort(
        (a, b) => a.entityId.localeCompare(b.entityId) || a.summary.localeCompare(b.summary),
      ),
    }));
}

/** The value of a decision button: what, on what, in which sweep section (parsed by the server). */
export const actionValue = (decision: 'approved' | 'rejected', scope: 'one' | 'group' | 'selected', ...at: string[]) =>
  [decision, scope, ...at.map(encodeURIComponent)].join('|');

/** The value of a Forget button: which sweep's catalog memory, which person's decision (parsed by the server). */
export const forgetValue = (sweepId: string, proposalId: string) =>
  [sweepId, proposalId].map(encodeURIComponent).join('|');

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
const entities = (n: number) => `${n} ${n === 1 ? 'entity' : 'entities'}`;

function layout(title: string, body: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(title)}</title><link rel="stylesheet" href="/review.css"></head>` +
    `<body>${body}</body></html>`
  );
}

function reasonsOf(p: InboxProposal, mode: string): string {
  const rows: [string, string][] =
    mode === 'model'
      ? [
          ['Model', p.arbiterReason || '(no reason given)'],
          ['Gate', 'passed it to the model (the gate records no reason for what it passes)'],
        ]
      : [
          ['Gate', p.arbiterReason || '(no reason given)'],
          ['Model', 'none: this sweep is reviewed mechanically'],
        ];
  return rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd class="reason">${esc(v)}</dd>`).join('');
}

function currentText(c: CatalogText | undefined, kind: ProposalKind): string {
  if (!c) return '<span class="muted">not read by this server</span>';
  if (!c.found) return '<span class="muted">not in the catalog any more</span>';
  const parts: string[] = [];
  if (kind === 'lineage_flag') {
    parts.push(
      c.upstream && c.upstream.length
        ? `recorded upstream: ${c.upstream.map((u) => `<code>${esc(u)}</code>`).join(', ')}`
        : 'no recorded upstream',
    );
  } else {
    const by = c.source === 'human' ? 'a person' : c.source === 'argus' ? 'ARGUS' : 'unknown';
    parts.push(
      c.description
        ? `<q class="catalog-text">${esc(c.description)}</q> <span class="muted">(written by ${by})</span>`
        : '<span class="muted">no description</span>',
    );
    if (c.tags)
      parts.push(c.tags.length ? `tags: ${c.tags.map((t) => `<code>${esc(t)}</code>`).join(', ')}` : 'no PII tag');
  }
  return parts.join('<br>');
}

/** One line saying what would be written: from the change when known (the summary cuts its explanation short). */
function headline(p: InboxProposal): string {
  const c = p.change;
  if (c?.kind === 'pii_tag') return `tag ${p.entityId}.${c.column} as ${c.category} (${c.confidence.toFixed(2)})`;
  if (c?.kind === 'description')
    return `describe ${c.target === 'table' ? p.entityId : `${p.entityId}.${c.column ?? '?'}`}`;
  if (c?.kind === 'description_removal')
    return `remove ARGUS's description of ${c.target === 'table' ? p.entityId : `${p.entityId}.${c.column ?? '?'}`}`;
  return p.summary;
}

function proposalCard(p: InboxProposal, s: number, sweep: InboxSweep, open: boolean): string {
  const reading = p.kind === 'pii_tag' ? tableReadingOf(p.evidence, p.change) : undefined;
  const evidence = p.evidence
    ? p.evidence.length
      ? `<ul class="evidence">${p.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>`
      : '<span class="muted">none recorded</span>'
    : '<span class="muted">not read by this server</span>';
  const proposed =
    p.change?.kind === 'description'
      ? `<dt>Proposed text</dt><dd><q class="proposed-text">${esc(p.change.text)}</q></dd>`
      : p.change?.kind === 'description_removal'
        ? `<dt>Text to remove</dt><dd><q class="proposed-text">${esc(p.change.text)}</q></dd>`
        : p.change?.kind === 'pii_tag'
          ? `<dt>Proposed tag</dt><dd><code>${esc(p.change.category)}</code>, confidence ${p.change.confidence.toFixed(2)}: ${esc(p.change.explanation)}${reading ? ` <span class="reading">table reading: ${esc(reading)}</span>` : ''}</dd>`
          : '';
  const pick = open
    ? `<input type="checkbox" name="pick.${s}" value="${esc(p.proposalId)}" id="pick-${s}-${esc(p.proposalId)}" aria-label="Select ${esc(p.proposalId)}">`
    : '';
  const buttons = open
    ? `<div class="actions"><button type="submit" name="act" value="${esc(actionValue('approved', 'one', String(s), p.proposalId))}" class="approve" aria-label="Approve ${esc(p.proposalId)}">Approve</button>` +
      `<button type="submit" name="act" value="${esc(actionValue('rejected', 'one', String(s), p.proposalId))}" class="reject" aria-label="Reject ${esc(p.proposalId)}">Reject</button></div>`
    : '';
  return (
    `<article class="proposal" data-proposal="${esc(p.proposalId)}" data-sweep="${esc(sweep.sweepId)}">` +
    `<header>${pick}<label for="pick-${s}-${esc(p.proposalId)}"><code class="pid">${esc(p.proposalId)}</code></label> ` +
    `<span class="entity">${esc(p.entityId)}</span> <span class="muted">page ${p.pageIndex}</span>${buttons}</header>` +
    `<p class="summary">${esc(headline(p))}</p>` +
    `<dl>${proposed}<dt>Evidence</dt><dd>${evidence}</dd>${reasonsOf(p, sweep.mode)}` +
    `<dt>In the catalog now</dt><dd>${currentText(p.current, p.kind)}</dd></dl></article>`
  );
}

/** A shape in the page's words: the column name as words, the category, the table reading when known. */
function shapeCell(shape: string | undefined): string {
  if (shape === undefined) return '<span class="muted">not known</span>';
  const [words = '', category = '', reading = '-'] = shape.split('|');
  return (
    `column “${esc(words)}” · <code>${esc(category)}</code>` +
    (reading === '-' ? '' : ` · <span class="reading">${esc(reading)} table</span>`)
  );
}

function standingRow(d: StandingDecision, sweepId: string, forgettable: boolean): string {
  const others = d.byShape.length
    ? `${d.byShape.length} other ${d.byShape.length === 1 ? 'entity' : 'entities'}: ` +
      d.byShape
        .slice(0, 3)
        .map((id) => `<code>${esc(id)}</code>`)
        .join(', ') +
      (d.byShape.length > 3 ? ', …' : '')
    : 'none yet';
  const decision = d.decision
    ? esc(d.decision) +
      (d.supersededBy
        ? ` <span class="muted">(a later decision, ${esc(d.supersededBy)}, now speaks for the shape)</span>`
        : '')
    : '<span class="muted">forgotten; a sweep running then rejected these on it</span>';
  const button = forgettable
    ? `<button type="submit" formaction="/forget" formmethod="post" name="forget" value="${esc(forgetValue(sweepId, d.proposalId))}" class="forget" aria-label="Forget ${esc(d.proposalId)}">Forget</button>`
    : '';
  return (
    `<tr data-decision="${esc(d.proposalId)}"><td><code class="pid">${esc(d.proposalId)}</code></td>` +
    `<td>${d.entityId !== undefined ? esc(d.entityId) : '<span class="muted">not in the memory</span>'}</td>` +
    `<td>${shapeCell(d.shape)}</td><td>${decision}</td><td>${esc(d.reviewer ?? '')}</td>` +
    `<td>${d.at ? `<time datetime="${esc(d.at)}">${esc(d.at.slice(0, 10))}</time>` : ''}</td>` +
    `<td>${others}</td><td>${button}</td></tr>`
  );
}

/** The decisions that stand for their shape in the memory of the catalog a sweep sweeps, each with a Forget. */
function standingBlock(sweep: InboxSweep, forgettable: boolean): string {
  const st = sweep.standing;
  if (!st) return '';
  const intro =
    `<p class="muted">A person’s decision on a PII tag is evidence for every column of its shape in ${esc(sweep.catalog || 'this catalog')}: ` +
    'the gate rejects a tag of a shape a person rejected, and holds one a person approved under “decided before”. ' +
    'Forget takes a decision back: its entity and every entity decided by its shape are judged afresh next sweep ' +
    '(a sweep running now read the decisions at its start).</p>';
  const body =
    st.decisions.length === 0
      ? `<p class="empty">${st.note ? esc(st.note) : 'No person’s decision stands for its shape in this catalog’s memory.'}</p>`
      : '<table class="standing"><thead><tr><th>Proposal</th><th>Entity</th><th>Shape</th><th>Decision</th><th>By</th>' +
        '<th>On</th><th>Also decided</th><th></th></tr></thead><tbody>' +
        st.decisions.map((d) => standingRow(d, sweep.sweepId, forgettable)).join('') +
        '</tbody></table>' +
        (st.total > st.decisions.length
          ? `<p class="note">${st.total - st.decisions.length} more not listed (the page lists the ${st.decisions.length} newest): ` +
            `<code>argus review forget &lt;proposal-id&gt; --sweep ${esc(sweep.sweepId)}</code> takes back any.</p>`
          : '');
  return (
    `<section class="standing" data-sweep="${esc(sweep.sweepId)}"><h3>Decisions that stand for their shape (${st.total})</h3>` +
    `${intro}${body}</section>`
  );
}

function sweepSection(sweep: InboxSweep, s: number, now: Date, forgettable: boolean): string {
  const open = isOpen(sweep, now);
  const groups = groupsOf(sweep);
  const deadline = sweep.deadline
    ? `deadline <time datetime="${esc(sweep.deadline)}">${esc(sweep.deadline)}</time> · <strong class="left">${esc(timeLeft(sweep.deadline, now))}</strong>`
    : 'no deadline yet';
  const head =
    `<h2>${esc(sweep.sweepId)}</h2>` +
    `<p class="meta">catalog <strong>${esc(sweep.catalog || '?')}</strong> · ${esc(sweep.mode)} review · ` +
    `${sweep.proposals.length} waiting · ${deadline}</p>` +
    (sweep.note ? `<p class="note">${esc(sweep.note)}</p>` : '') +
    (open
      ? ''
      : '<p class="readonly" role="status">This sweep is past its review deadline: it is read-only, and what nobody decided ends not reviewed.</p>');
  const controls = open
    ? `<input type="hidden" name="sweep.${s}" value="${esc(sweep.sweepId)}">` +
      `<div class="controls"><label for="note-${s}">Note (optional, kept with each decision sent from this sweep)</label>` +
      `<textarea id="note-${s}" name="note.${s}" maxlength="2000" rows="2"></textarea>` +
      `<button type="submit" name="act" value="${esc(actionValue('approved', 'selected', String(s)))}" class="approve">Approve selected</button>` +
      `<button type="submit" name="act" value="${esc(actionValue('rejected', 'selected', String(s)))}" class="reject">Reject selected</button></div>`
    : '';
  let kind: ProposalKind | undefined;
  const body = groups
    .map((g, gi) => {
      const kindHead =
        g.kind !== kind
          ? `${kind ? '</section>' : ''}<section class="kind"><h3>${esc(KIND_TITLE[g.kind])} (${sweep.proposals.filter((p) => p.kind === g.kind).length})</h3>`
          : '';
      kind = g.kind;
      const n = g.proposals.length;
      const groupButtons = open
        ? g.proposals
            .map((p) => `<input type="hidden" name="group.${s}.${gi}" value="${esc(p.proposalId)}">`)
            .join('') +
          `<button type="submit" name="act" value="${esc(actionValue('approved', 'group', String(s), String(gi)))}" class="approve">Approve all ${n}</button>` +
          `<button type="submit" name="act" value="${esc(actionValue('rejected', 'group', String(s), String(gi)))}" class="reject">Reject all ${n}</button>`
        : '';
      return (
        kindHead +
        `<section class="group" data-group="${esc(`${g.kind}/${g.cls}`)}"><header><h4>${esc(g.cls)} <span class="count">(${n})</span></h4>${groupButtons}</header>` +
        g.proposals.map((p) => proposalCard(p, s, sweep, open)).join('') +
        '</section>'
      );
    })
    .join('');
  return (
    `<section class="sweep" data-sweep="${esc(sweep.sweepId)}">${head}${controls}${body}${kind ? '</section>' : ''}` +
    `${standingBlock(sweep, forgettable)}</section>`
  );
}

/** What a sweep recorded after a decision, in one sentence. */
export function recordedMessage(r: RecordedDecisions): string {
  const what = r.decision === 'approved' ? 'approved' : 'rejected';
  return (
    `${r.sweepId} recorded ${r.accepted} ${what} by ${r.reviewer}${r.note ? ` (note: “${r.note}”)` : ''}: ` +
    `${r.proposalIds.join(', ')}. ${r.stillPending} still wait for people.`
  );
}

/** What was forgotten, in one sentence. */
export function forgottenMessage(f: ForgottenDecision): string {
  return (
    `Forgot ${f.reviewer ?? 'a person'}’s decision on ${f.proposalId} in the memory of ${f.catalog} (by ${f.by}): ` +
    `${entities(f.forgotten.length)} ${f.forgotten.length === 1 ? 'is' : 'are'} judged afresh next sweep ` +
    `(${f.forgotten.slice(0, 10).join(', ')}${f.forgotten.length > 10 ? ', …' : ''}).`
  );
}

export interface InboxPageInput {
  inbox: Inbox;
  csrf: string;
  now: Date;
  /** Set by `--reviewer`: every decision is this person's and the page asks for no name. */
  reviewer?: string;
  /** Who is signed in, when the page knows (a steward's own token, the proxy's user header): no name is asked. */
  signedIn?: { name: string; by: 'steward-token' | 'proxy' };
  /** Behind the one shared ARGUS_REVIEW_TOKEN: the page lets people in but does not know them, so says so. */
  sharedToken?: boolean;
  /** The name this browser last decided as: the name field starts with it. */
  lastReviewer?: string;
  /** What the sweeps recorded for this browser's session, newest first. */
  recorded?: RecordedDecisions[];
  /** The decisions this browser's session forgot, newest first. */
  forgotten?: ForgottenDecision[];
  /** The server forgets decisions (it reads the workers' state): each standing decision gets a Forget button. */
  canForget?: boolean;
}

/** The page at `/`: what waits for people across running sweeps, and the one form that decides it. */
export function renderInboxPage(input: InboxPageInput): string {
  const { inbox, now } = input;
  const total = inbox.sweeps.reduce((n, s) => n + s.proposals.length, 0);
  const canForget = input.canForget === true;
  // The Forget buttons are the decide form's too (formaction): forms do not nest, and the name field is in it.
  const inForm =
    inbox.sweeps.some((s) => isOpen(s, now)) || (canForget && inbox.sweeps.some((s) => s.standing?.decisions.length));
  const recorded = input.recorded?.length
    ? `<section class="recorded" role="status"><h2>Recorded by the sweeps (this session, newest first)</h2><ul>${input.recorded
        .map((r) => `<li>${esc(recordedMessage(r))}</li>`)
        .join('')}</ul></section>`
    : '';
  const forgotten = input.forgotten?.length
    ? `<section class="recorded forgotten" role="status"><h2>Forgotten (this session, newest first)</h2><ul>${input.forgotten
        .map((f) => `<li>${esc(forgottenMessage(f))}</li>`)
        .join('')}</ul></section>`
    : '';
  const who = input.signedIn
    ? `<p class="who">Every decision is recorded as <strong>${esc(input.signedIn.name)}</strong>.</p>`
    : input.reviewer
      ? `<p class="who">Deciding as <strong>${esc(input.reviewer)}</strong> (set by the server).</p>`
      : '<p class="who"><label for="reviewer">Your name (typed, not checked: recorded with every decision as you type it' +
        `${input.sharedToken ? '; the shared access token lets you in but does not say who you are' : ''})</label> ` +
        `<input id="reviewer" name="reviewer" required maxlength="200" autocomplete="name"${input.lastReviewer ? ` value="${esc(input.lastReviewer)}"` : ''}></p>`;
  // A div, not a p: the sign-out form cannot sit inside a paragraph (the parser would close it first).
  const signedIn = input.signedIn
    ? `<div class="signed-in" role="status">Signed in as <strong>${esc(input.signedIn.name)}</strong> ` +
      `(${input.signedIn.by === 'proxy' ? 'named by the sign-in proxy in front of this page' : 'your steward token'})` +
      (input.signedIn.by === 'steward-token'
        ? ` <form method="post" action="/logout" class="signout"><input type="hidden" name="csrf" value="${esc(input.csrf)}">` +
          '<button type="submit">Sign out</button></form>'
        : '') +
      '</div>'
    : input.sharedToken
      ? '<div class="signed-in">Signed in with the shared access token: names on this page are typed, not checked.</div>'
      : '';
  const unreachable = inbox.unreachable.length
    ? `<section class="unreachable"><h2>Running sweeps that did not answer</h2><ul>${inbox.unreachable
        .map((u) => `<li><code>${esc(u.sweepId)}</code>: ${esc(u.reason)}</li>`)
        .join('')}</ul></section>`
    : '';
  const notListed = inbox.notListed
    ? `<p class="note">${inbox.notListed} more running sweeps were not queried (the page lists at most 100).</p>`
    : '';
  const sweeps = inbox.sweeps.map((s, i) => sweepSection(s, i, now, canForget)).join('');
  const empty = total === 0 ? '<p class="empty">No proposal is waiting for review.</p>' : '';
  const main = inForm
    ? // The first submit button is the form's default: disabled, so Enter in a text field decides nothing.
      `<form method="post" action="/decide" id="decide"><button type="submit" disabled hidden aria-hidden="true" tabindex="-1"></button>` +
      `<input type="hidden" name="csrf" value="${esc(input.csrf)}">${who}${sweeps}</form>`
    : sweeps;
  return layout(
    'ARGUS review',
    `<header class="top"><h1>ARGUS review</h1><p>${plural(total, 'proposal')} ${total === 1 ? 'waits' : 'wait'} for people in ` +
      `${plural(inbox.sweeps.length, 'running sweep')} · read at <time datetime="${esc(inbox.at)}">${esc(inbox.at)}</time> · <a href="/">reload</a></p>${signedIn}</header>` +
      `<main>${forgotten}${recorded}${empty}${main}${unreachable}${notListed}</main>`,
  );
}

/**
 * The token form shown to a browser without a session when the server needs a token: ARGUS_REVIEW_TOKEN, or with
 * `perSteward` each steward's own (which tells the page who they are).
 */
export function renderLoginPage(input: { csrf: string; message?: string; perSteward?: boolean }): string {
  return layout(
    input.perSteward ? 'ARGUS review: sign in' : 'ARGUS review: access token',
    '<header class="top"><h1>ARGUS review</h1></header><main>' +
      (input.message ? `<p class="refusal" role="alert">${esc(input.message)}</p>` : '') +
      '<form method="post" action="/login" class="login">' +
      `<input type="hidden" name="csrf" value="${esc(input.csrf)}">` +
      (input.perSteward
        ? '<p><label for="token">Your steward token (your own: decisions are recorded in your name; ask whoever runs this page for one)</label></p>'
        : '<p><label for="token">Access token (the server’s ARGUS_REVIEW_TOKEN; ask whoever runs it)</label></p>') +
      '<p><input id="token" name="token" type="password" required autocomplete="current-password"> ' +
      '<button type="submit">Open the review page</button></p></form></main>',
  );
}

/** A refusal or an error, for people: what happened, that nothing changed, and the way back. */
export function renderMessagePage(input: { title: string; message: string }): string {
  return layout(
    `ARGUS review: ${input.title}`,
    `<header class="top"><h1>ARGUS review</h1></header><main><h2>${esc(input.title)}</h2>` +
      `<p class="refusal" role="alert">${esc(input.message)}</p><p><a href="/">Back to the proposals</a></p></main>`,
  );
}

/** The page's only style sheet, served from the server (the CSP allows no inline style). */
export const REVIEW_CSS = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f23; background: #f6f7f9; }
header.top { background: #24292f; color: #fff; padding: 12px 24px; }
header.top h1 { margin: 0; font-size: 20px; }
header.top p { margin: 4px 0 0; color: #d0d7de; }
header.top a { color: #9ecbff; }
main { padding: 16px 24px; max-width: 1200px; }
h2 { font-size: 17px; margin: 0 0 4px; word-break: break-all; }
h3 { font-size: 15px; margin: 14px 0 6px; }
h4 { font-size: 14px; margin: 0; display: inline-block; margin-right: 12px; }
section.sweep { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 12px 16px; margin: 16px 0; }
section.group { border-left: 3px solid #0969da; padding-left: 10px; margin: 10px 0 16px; }
section.group > header { margin-bottom: 6px; }
article.proposal { border: 1px solid #e1e4e8; border-radius: 4px; padding: 8px 10px; margin: 6px 0; background: #fbfcfd; }
article.proposal header { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
article.proposal .actions { margin-left: auto; }
.summary { margin: 4px 0; font-weight: 600; }
dl { display: grid; grid-template-columns: 150px 1fr; gap: 2px 12px; margin: 4px 0 0; }
dt { color: #57606a; }
dd { margin: 0; }
ul.evidence { margin: 0; padding-left: 18px; }
.muted, .meta { color: #57606a; }
.reading { background: #ddf4ff; border-radius: 3px; padding: 0 4px; }
button { font: inherit; padding: 3px 10px; margin-left: 4px; border-radius: 4px; border: 1px solid #8c959f; cursor: pointer; }
button.approve { background: #dafbe1; border-color: #2da44e; }
button.reject { background: #ffebe9; border-color: #cf222e; }
.controls { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; margin: 8px 0; }
.controls label { width: 100%; color: #57606a; }
textarea { font: inherit; width: 420px; max-width: 100%; }
input#reviewer, input#token { font: inherit; padding: 3px 6px; width: 280px; }
header.top .signed-in { margin: 4px 0 0; color: #fff; }
form.signout { display: inline; }
form.signout button { font-size: 13px; padding: 1px 8px; }
.recorded { background: #dafbe1; border: 1px solid #2da44e; padding: 8px 12px; border-radius: 4px; }
.recorded h2 { font-size: 14px; margin: 0 0 4px; }
.recorded ul { margin: 0; padding-left: 18px; }
.refusal { background: #ffebe9; border: 1px solid #cf222e; padding: 8px 12px; border-radius: 4px; }
.readonly, .note { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; border-radius: 4px; }
.left { color: #9a6700; }
code { font-size: 13px; }
section.standing { border-top: 1px solid #d0d7de; margin-top: 12px; padding-top: 6px; }
table.standing { border-collapse: collapse; width: 100%; font-size: 14px; }
table.standing th, table.standing td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #e1e4e8; vertical-align: top; }
button.forget { background: #fff8c5; border-color: #d4a72c; }
`;
