import { AgentCard, type AgentCard as AgentCardType } from '@a2a-js/sdk';

/** Checks an extension's params; returns problems (empty when fine). */
export type ExtensionParamsCheck = (params: Record<string, unknown> | undefined) => string[];

/** A card checked and described for people (text) and programs (json). */
export interface CardSummary {
  text: string;
  json: unknown;
  problems: string[];
}

/**
 * Checks a parsed card against what A2A §4.4 requires of it (name, at least one interface with an
 * absolute URL — a `host:port` target for gRPC —, extension URIs) and each known extension's params, and describes it.
 */
export function describeCard(
  card: AgentCardType,
  checks: Record<string, ExtensionParamsCheck> = {},
): CardSummary {
  const problems: string[] = [];
  if (!card.name) problems.push('card has no name');
  if ((card.supportedInterfaces ?? []).length === 0) problems.push('card lists no supportedInterfaces');
  for (const i of card.supportedInterfaces ?? []) {
    // A gRPC interface is a dial target (`host:port`, docs/host.md "gRPC"); an absolute URL is accepted too.
    if (
      i.protocolBinding === 'GRPC'
        ? !/^(https?:\/\/)?[^/\s]+:\d+\/?$|^https?:\/\//.test(i.url)
        : !/^https?:\/\//.test(i.url)
    ) {
      problems.push(
        `interface ${i.protocolBinding} has no ${i.protocolBinding === 'GRPC' ? 'host:port address' : 'absolute http(s) URL'}`,
      );
    }
  }
  const lines = [`${card.name} ${card.version}`, card.description, '', 'interfaces:'];
  for (const i of card.supportedInterfaces ?? [])
    lines.push(`  ${i.protocolBinding.padEnd(10)} A2A ${i.protocolVersion.padEnd(4)} ${i.url}`);
  lines.push(`streaming: ${card.capabilities?.streaming === true}`);
  const schemes = Object.entries(card.securitySchemes ?? {}).map(
    ([name, s]) => `${name} (${s.scheme?.$case ?? 'unknown'})`,
  );
  lines.push(`security: ${schemes.length > 0 ? schemes.join(', ') : 'none'}`);
  lines.push('extensions:');
  for (const ext of card.capabilities?.extensions ?? []) {
    if (!ext.uri) problems.push('an extension has no uri');
    lines.push(`  ${ext.uri}${ext.required ? ' (required)' : ''} — ${ext.description}`);
    if (ext.params) lines.push(`    params: ${JSON.stringify(ext.params)}`);
    for (const p of checks[ext.uri]?.(ext.params) ?? []) problems.push(`${ext.uri}: ${p}`);
  }
  lines.push('skills:');
  for (const s of card.skills ?? []) lines.push(`  ${s.id} — ${s.description.replaceAll('\n', '\n    ')}`);
  return { text: lines.join('\n'), json: AgentCard.toJSON(card), problems };
}
