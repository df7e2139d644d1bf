import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { StateStoreError } from '../store';
import { inTransaction } from './connection';

/**
 * The PostgreSQL state store's tables live in their own schema (default `argus_state`), created and migrated by
 * ARGUS: each step of MIGRATIONS runs once, in order, under an advisory lock, and the schema records its version.
 */
const MIGRATIONS: ((s: string) => string)[] = [
  (s) => `
    create table ${s}.store (id text primary key, created_at timestamptz not null default now());
    create table ${s}.sweeps (
      ledger_key text primary key, sweep_id text not null, meta jsonb not null,
      created_at timestamptz not null default now());
    create index sweeps_by_sweep_id on ${s}.sweeps (sweep_id);
    create table ${s}.page_docs (
      ledger_key text not null, page int not null, name text not null, body text not null,
      primary key (ledger_key, page, name));
    create table ${s}.outcomes (
      ledger_key text not null, page int not null, tag text not null, stage smallint not null, body text not null,
      primary key (ledger_key, page, tag));
    create table ${s}.audit (
      seq bigserial primary key, audit_key text not null, kind text not null, proposal_id text, line text not null,
      at timestamptz not null default now());
    create index audit_by_key on ${s}.audit (audit_key, seq);
    create table ${s}.applied (
      audit_key text not null, proposal_id text not null, sweep_id text not null, ledger_key text,
      primary key (audit_key, proposal_id));
    create table ${s}.pages_logged (audit_key text not null, page_key text not null, primary key (audit_key, page_key));
    create table ${s}.reports (ledger_key text primary key, body text not null, created_at timestamptz not null default now());`,
  // v2: model-call limits shared by the fleet.
  (s) => `
    create table ${s}.endpoint_exhausted (
      sweep_id text not null, endpoint_id text not null, details jsonb not null, at timestamptz not null default now(),
      primary key (sweep_id, endpoint_id));
    create table ${s}.pace (pace_key text primary key, budget jsonb not null, observed_at timestamptz not null default now());`,
  // v3: what ARGUS spent per provider key and day, across sweeps (what a plan subtracts from a declared budget).
  (s) => `
    create table ${s}.usage (
      pace_key text not null, day date not null, tokens bigint not null default 0, requests bigint not null default 0,
      primary key (pace_key, day));`,
  // v4: what batch answers took of their output reserve, per model and task, for every worker.
  (s) => `
    create table ${s}.calibration (
      cal_key text primary key, ratios jsonb not null, saved_at timestamptz not null default now());`,
  // v5: memory across sweeps: one header per catalog (format version, judgment key), one row per entity.
  (s) => `
    create table ${s}.memory (
      catalog_key text primary key, version int not null, judgment_key text not null, sweep_id text not null,
      saved_at timestamptz not null default now());
    create table ${s}.memory_entities (
      catalog_key text not null, entity_id text not null, entry jsonb not null,
      primary key (catalog_key, entity_id));`,
  // v6: model answers by their request's digest, for the whole fleet (state/store.ts AnswerBook).
  (s) => `
    create table ${s}.answers (
      digest text primary key, content text not null, cut_short boolean not null,
      used_at timestamptz not null default now());
    create index answers_by_use on ${s}.answers (used_at);`,
];

/** The schema version this code writes; a store migrated further by a newer ARGUS is refused. */
export const STATE_SCHEMA_VERSION = MIGRATIONS.length;

/** Bring the store's schema to STATE_SCHEMA_VERSION (idempotent, safe when several workers start at once). */
export async function migrate(pool: Pool, schema: string): Promise<string> {
  return inTransaction(pool, async (c) => {
    await c.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`argus-state-migrate:${schema}`]);
    await c.query(`create schema if not exists ${schema}`);
    await c.query(
      `create table if not exists ${schema}.schema_version (version int primary key, applied_at timestamptz not null default now())`,
    );
    const { rows } = await c.query<{ v: number | null }>(`select max(version) as v from ${schema}.schema_version`);
    const current = rows[0]?.v ?? 0;
    if (current > STATE_SCHEMA_VERSION)
      throw new StateStoreError(
        `the state store's schema ${schema} is at version ${current}, newer than this ARGUS (${STATE_SCHEMA_VERSION}): upgrade this worker`,
      );
    for (let v = current + 1; v <= STATE_SCHEMA_VERSION; v++) {
      await c.query(MIGRATIONS[v - 1]!(schema));
      await c.query(`insert into ${schema}.schema_version (version) values ($1)`, [v]);
      if (v === 1) await c.query(`insert into ${schema}.store (id) values ($1)`, [randomUUID()]);
    }
    const id = await c.query<{ id: string }>(`select id from ${schema}.store limit 1`);
    return id.rows[0]!.id;
  });
}
