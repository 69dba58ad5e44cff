import { canonicalBytes } from '../shared/jcs.js';
import type { Envelope } from './envelope.js';

/**
 * Canonical bytes of an envelope: its RFC 8785 (JCS) serialisation (docs/acpspec-binding.md "Canonical bytes and the conformance rule"). HTTPS
 * bodies are exactly these bytes; an A2A DataPart's `data` canonicalises to the same bytes.
 */
export function canonicalEnvelopeBytes(envelope: Envelope): Buffer {
  return canonicalBytes(envelope);
}
