import { defineQuery } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { SA_CATALOG, SA_MODE, SA_PARTIAL } from '../domain/ids';

/** Live progress of a sweep (the `progress` query). */
export interface SweepProgress {
  phase: 'opening' | 'sweeping' | 'reporting' | 'done';
  catalog: string;
  mode: string;
  pagesDone: number;
  pageCount: number;
  entitiesRequested: number;
  entitiesDone: number;
  approved: number;
  rejected: number;
  notReviewed: number;
  written: number;
  failures: number;
  retiredEndpoints: string[];
  breakerTripped: boolean;
  execution: number;
}

export const progressQuery = defineQuery<SweepProgress>('progress');

export const SA_KEYS = {
  partial: defineSearchAttributeKey(SA_PARTIAL, SearchAttributeType.BOOL),
  catalog: defineSearchAttributeKey(SA_CATALOG, SearchAttributeType.KEYWORD),
  mode: defineSearchAttributeKey(SA_MODE, SearchAttributeType.KEYWORD),
};
