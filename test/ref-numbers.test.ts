import { describe, expect, it } from 'vitest';
import { RefNumbers } from '../src/core/snapshot/render.js';

/** How a replaced element's ref passes to what replaces it (the page-side part is in handles.test.ts). */
describe('ref numbers of one document', () => {
  const row = (name: string) => () => `button\u0000Open\u0000\u0000${name}`;

  it('keeps an element its number, and gives a new element the number of the one gone element with its key', () => {
    const numbers = new RefNumbers('doc');
    expect([numbers.of(1, row('Ann')), numbers.of(2, row('Bob'))]).toEqual([1, 2]);
    expect(numbers.of(1, row('Ann'))).toBe(1);
    numbers.left([1, 2]);
    // Bob's row drawn again: the words before it tell which gone "Open" it is.
    expect(numbers.of(3, row('Bob'))).toBe(2);
    expect(numbers.of(4, row('Ann'))).toBe(1);
  });

  it('guesses at none when several gone elements share every key, and never hands out a number still held', () => {
    const numbers = new RefNumbers('doc');
    numbers.of(1, row('Same'));
    numbers.of(2, row('Same'));
    numbers.left([1, 2]);
    expect(numbers.of(3, row('Same'))).toBe(3);
    // Element 4 is new while 3 is still on the page: 3's number is not free.
    expect(numbers.of(4, row('Same'))).toBe(4);
    // Without keys (a nameless element) a new element always gets a new number.
    numbers.left([3]);
    expect(numbers.of(5)).toBe(5);
    // A gone element that comes back is a new element too: three gone ones share its keys, so a new number.
    expect(numbers.of(3, row('Same'))).toBe(6);
  });

  it('gives up on a key given too often (a feed of "Reply" buttons): its elements always get new numbers', () => {
    const numbers = new RefNumbers('doc');
    const reply = () => 'button\u0000Reply\u0000';
    for (let id = 1; id <= 64; id++) numbers.of(id, reply);
    numbers.left([64]);
    // Up to the bound the one gone "Reply" is found again...
    expect(numbers.of(100, reply)).toBe(64);
    numbers.of(101, reply);
    numbers.left([100]);
    // ...past it the key says too little: a new number.
    expect(numbers.of(102, reply)).toBe(66);
  });
});
