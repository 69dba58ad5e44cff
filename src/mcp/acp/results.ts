import type { CallToolResult } from '@modelcontextprotocol/server';
import { ACP_PART_KEYS } from '../../acpspec/constants.js';
import { toAcpErrorObject, type AcpErrorIds } from '../../acpspec/errors.js';
import { canonicalJson } from '../../shared/jcs.js';
import { errorFields, type Logger } from '../../shared/logger.js';

/**
 * A successful tool result (docs/acpspec-mcp.md "Tool results"): `structuredContent` is the answer, the
 * text content its canonical JSON (RFC 8785) — for a state, exactly the bytes the A2A and HTTPS bindings
 * answer — so a client that reads only text sees the same value.
 */
export function toolResult(structured: Record<string, unknown>, text?: string): CallToolResult {
  return {
    structuredContent: structured,
    content: [{ type: 'text', text: text ?? canonicalJson(structured) }],
  };
}

/**
 * The tool result of a refusal: `isError` with `{acp_error}` (code, message, retryable, `details` with every
 * schema issue and its pointer) as structured and as text content. ACPspec errors are tool errors, never
 * JSON-RPC errors, so a model reads and corrects them; anything not an ACPspec error becomes `ACP_INTERNAL`
 * with the generic message (cause logged, never sent: STYLE.md "Errors").
 */
export function toolError(error: unknown, context: { logger: Logger; ids?: AcpErrorIds }): CallToolResult {
  const object = toAcpErrorObject(error, context.ids);
  if (object.code === 'ACP_INTERNAL') context.logger.error('acp.mcp.internal_error', errorFields(error));
  const structured = { [ACP_PART_KEYS.error]: object };
  return {
    isError: true,
    structuredContent: structured,
    content: [{ type: 'text', text: canonicalJson(structured) }],
  };
}
