import { z } from 'zod';

/** Categories of personal data. `business_contact` is deliberately absent: a company's phone is not PII. */
export const PiiCategory = z.enum([
  'person_name',
  'email',
  'phone',
  'address',
  'postal_code',
  'birth_date',
  'national_id',
  'payment_card',
  'bank_account',
  'ip_address',
  'username',
  'gender',
  'compensation',
  'free_text_personal',
  'precise_location',
  'credential',
]);
export type PiiCategory = z.infer<typeof PiiCategory>;
