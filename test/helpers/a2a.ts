import type { Client } from '@a2a-js/sdk/client';
import { encodeTextPart, encodeUserMessage } from '../../src/a2a/part-codec.js';

/** Sends one plain text message (the host's echo executor answers with a completed task); returns its id. */
export async function createPlainTask(client: Client, text = 'hello'): Promise<string> {
  const result = await client.sendMessage({
    tenant: '',
    message: encodeUserMessage({ messageId: crypto.randomUUID(), parts: [encodeTextPart(text)] }),
    configuration: undefined,
    metadata: undefined,
  });
  if (!('id' in result)) throw new Error('expected a task, got a message');
  return result.id;
}
