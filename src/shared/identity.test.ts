import { describe, expect, it } from 'vitest';
import {
  agentIdentity,
  ANONYMOUS_IDENTITY,
  isIdentity,
  legacyIdentityOf,
  tokenIdentity,
} from './identity.js';

describe('caller identities', () => {
  it('accepts exactly the documented forms', () => {
    for (const id of [
      agentIdentity('alice'),
      tokenIdentity('a-secret-of-sixteen'),
      ANONYMOUS_IDENTITY,
      'legacy:token-3',
      'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
      'did:web:example.com%3A8443',
    ]) {
      expect(isIdentity(id)).toBe(true);
    }
    for (const id of [
      '',
      'token-0',
      'unknown',
      'agent:',
      'agent:Alice',
      'token:abc',
      'legacy:agent:alice',
      'did:',
      'did:web:a#k',
      'did:web:a/b',
    ]) {
      expect(isIdentity(id)).toBe(false);
    }
  });

  it('maps only position-based owners to legacy identities', () => {
    expect(legacyIdentityOf('token-12')).toBe('legacy:token-12');
    expect(legacyIdentityOf('token-x')).toBeUndefined();
    expect(legacyIdentityOf('agent:alice')).toBeUndefined();
  });

  it('derives a token identity that does not contain the secret', () => {
    const secret = 'deadbeefdeadbeefdeadbeefdeadbeef';
    expect(tokenIdentity(secret)).toMatch(/^token:[0-9a-f]{32}$/);
    expect(tokenIdentity(secret)).not.toContain(secret);
  });
});
