/** The session's operator credential (sessionStorage: gone when the tab closes). */
const TOKEN_KEY = 'a2ac-console-token';

/** The API refused the credential (401 without or with a wrong one, 403 for a caller token). */
export class RefusedError extends Error {
  constructor(readonly status: number) {
    super(status === 403 ? 'A caller token does not open the console' : 'Operator credential required');
  }
}

export function token(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function setToken(value: string | undefined): void {
  if (value === undefined) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, value);
}

/** GETs one read-API resource (`/console/api` + path) with the credential. @throws RefusedError. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(`/console/api${path}`, {
    headers: { authorization: `Bearer ${token() ?? ''}` },
    cache: 'no-store',
  });
  if (res.status === 401 || res.status === 403) throw new RefusedError(res.status);
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** One change the host's feed reported. */
export interface Change {
  at: number;
  areas: string[];
}

/**
 * Follows `/console/api/events` (Server-Sent Events read over fetch, so the credential travels in a header,
 * never in the URL) and reconnects after 2 s when the stream ends. Returns a stop function.
 */
export function follow(handlers: {
  onChange: (c: Change) => void;
  onStatus: (live: boolean) => void;
}): () => void {
  const controller = new AbortController();
  const run = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      try {
        const res = await fetch('/console/api/events', {
          headers: { authorization: `Bearer ${token() ?? ''}` },
          signal: controller.signal,
        });
        if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
        handlers.onStatus(true);
        await readEvents(res.body, handlers.onChange);
      } catch {
        // Shown as "offline" until the next connection.
      }
      handlers.onStatus(false);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  };
  void run();
  return () => controller.abort();
}

async function readEvents(body: ReadableStream<Uint8Array>, onChange: (c: Change) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event === 'change' && data !== undefined) onChange(JSON.parse(data) as Change);
    }
  }
}
