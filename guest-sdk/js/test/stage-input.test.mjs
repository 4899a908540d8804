// The JS SDK's StageInput, in node (`hak-js-test guest-sdk/js/test/*.test.mjs`): what a policy reads of
// the stage JSON is what the host wrote, however it is read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StageInput } from '@hak/guest';

const input = (params) =>
  new StageInput({ stage: 'post-params-normalization', method: 'm', toolType: 'transaction', params });

test('normalisedParams written first is read alone, as the whole text reads it', () => {
  const text = '{"normalisedParams":{"hbarTransfers":[{"accountId":"0.0.2","amount":"5"}],"memo":",\\"rawParams\\":"},"rawParams":{"x":1},"context":{"mode":"returnBytes"}}';
  assert.deepEqual(input(text).normalisedParams, JSON.parse(text).normalisedParams);
  assert.deepEqual(input(text).rawParams, { x: 1 });
});

test('a rawParams key inside normalisedParams falls back to the whole text', () => {
  const text = '{"normalisedParams":{"a":{"b":1,"rawParams":2},"c":3},"rawParams":{"rawParams":4},"context":{}}';
  assert.deepEqual(input(text).normalisedParams, { a: { b: 1, rawParams: 2 }, c: 3 });
});

test('at later stages (normalisedParams not first) and without it, the whole text is read', () => {
  const later = '{"transactionOutcome":"unknown","coreActionResult":{"type":"T"},"normalisedParams":{"n":1},"rawParams":{},"context":{}}';
  assert.deepEqual(input(later).normalisedParams, { n: 1 });
  assert.equal(input('{"rawParams":{},"context":{}}').normalisedParams, undefined);
  const read = input('{"normalisedParams":{"n":2},"rawParams":{},"context":{}}');
  assert.equal(read.params.context !== undefined, true);
  assert.deepEqual(read.normalisedParams, { n: 2 });
});

test('reading normalisedParams written first parses only its own text', () => {
  const text = '{"normalisedParams":{"n":1},"rawParams":{"big":"' + 'x'.repeat(1000) + '"},"context":{}}';
  const parsed = [];
  const parse = JSON.parse;
  JSON.parse = (s, ...rest) => {
    parsed.push(s.length);
    return parse(s, ...rest);
  };
  try {
    assert.deepEqual(input(text).normalisedParams, { n: 1 });
  } finally {
    JSON.parse = parse;
  }
  assert.deepEqual(parsed, ['{"n":1}'.length]);
});
