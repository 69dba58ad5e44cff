import type { Client } from '@a2a-js/sdk/client';
import { ACMP_EXTENSION_URI, L7_METHOD } from '../../acmp/wire/constants.js';
import type { ProveIdentityParams } from '../../acmp/wire/identity-messages.js';
import { ProveIdentityResultSchema, type ProveIdentityResult } from '../../acmp/identity/prove-identity.js';
import type { IdSource } from '../../shared/ids.js';
import { decodeMessage, encodeUserMessage } from '../part-codec.js';
import { acmpPart } from '../acmp-part.js';
import { readReply } from './negotiation-client.js';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';

/**
 * `acmp/proveIdentity` over A2A (Layer 7 §3): one direct message answered by one message, as the
 * Layer 6 flat calls (docs/acmp-identity.md "proveIdentity on every binding").
 * @throws AcmpError the provider's refusal; -33099 `protocol_violation` when answered with a task;
 *   LocalError `REFUSED` when the answer is not a proveIdentity result.
 */
export async function askIdentity(
  client: Client,
  params: ProveIdentityParams,
  options: { ids: IdSource; signal?: AbortSignal },
): Promise<ProveIdentityResult> {
  const message = encodeUserMessage({
    messageId: options.ids.newId('msg'),
    parts: [acmpPart({ acmp_method: L7_METHOD.proveIdentity, params })],
    extensions: [ACMP_EXTENSION_URI],
  });
  const answer = await client.sendMessage(
    { tenant: '', message, configuration: undefined, metadata: undefined },
    { signal: options.signal, serviceParameters: { 'A2A-Extensions': ACMP_EXTENSION_URI } },
  );
  if ('id' in answer)
    throw new AcmpError(ACMP_CODE.internal, {
      reason: 'protocol_violation',
      detail: `${L7_METHOD.proveIdentity} was answered with a task`,
    });
  return readReply(decodeMessage(answer).parts[0], ProveIdentityResultSchema, L7_METHOD.proveIdentity);
}
