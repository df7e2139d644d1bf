import { requestDigest, type CallOptions } from '../../llm/client';

/**
 * Answers of batched calls, remembered per entity. A batch is several entities' requests in one call, and which
 * entities share a call changes from night to night (a written description drops a column from the next request,
 * the calibration sizes batches anew): so each entity's part of an answer is kept under the digest of the request
 * that entity alone would make in a batch (endpoint address, model, the batch prompt, its own evidence, the answer
 * schema), and an entity whose request was answered before is not sent again, whatever batch it falls in.
 */
export interface ItemMemory {
  /** The digest of one entity's request: the one-entity batch's user message under the batch prompt. */
  digest(system: string, user: string, schemaName: string): string;
  /**
   * The item kept for `digest` (counted as a remembered answer), or undefined. `accept`, when given, turns the kept
   * item into the one used, or undefined to use none (not counted).
   */
  recall(digest: string, accept?: (kept: unknown) => unknown): Promise<unknown>;
  keep(digest: string, item: unknown): Promise<void>;
}

/** The item memory of a call's options, or undefined when they have no answer memory. */
export function itemMemory(o: CallOptions): ItemMemory | undefined {
  const answers = o.answers;
  if (!answers) return undefined;
  const { endpoint } = o;
  return {
    digest: (system, user, schemaName) =>
      requestDigest(endpoint.baseUrl, {
        model: endpoint.model,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        item: schemaName,
      }),
    async recall(digest, accept) {
      const kept = await answers.recall(digest).catch(() => undefined);
      if (!kept || kept.cutShort) return undefined;
      let item: unknown;
      try {
        item = JSON.parse(kept.content);
      } catch {
        return undefined;
      }
      if (accept) item = accept(item);
      if (item === undefined) return undefined;
      o.onUsage?.({ promptTokens: 0, completionTokens: 0, estimated: false, digest, remembered: true });
      return item;
    },
    async keep(digest, item) {
      await answers.keep(digest, { content: JSON.stringify(item), cutShort: false }).catch(() => undefined);
      o.onKept?.(digest);
    },
  };
}

/** Call options without the answer memory: a batch's whole answer is kept per entity instead (ItemMemory). */
export function withoutAnswers(o: CallOptions): CallOptions {
  const { answers: _kept, ...rest } = o;
  return rest;
}
