/** What a claim is: its kinds (the gate's rule ids come from them) and how a detector reports one. */

export type ClaimKind =
  | 'cadence'
  | 'row-count'
  | 'ownership'
  | 'quality'
  | 'currency'
  | 'consumer'
  | 'provenance'
  | 'reference'
  | 'nullability'
  | 'schema'
  | 'derivation'
  | 'figure';

export interface UnsupportedClaim {
  kind: ClaimKind;
  /** The words in the description that made the claim. */
  phrase: string;
  /** One line for a reviewer: what was claimed and why the evidence does not carry it. */
  message: string;
}

/** How a detector reports a claim: its kind, the words that made it, and why the evidence does not carry it. */
export type Add = (kind: ClaimKind, phrase: string, why: string) => void;

/** Catalog names go into messages: keep each on one short line. */
export function clip(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 3)}...`;
}
