import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { callStructured, estimateTokens, type TokenCount } from '../../llm/client';
import { MalformedOutputError } from '../../llm/errors';

// A real HTTP server on loopback that answers chat completions with or without `usage`.
let server: http.Server;
let withUsage = true;
let content = JSON.stringify({ ok: true });
let base = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'chatcmpl-t',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          ...(withUsage ? { usage: { prompt_tokens: 123, completion_tokens: 7, total_tokens: 130 } } : {}),
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

afterEach(() => {
  withUsage = true;
  content = JSON.stringify({ ok: true });
});

async function call(
  schemas: Pick<Parameters<typeof callStructured>[0], 'schema' | 'answerSchema'> = {
    schema: z.object({ ok: z.boolean() }),
  },
): Promise<TokenCount[]> {
  const seen: TokenCount[] = [];
  await callStructured({
    endpoint: {
      id: 'e',
      baseUrl: base,
      model: 'm',
      structuredOutput: 'json_object',
      maxOutputTokens: 50,
      timeoutMs: 5000,
    },
    system: 'You answer with JSON.',
    user: '{"question":"is it ok?"}',
    ...schemas,
    schemaName: 't',
    onUsage: (t) => seen.push(t),
  });
  return seen;
}

test("the provider's usage is recorded as it is, not estimated", async () => {
  withUsage = true;
  expect(await call()).toEqual([{ promptTokens: 123, completionTokens: 7, estimated: false }]);
});

test('without usage the tokens are estimated from the prompt and the answer, and say so', async () => {
  withUsage = false;
  expect(await call()).toEqual([
    {
      promptTokens: estimateTokens('You answer with JSON.') + estimateTokens('{"question":"is it ok?"}'),
      completionTokens: estimateTokens('{"ok":true}'),
      estimated: true,
    },
  ]);
});

describe('a lenient answerSchema (batched calls)', () => {
  // `schema` is what is sent as json_schema; the answer is checked against answerSchema instead.
  const strict = z.object({ items: z.array(z.object({ id: z.string(), n: z.number() })) });
  const lenient = z.object({ items: z.array(z.unknown()) });

  test('an answer with one bad item passes, with its tokens counted as the provider said', async () => {
    content = JSON.stringify({
      items: [
        { id: 'a', n: 1 },
        { id: 'b', n: 'two' },
      ],
    });
    expect(await call({ schema: strict, answerSchema: lenient })).toEqual([
      { promptTokens: 123, completionTokens: 7, estimated: false },
    ]);
    await expect(call({ schema: strict })).rejects.toBeInstanceOf(MalformedOutputError);
  });

  test.each([
    ['not JSON', '{"items": ['],
    ['not the top-level shape', '{"result":"done"}'],
  ])('an answer that is %s is still MalformedOutputError, and its tokens are still counted', async (_name, text) => {
    content = text;
    const seen: TokenCount[] = [];
    const err: unknown = await callStructured({
      endpoint: {
        id: 'e',
        baseUrl: base,
        model: 'm',
        structuredOutput: 'json_object',
        maxOutputTokens: 50,
        timeoutMs: 5000,
      },
      system: 's',
      user: 'u',
      schema: strict,
      answerSchema: lenient,
      schemaName: 't',
      onUsage: (t) => seen.push(t),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MalformedOutputError);
    expect(seen).toEqual([{ promptTokens: 123, completionTokens: 7, estimated: false }]);
  });
});
