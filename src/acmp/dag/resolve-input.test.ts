import { describe, expect, it } from 'vitest';
import type { Payload } from '../wire/task-messages.js';
import { DagError } from './dag-errors.js';
import { resolveInput } from './resolve-input.js';

const split: Payload = {
  type: 'json',
  data: { chunks: ['First part.', 'Second part.'], meta: { n: 2, tags: [{ name: 'a' }] } },
};
const outputs = new Map<string, Payload>([
  ['task_split_01', split],
  ['task_sent_02a', { type: 'json', data: { sentiment: 'positive' } }],
  ['task_sent_02b', { type: 'json', data: { sentiment: 'negative' } }],
  ['task_text', { type: 'text', data: 'plain words' }],
]);
const at = { taskId: 'task_x' };

describe('input references (Layer 2 §3 "Input References", path grammar)', () => {
  it('passes a literal input unchanged', () => {
    expect(resolveInput({ type: 'text', data: 'hi' }, outputs, at)).toEqual({ type: 'text', data: 'hi' });
  });

  it('passes the whole output object without field, keeping its type', () => {
    expect(resolveInput({ source: { from_task: 'task_text' } }, outputs, at)).toEqual({
      type: 'text',
      data: 'plain words',
    });
  });

  it('treats field "data" as the whole payload', () => {
    expect(resolveInput({ source: { from_task: 'task_split_01', field: 'data' } }, outputs, at)).toEqual(
      split,
    );
  });

  it('selects data.chunks[0] as text (a string value)', () => {
    expect(
      resolveInput({ source: { from_task: 'task_split_01', field: 'data.chunks[0]' } }, outputs, at),
    ).toEqual({
      type: 'text',
      data: 'First part.',
    });
  });

  it('selects nested members and indexes as json (a non-string value)', () => {
    expect(resolveInput({ source: { from_task: 'task_split_01', field: 'data.meta' } }, outputs, at)).toEqual(
      {
        type: 'json',
        data: { n: 2, tags: [{ name: 'a' }] },
      },
    );
    expect(
      resolveInput({ source: { from_task: 'task_split_01', field: 'data.meta.tags[0].name' } }, outputs, at),
    ).toEqual({
      type: 'text',
      data: 'a',
    });
    expect(
      resolveInput({ source: { from_task: 'task_split_01', field: 'data.meta.n' } }, outputs, at),
    ).toEqual({ type: 'json', data: 2 });
  });

  it('passes from_tasks outputs as an ordered json array of output objects', () => {
    expect(resolveInput({ source: { from_tasks: ['task_sent_02b', 'task_sent_02a'] } }, outputs, at)).toEqual(
      {
        type: 'json',
        data: [
          { type: 'json', data: { sentiment: 'negative' } },
          { type: 'json', data: { sentiment: 'positive' } },
        ],
      },
    );
  });

  it('applies field to each of from_tasks', () => {
    expect(
      resolveInput(
        { source: { from_tasks: ['task_sent_02a', 'task_sent_02b'], field: 'data.sentiment' } },
        outputs,
        at,
      ),
    ).toEqual({
      type: 'json',
      data: ['positive', 'negative'],
    });
  });

  it.each([['data.chunks[2]'], ['data.missing'], ['data.chunks.x'], ['data.meta[0]']])(
    'refuses %s, which selects nothing',
    (field) => {
      expect(() => resolveInput({ source: { from_task: 'task_split_01', field } }, outputs, at)).toThrow(
        DagError,
      );
      expect(() => resolveInput({ source: { from_task: 'task_split_01', field } }, outputs, at)).toThrow(
        /DAG_REFERENCE_UNRESOLVED/,
      );
    },
  );

  it('refuses a path into a text output', () => {
    expect(() => resolveInput({ source: { from_task: 'task_text', field: 'data.x' } }, outputs, at)).toThrow(
      /selects nothing at data\.x/,
    );
  });
});
