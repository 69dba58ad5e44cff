import { describe, expect, it } from 'vitest';
import { normalizeInboundMessageJson } from './part-codec.js';

describe('normalizeInboundMessageJson: role spellings', () => {
  it('maps the v0.3 spellings and leaves any other role as it is, Object.prototype names included', () => {
    expect(normalizeInboundMessageJson({ role: 'user' }, 'v1')).toEqual({ role: 'ROLE_USER' });
    expect(normalizeInboundMessageJson({ role: 'agent' }, 'v0.3-rest')).toEqual({ role: 'ROLE_AGENT' });
    for (const role of ['constructor', 'toString', '__proto__']) {
      expect(normalizeInboundMessageJson({ role }, 'v1')).toEqual({ role });
      expect(normalizeInboundMessageJson({ role }, 'v0.3-rest')).toEqual({ role });
    }
  });
});
