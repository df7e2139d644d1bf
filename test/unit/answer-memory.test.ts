import * as http from 'node:http';
import { mkdtempSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { callStructured, requestDigest, type TokenCount } from '../../llm/client';
import { MalformedOutputError } from '../../llm/errors';
import { fileAnswers } from '../../state/file/answers';

// A real HTTP server on loopback that counts the requests it is sent and answers with `content`.
let server: http.Server;
let sent = 0;
let content = JSON.stringify({ ok: true });
let base = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      sent++;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: `chatcmpl-${sent}`,
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  sent = 0;
  content = JSON.stringify({ ok: true });
});

const endpoint = (model = 'm', baseUrl = base) => ({
  id: 'e',
  baseUrl,
  model,
  structuredOutput: 'json_object' as const,
  maxOutputTokens: 50,
  timeoutMs: 5000,
});

function ask(answers: ReturnType<typeof fileAnswers>, user: string, model = 'm', seen: TokenCount[] = []) {
  return callStructured({
    endpoint: endpoint(model),
    system: 'You answer with JSON.',
    user,
    schema: z.object({ ok: z.boolean() }),
    schemaName: 't',
    answers,
    onUsage: (t) => seen.push(t),
  });
}

describe('answers remembered by their request', () => {
  test('a request byte for byte one answered before is answered from the store, not sent; any other is sent', async () => {
    const answers = fileAnswers(mkdtempSync(path.join(os.tmpdir(), 'answers-')));
    const seen: TokenCount[] = [];
    const first = await ask(answers, '{"entity":"raw.orders"}', 'm', seen);
    expect(first.remembered).toBeUndefined();
    expect(sent).toBe(1);
    const again = await ask(answers, '{"entity":"raw.orders"}', 'm', seen);
    expect(sent).toBe(1);
    expect(again).toMatchObject({ output: { ok: true }, remembered: true, digest: first.digest });
    // The remembered answer spent nothing: its usage says so and counts no tokens.
    expect(seen.map((t) => [t.remembered ?? false, t.promptTokens])).toEqual([
      [false, 100],
      [true, 0],
    ]);
    await ask(answers, '{"entity":"raw.customers"}');
    await ask(answers, '{"entity":"raw.orders"}', 'm-2');
    expect(sent).toBe(3);
  });

  test('every worker of the store shares it, and a forgotten answer is asked again', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'answers-'));
    const r = await ask(fileAnswers(dir), '{"entity":"a"}');
    expect((await ask(fileAnswers(dir), '{"entity":"a"}')).remembered).toBe(true);
    await fileAnswers(dir).forget([r.digest!]);
    expect((await ask(fileAnswers(dir), '{"entity":"a"}')).remembered).toBeUndefined();
    expect(sent).toBe(2);
  });

  test('an answer that fails its schema is not kept: the retry is sent', async () => {
    const answers = fileAnswers(mkdtempSync(path.join(os.tmpdir(), 'answers-')));
    content = JSON.stringify({ ok: 'yes' });
    await expect(ask(answers, '{"entity":"a"}')).rejects.toBeInstanceOf(MalformedOutputError);
    content = JSON.stringify({ ok: true });
    expect((await ask(answers, '{"entity":"a"}')).remembered).toBeUndefined();
    expect(sent).toBe(2);
  });

  test('an unreadable store is no failure: the request is sent', async () => {
    const broken = {
      recall: () => Promise.reject(new Error('disk gone')),
      keep: () => Promise.reject(new Error('disk gone')),
      forget: () => Promise.resolve(),
    };
    await expect(ask(broken, '{"entity":"a"}')).resolves.toMatchObject({ output: { ok: true } });
    expect(sent).toBe(1);
  });

  test("the digest is the request's: address, model, prompt and limit", () => {
    const body = (model: string, user: string, max = 50) => ({
      model,
      messages: [{ role: 'user', content: user }],
      max_tokens: max,
    });
    const at = (b: ReturnType<typeof body>) => requestDigest('http://a/v1', b);
    expect(at(body('m', 'x'))).toBe(at(body('m', 'x')));
    expect(new Set([body('m', 'x'), body('n', 'x'), body('m', 'y'), body('m', 'x', 60)].map(at)).size).toBe(4);
    expect(requestDigest('http://b/v1', body('m', 'x'))).not.toBe(at(body('m', 'x')));
  });
});

describe('the file store keeps a bounded number of answers', () => {
  test('beyond its bound the least recently used go first, and a killed write is never read', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'answers-'));
    const book = fileAnswers(dir, 3);
    const d = (i: number) => i.toString(16).padStart(32, '0');
    for (const i of [1, 2, 3]) await book.keep(d(i), { content: `{"n":${i}}`, cutShort: false });
    // Used since: 1 becomes the most recent, so 2 is the oldest when a fourth arrives.
    await new Promise((r) => setTimeout(r, 20));
    await book.recall(d(1));
    for (const i of [4, 5, 6]) await book.keep(d(i), { content: `{"n":${i}}`, cutShort: false });
    const left = await Promise.all([1, 2, 3, 4, 5, 6].map(async (i) => (await book.recall(d(i))) !== undefined));
    expect(left.filter(Boolean)).toHaveLength(3);
    expect(left[1]).toBe(false);
    // A temporary file a killed write left beside an answer is not an answer.
    const shard = path.join(dir, 'answers', d(9).slice(0, 2));
    mkdirSync(shard, { recursive: true });
    writeFileSync(path.join(shard, `${d(9)}.json.99.x.tmp`), '{"content":"{}","cutS');
    expect(await book.recall(d(9))).toBeUndefined();
    expect(readdirSync(shard).length).toBeGreaterThan(0);
  });
});
