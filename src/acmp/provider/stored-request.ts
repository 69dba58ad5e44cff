import { isJsonObject } from '../../shared/json.js';
import { ACMP_METHOD } from '../wire/constants.js';
import { InvokeParamsSchema, type InvokeParams } from '../wire/task-messages.js';

/**
 * The stored `request` of a task whose invoke arrived outside A2A (MCP over HTTP or stdio, the in-process
 * provider): the ACMP JSON-RPC request form `{"method": "acmp/invoke", "params": …}` of Layer 1 §3.1, which
 * every binding's task view can read (docs/acmp-core.md "The task record"). A2A stores its own message.
 */
export function encodeInvokeRequest(params: InvokeParams): string {
  return JSON.stringify({ method: ACMP_METHOD.invoke, params });
}

/** The invoke params of a request stored by {@link encodeInvokeRequest}; `undefined` for any other text. */
export function decodeInvokeRequest(text: string): InvokeParams | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(value) || value.method !== ACMP_METHOD.invoke) return undefined;
  const parsed = InvokeParamsSchema.safeParse(value.params);
  return parsed.success ? parsed.data : undefined;
}
