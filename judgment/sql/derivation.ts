/** What an output column of a select is made of: the one vocabulary the SQL readers and their users share. */

/** A column of a table the statement reads: `table` as written in the SQL (lowercase, dotted), if known. */
export interface ColumnRef {
  table: string | undefined;
  column: string;
}

export type Derivation =
  | { kind: 'column'; source: ColumnRef; renamed: boolean }
  | { kind: 'cast'; source: ColumnRef; type: string }
  | {
      kind: 'aggregate';
      fn: AggregateFn;
      source: ColumnRef | undefined;
      distinct: boolean;
      /** Of the select that aggregates (which may be a CTE or subquery): its GROUP BY keys, tables, WHERE. */
      groupBy: ColumnRef[] | undefined;
      from: string[];
      /** True when the rows aggregated are a subset of the tables' rows (a WHERE there or below it). */
      filtered: boolean;
    }
  | { kind: 'case'; source: ColumnRef; mapping: [string, string][]; otherwise: string | undefined }
  | { kind: 'arithmetic'; source: ColumnRef; op: '+' | '-' | '*' | '/'; operand: string }
  | { kind: 'coalesce'; source: ColumnRef; fallback: string };

export type AggregateFn = 'sum' | 'count' | 'avg' | 'min' | 'max';
