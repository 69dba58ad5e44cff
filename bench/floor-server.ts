import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * The floor of the wrk rows: what any Node server pays for the same wire. A bare node:http JSON-RPC echo
 * (TLS with the certificate in the directory given as argv[2]): it reads and parses the body and answers
 * with an `acmp_result` carrying the request's task id. No framework, no store, no validation.
 */

function taskIdOf(body: unknown): unknown {
  const params = (
    body as { params?: { message?: { parts?: { data?: { params?: { task_id?: unknown } } }[] } } }
  ).params;
  return params?.message?.parts?.[0]?.data?.params?.task_id;
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let reply: string;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown };
      reply = JSON.stringify({
        jsonrpc: '2.0',
        id: body.id ?? null,
        result: { acmp_result: { task_id: taskIdOf(body), output: { type: 'text', data: 'ok' } } },
      });
    } catch {
      reply = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
    res.end(reply);
  });
}

const tlsDir = process.argv[2];
const server = tlsDir
  ? createHttps(
      {
        cert: readFileSync(join(tlsDir, 'localhost.crt')),
        key: readFileSync(join(tlsDir, 'localhost.key')),
      },
      answer,
    )
  : createHttp(answer);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`floor listening on ${tlsDir ? 'https' : 'http'}://127.0.0.1:${port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
