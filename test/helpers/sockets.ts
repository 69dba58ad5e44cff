import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { onCleanup } from './cleanup.js';

/** A raw TCP client socket a test holds open, and when the server closed it. */
export interface HeldSocket {
  readonly socket: Socket;
  /** Resolves with the milliseconds from connect to close (by either side). */
  readonly closed: Promise<number>;
  /** Whether any byte came back before the close. */
  readonly answered: () => boolean;
}

/**
 * Opens a TCP connection to `host:port` and calls `behave` once connected (write nothing, dribble, …).
 * Destroyed by the cleanup registry if still open when the test ends.
 */
export async function holdSocket(
  address: { host: string; port: number },
  behave: (socket: Socket) => void = () => undefined,
): Promise<HeldSocket> {
  const socket = connect(address.port, address.host);
  onCleanup(() => {
    socket.destroy();
  });
  let answered = false;
  socket.on('data', () => (answered = true));
  socket.on('error', () => undefined);
  const started = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('close', () => reject(new Error('closed before connecting')));
  });
  behave(socket);
  return { socket, closed, answered: () => answered };
}

/** Writes `chunk` every `everyMs` until the socket closes: a slowloris client. */
export function dribble(chunk: string, everyMs: number): (socket: Socket) => void {
  return (socket) => {
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(chunk);
    }, everyMs);
    socket.once('close', () => clearInterval(timer));
  };
}

/** Resolves with `value`, or rejects after `ms` naming what did not happen. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The host and port of a URL, for raw sockets. */
export function addressOf(url: string): { host: string; port: number } {
  const u = new URL(url.includes('://') ? url : `tcp://${url}`);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) };
}

/**
 * One plain-HTTP request with headers exactly as given — `Host` included, which `fetch` will not let a
 * caller choose — answered with status and parsed JSON body.
 */
export function rawHttp(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers: {
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
