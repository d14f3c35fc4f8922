import { describe, expect, it } from 'vitest';
import { createTurns } from '../../../src/proxy/translated/turns.js';

const turnsDone = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('translations in turns', () => {
  it('runs each in a task of its own, in the order they came, also those queued by one running', async () => {
    const turns = createTurns();
    const ran: string[] = [];
    turns(() => {
      ran.push('a');
      // Settled before the next turn: the next translation is no part of this one's task.
      void Promise.resolve().then(() => ran.push('after a'));
      turns(() => ran.push('c'));
    });
    turns(() => ran.push('b'));
    expect(ran).toEqual([]);
    await turnsDone();
    expect(ran).toEqual(['a', 'after a', 'b', 'c']);
    turns(() => ran.push('again'));
    await turnsDone();
    expect(ran.at(-1)).toBe('again');
  });
});
