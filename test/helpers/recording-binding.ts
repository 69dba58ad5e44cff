import type { Message, StreamResponse } from '@a2a-js/sdk';
import type { A2ABinding, BindingCall } from '../../src/a2a/binding.js';
import {
  encodeAgentMessage,
  encodeDataPart,
  partMediaType,
  type InboundMessage,
} from '../../src/a2a/part-codec.js';
import type { HostModule } from '../../src/server/module.js';

/**
 * A binding for host tests: claims messages whose first part is a data part of `mediaType` (or, without
 * a media type, whose data has a `probe` key), records what it decoded, and answers with an agent message.
 */
export function recordingModule(options: { uri: string; mediaType: string; required?: boolean }): {
  module: HostModule;
  calls: BindingCall[];
} {
  const calls: BindingCall[] = [];
  const reply = (call: BindingCall): Message => {
    calls.push(call);
    const first = call.message.parts[0];
    return encodeAgentMessage({
      messageId: crypto.randomUUID(),
      parts: [encodeDataPart({ received: first?.kind === 'data' ? first.data : null }, options.mediaType)],
    });
  };
  const binding: A2ABinding = {
    id: 'recording',
    extension: {
      uri: options.uri,
      description: 'test binding',
      required: options.required ?? false,
      params: { probe: true },
    },
    skills: [],
    claims(message: InboundMessage) {
      const first = message.parts[0];
      if (first?.kind !== 'data') return false;
      const type = partMediaType(first);
      return (
        type === options.mediaType ||
        (type === '' && typeof first.data === 'object' && first.data !== null && 'acmp_method' in first.data)
      );
    },
    sendMessage: (call) => Promise.resolve(reply(call)),
    async *sendMessageStream(call): AsyncGenerator<StreamResponse> {
      const value = await Promise.resolve(reply(call));
      yield { payload: { $case: 'message', value } };
    },
  };
  return { module: { name: 'recording', start: () => ({ binding }) }, calls };
}
