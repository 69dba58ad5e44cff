import { createA2AClient, fetchAgentCard } from '../../a2a/client.js';
import { encodeTextPart, encodeUserMessage, isCompleted, taskStateName } from '../../a2a/part-codec.js';
import { expectThat } from './expect.js';
import type { DemoScenario } from './scenarios.js';

/** Card → plain A2A task over JSON-RPC → the same task read back over REST. */
export const foundationScenario: DemoScenario = {
  title: 'A2A host: agent card, a plain task over JSON-RPC, read back over REST',
  async run(ctx) {
    const card = await fetchAgentCard(ctx.url, { caCert: ctx.caCert });
    ctx.say(
      `   card: "${card.name}", ${card.supportedInterfaces.length} interfaces, streaming=${String(card.capabilities?.streaming)}`,
    );
    ctx.say(`   extensions: ${(card.capabilities?.extensions ?? []).map((e) => e.uri).join(', ') || 'none'}`);
    const rpc = await createA2AClient(card, { caCert: ctx.caCert, transport: 'JSONRPC' });
    const result = await rpc.sendMessage({
      tenant: '',
      message: encodeUserMessage({ messageId: crypto.randomUUID(), parts: [encodeTextPart('hello, host')] }),
      configuration: undefined,
      metadata: undefined,
    });
    expectThat('id' in result, 'a task back');
    const task = result;
    ctx.say(`   JSON-RPC SendMessage → task ${task.id} ${taskStateName(task.status?.state)}`);
    const rest = await createA2AClient(card, { caCert: ctx.caCert, transport: 'HTTP+JSON' });
    const again = await rest.getTask({ tenant: '', id: task.id });
    expectThat(isCompleted(again.status?.state), 'the task completed');
    ctx.say(`   REST GetTask → ${taskStateName(again.status?.state)}, ${again.artifacts.length} artifact(s)`);
  },
};
