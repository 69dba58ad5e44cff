import { ACP_EXTENSION_URI, ACP_KINDS, ACP_VERSION, type Kind } from '../../acpspec/constants.js';
import { isJsonObject } from '../../shared/json.js';
import type { ConformContext } from '../check.js';
import { need } from './outcome.js';

/** The card's ACPspec extension entry, or undefined when the card lists none (seed 001 "Declaring Support"). */
function acpExtensionOf(card: unknown): Record<string, unknown> | undefined {
  const capabilities = isJsonObject(card) ? card['capabilities'] : undefined;
  const extensions = isJsonObject(capabilities) ? capabilities['extensions'] : undefined;
  if (!Array.isArray(extensions)) return undefined;
  const entry: unknown = extensions.find((e) => isJsonObject(e) && e['uri'] === ACP_EXTENSION_URI);
  return isJsonObject(entry) ? entry : undefined;
}

/** The card's ACPspec extension entry; skips the check when there is none (the agent does not serve ACPspec). */
export function needAcpExtension(ctx: ConformContext): Record<string, unknown> {
  const extension = acpExtensionOf(ctx.card);
  need(extension !== undefined, `the card lists no ${ACP_EXTENSION_URI} extension: ACPspec is not served`);
  return extension;
}

/** `value` as a list of envelope kinds, or undefined when it is not a non-empty list of distinct kinds. */
export function kindsOf(value: unknown): Kind[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const kinds = value.map((v) => ACP_KINDS.find((k) => k === v));
  if (kinds.some((k) => k === undefined)) return undefined;
  const known = kinds.filter((k): k is Kind => k !== undefined);
  return new Set(known).size === known.length ? known : undefined;
}

/** What the wire checks read from the card: the envelope version and the kinds the agent accepts. */
export interface AcpDeclared {
  readonly acpVersion: string;
  readonly accepts: readonly Kind[];
}

/**
 * The card's declaration as the wire checks need it; skips the check when the card advertises no
 * ACPspec (the agent does not serve the binding), when `acp_version` or `accepts` is unusable (that is
 * `acpspec-card-params`' failure), or when the version is not the one the kit's sample envelopes are.
 */
export function declaredOf(ctx: ConformContext): AcpDeclared {
  const extension = needAcpExtension(ctx);
  const params = isJsonObject(extension['params']) ? extension['params'] : {};
  const accepts = kindsOf(params['accepts']);
  const version = params['acp_version'];
  need(
    typeof version === 'string' && accepts !== undefined,
    'the card declares no usable acp_version/accepts (see acpspec-card-params)',
  );
  need(
    version === ACP_VERSION,
    `the card declares acp_version ${version}; the kit's sample envelopes are ${ACP_VERSION}`,
  );
  return { acpVersion: version, accepts };
}

/** Skips unless the agent declares it accepts `kind`. */
export function needAccepts(declared: AcpDeclared, kind: Kind): void {
  need(declared.accepts.includes(kind), `the card's accepts lists no ${kind}`);
}
