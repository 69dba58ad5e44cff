import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectShape, expectThat } from './expect.js';

describe('demo expectations', () => {
  it('expectThat throws `expected …` when the condition fails', () => {
    expect(() => expectThat(false, 'a task back')).toThrow('expected a task back');
  });

  it('expectShape returns a value its schema decodes', () => {
    const schema = z.looseObject({ min_price_cu: z.number() });
    expect(expectShape(schema, { min_price_cu: 0.001, extra: 1 }, 'a price')).toEqual({
      min_price_cu: 0.001,
      extra: 1,
    });
  });

  it.each([[undefined], [{ min_price_cu: '0.001' }], [{}], ['0.001']])(
    'expectShape refuses %j with `expected …`, never returning it mistyped',
    (value) => {
      const schema = z.looseObject({ min_price_cu: z.number() });
      expect(() => expectShape(schema, value, 'the -33001 data to name min_price_cu')).toThrow(
        'expected the -33001 data to name min_price_cu',
      );
    },
  );
});
