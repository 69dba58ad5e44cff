import { Agent, fetch as undiciFetch } from 'undici';

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
 */
export function fetchTrusting(caCert: string | undefined): typeof fetch {
  if (caCert === undefined) return fetch;
  const dispatcher = agentFor(caCert);
  return (input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher });
}
