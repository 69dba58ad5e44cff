import { Agent, fetch as undiciFetch } from 'undici';
import { traceHeaders } from './tracing.js';

/** One dispatcher per CA: each `Agent` holds a connection pool, so building one per call would leak them. */
const agents = new Map<string, Agent>();

function agentFor(caCert: string): Agent {
  let agent = agents.get(caCert);
  if (agent === undefined) {
    agent = new Agent({ connect: { ca: caCert } });
    agents.set(caCert, agent);
  }
  return agent;
}

/**
 * A fetch that trusts `caCert` (PEM) in addition to the system roots, or the global fetch when there is
 * none. It is undici's own fetch with an `Agent` for that CA, since a dispatcher of another undici copy
 * cannot be handed to the global fetch. Calls with the same CA share one `Agent` for the process's life.
 * Every call carries the active trace context ({@link tracedFetch}).
 */
export function fetchTrusting(caCert: string | undefined): typeof fetch {
  if (caCert === undefined) return tracedFetch(fetch);
  const dispatcher = agentFor(caCert);
  return tracedFetch((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher }),
  );
}

/**
 * `inner` with the W3C trace context of the active span added to each request's headers (`traceparent`,
 * `tracestate`; docs/operations.md "Tracing"): the one way our outbound HTTP calls propagate a trace.
 * With tracing off there is nothing to add and the request goes out untouched.
 */
function tracedFetch(inner: typeof fetch): typeof fetch {
  return (input, init) => {
    const trace = traceHeaders();
    if (trace === undefined) return inner(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    for (const [name, value] of Object.entries(trace)) headers.set(name, value);
    return inner(input, { ...init, headers });
  };
}
