import { afterEach, describe, expect, it } from 'vitest';
import { acmpCapabilityOf } from '../../src/a2a/acmp/buyer.js';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup } from '../helpers/host.js';
import { acmpHost, fixture } from './helpers.js';

afterEach(cleanup);

interface CardJson {
  capabilities: {
    streaming: boolean;
    extensions: { uri: string; description: string; required?: boolean; params: unknown }[];
  };
  skills: { id: string; inputModes: string[]; outputModes: string[]; tags: string[] }[];
}

const seed = fixture<CardJson>('acmp/seed-card-extension.json');
const seedExtension = seed.capabilities.extensions[0]!;

async function cardOf(host: { url: string }): Promise<CardJson> {
  return (await (await fetch(`${host.url}/.well-known/agent-card.json`)).json()) as CardJson;
}

function acmpExtension(card: CardJson): CardJson['capabilities']['extensions'][number] {
  const extension = card.capabilities.extensions.find((e) => e.uri === ACMP_EXTENSION_URI);
  if (!extension) throw new Error('no ACMP extension on the card');
  return extension;
}

describe('capability negotiation via the Agent Card (A2A binding §2)', () => {
  // The tests only read the card: one host per configuration. The seed card's host streams output (the
  // default) and beats every 5 s; the plain host has the test defaults.
  const seedHost = shared(() => acmpHost({ outputStreaming: true, heartbeatIntervalMs: 5000 }));
  const plainHost = shared(() => acmpHost());

  it("advertises the seed's literal extension params byte-identically after JCS", async () => {
    const host = seedHost();
    const card = await cardOf(host);
    const extension = acmpExtension(card);
    expect(canonicalJson(extension.params)).toBe(canonicalJson(seedExtension.params));
    expect(extension.uri).toBe(seedExtension.uri);
    expect(extension.description).toBe(seedExtension.description);
    expect(card.capabilities.streaming).toBe(true);
  });

  it('leaves required false by default (the card also serves plain A2A clients)', async () => {
    const host = plainHost();
    expect(acmpExtension(await cardOf(host)).required ?? false).toBe(false);
  });

  it('sets required when configured', async () => {
    const host = await acmpHost({ required: true });
    expect(acmpExtension(await cardOf(host)).required).toBe(true);
  });

  it('emits only what the features allow (no streaming, no heartbeats)', async () => {
    const host = await acmpHost({ outputStreaming: false, heartbeatIntervalMs: null });
    const params = acmpExtension(await cardOf(host)).params;
    expect(params).toEqual({
      version: '0.1.0',
      role: 'provider',
      accepts: ['acmp/invoke', 'acmp/cancel'],
      emits: [],
      features: { output_streaming: false, input_streaming: false },
    });
  });

  it('always declines input streaming (A2A binding §3.3)', async () => {
    const host = plainHost();
    const params = acmpExtension(await cardOf(host)).params as {
      accepts: string[];
      features: { input_streaming: boolean };
    };
    expect(params.features.input_streaming).toBe(false);
    expect(params.accepts).not.toContain('acmp/inputChunk');
  });

  it('lists one A2A skill per capability, in the ACMP media type', async () => {
    const host = plainHost();
    const card = await cardOf(host);
    const ids = demoCapabilities().map((c) => c.id);
    expect(card.skills.map((s) => s.id)).toEqual(ids);
    for (const skill of card.skills) {
      expect(skill.inputModes).toEqual(['application/acmp+json']);
      expect(skill.outputModes).toEqual(['application/acmp+json']);
      expect(skill.tags).toContain('acmp');
    }
  });

  it('a card without extensions is refused by the buyer with -33007, not a TypeError', async () => {
    const card = await fetchAgentCard(seedHost().url);
    const bare = { ...card, capabilities: { ...card.capabilities!, extensions: undefined as unknown as [] } };
    expect(() => acmpCapabilityOf(bare)).toThrow(expect.objectContaining({ code: -33007 }) as Error);
  });

  it('is read back by the buyer through the SDK card resolver', async () => {
    const host = seedHost();
    const capability = acmpCapabilityOf(await fetchAgentCard(host.url));
    expect(canonicalJson(capability)).toBe(canonicalJson(seedExtension.params));
  });
});
