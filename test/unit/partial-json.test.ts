import { completeItems } from '../../llm/partial-json';

// What a batch answer cut off at max_tokens still holds: every element that closed, never a half one.

const answer = {
  entities: [
    { id: 'a', descriptions: [{ target: 'table', column: null, text: 'Orders, one row per "order" {x}.' }] },
    { id: 'b', descriptions: [] },
    { id: 'c', tags: [{ column: 'email', pii: true, confidence: 0.9, explanation: 'an address [sic]\\' }] },
  ],
};

describe('completeItems', () => {
  const text = JSON.stringify(answer);
  const spaced = JSON.stringify(answer, null, 2);

  test('a compact text cut anywhere gives exactly the elements that closed before the cut', () => {
    // Where each element's text ends in the compact form: `{"entities":[` then the elements, comma-separated.
    const ends: number[] = [];
    let at = '{"entities":['.length;
    for (const e of answer.entities) {
      at += JSON.stringify(e).length;
      ends.push(at);
      at += 1;
    }
    for (let cut = 0; cut <= text.length; cut++) {
      const got = completeItems(text.slice(0, cut), 'entities');
      if (cut < '{"entities":['.length) expect(got).toBeUndefined();
      else expect(got).toEqual(answer.entities.filter((_e, k) => ends[k]! <= cut));
    }
  });

  test('an indented text cut anywhere gives a prefix of the elements, growing with the cut, all at the end', () => {
    let last = 0;
    for (let cut = spaced.indexOf('[') + 1; cut <= spaced.length; cut++) {
      const got = completeItems(spaced.slice(0, cut), 'entities')!;
      expect(got).toEqual(answer.entities.slice(0, got.length));
      expect(got.length).toBeGreaterThanOrEqual(last);
      last = got.length;
    }
    expect(completeItems(spaced, 'entities')).toEqual(answer.entities);
  });

  test('an element is taken only once it closes: strings with brackets, quotes and escapes do not fool it', () => {
    const cutInC = text.slice(0, text.indexOf('[sic]') + 3);
    expect(completeItems(cutInC, 'entities')).toEqual(answer.entities.slice(0, 2));
    const cutInA = text.slice(0, text.indexOf('{x}') + 2);
    expect(completeItems(cutInA, 'entities')).toEqual([]);
  });

  test('the array is found after other top-level keys, and only at the top level', () => {
    expect(completeItems('{"note":{"entities":[1]},"n":3,"verdicts":[{"proposalId":"p"},{"propo', 'verdicts')).toEqual([
      { proposalId: 'p' },
    ]);
    expect(completeItems('{"note":{"entities":[1]},"other":[2', 'entities')).toBeUndefined();
    expect(completeItems('{"entities":[1,2,3', 'entities')).toEqual([1, 2]);
  });

  test('no object, no such key, or a value that is no array: undefined', () => {
    expect(completeItems('', 'entities')).toBeUndefined();
    expect(completeItems('[{"id":"a"}]', 'entities')).toBeUndefined();
    expect(completeItems('{"verdicts":[]}', 'entities')).toBeUndefined();
    expect(completeItems('{"entities":{"id":"a"}}', 'entities')).toBeUndefined();
    expect(completeItems('Sorry, I cannot help with that.', 'entities')).toBeUndefined();
  });
});
