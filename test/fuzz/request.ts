import { gzipSync } from 'node:zlib';
import fc from 'fast-check';

/** The push-notification origin the fuzz host allows: nothing listens there, deliveries fail at once. */
export const PUSH_ORIGIN = 'http://127.0.0.1:9';

/** Which endpoint a fuzz request is aimed at. */
export type Endpoint = 'jsonrpc' | 'rest' | 'acp';

/** One request as the fuzzer sends it: bytes and headers exactly as generated. */
export interface FuzzRequest {
  endpoint: Endpoint;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query, appended to the host's base URL as they are. */
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** How a body travels: usually intact, sometimes broken at the byte or header level. */
type BodyForm =
  'plain' | 'truncated' | 'bad-byte' | 'bom' | 'empty' | 'gzip' | 'gzip-label-only' | 'unknown-encoding';

const bodyForm: fc.Arbitrary<BodyForm> = fc.oneof(
  { weight: 24, arbitrary: fc.constant<BodyForm>('plain') },
  {
    weight: 1,
    arbitrary: fc.constantFrom<BodyForm>(
      'truncated',
      'bad-byte',
      'bom',
      'empty',
      'gzip',
      'gzip-label-only',
      'unknown-encoding',
    ),
  },
);

const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 20, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constant('application/a2a+json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      undefined,
      'text/plain',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'application/json; charset=UTF-8',
      'application/acp+json',
    ),
  },
);

/** A body text in one of its {@link BodyForm}s, with the content headers that go with it. */
export function bodyBytes(text: string): fc.Arbitrary<{ body: Uint8Array; headers: Record<string, string> }> {
  return fc.tuple(bodyForm, contentType, fc.nat()).map(([form, type, cut]) => {
    const bytes = Buffer.from(text, 'utf8');
    const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
    switch (form) {
      case 'plain':
        return { body: bytes, headers };
      case 'truncated':
        return { body: bytes.subarray(0, bytes.length === 0 ? 0 : cut % bytes.length), headers };
      case 'bad-byte': {
        const at = bytes.length === 0 ? 0 : cut % bytes.length;
        return {
          body: Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at)]),
          headers,
        };
      }
      case 'bom':
        return { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]), headers };
      case 'empty':
        return { body: new Uint8Array(), headers };
      case 'gzip':
        return { body: gzipSync(bytes), headers: { ...headers, 'content-encoding': 'gzip' } };
      case 'gzip-label-only':
        return { body: bytes, headers: { ...headers, 'content-encoding': 'gzip' } };
      case 'unknown-encoding':
        return { body: bytes, headers: { ...headers, 'content-encoding': 'x-unknown' } };
    }
  });
}

/** The `A2A-Version` header: as the dialect expects it, now and then a wrong or unknown one. */
export function versionHeader(dialect: 'v1' | 'v0.3'): fc.Arbitrary<Record<string, string>> {
  const expected: Record<string, string> = dialect === 'v1' ? { 'A2A-Version': '1.0' } : {};
  const others: Record<string, string>[] = [
    {},
    { 'A2A-Version': '1.0' },
    { 'A2A-Version': '0.3' },
    { 'A2A-Version': '2.0' },
    { 'A2A-Version': 'x' },
  ];
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(expected) },
    { weight: 1, arbitrary: fc.constantFrom(...others) },
  );
}

/** Extensions a client may ask for (ACMP messages are refused unless its extension is requested). */
export const extensionsHeader: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  { weight: 4, arbitrary: fc.constant({ 'A2A-Extensions': 'https://a2agora.org/acmp/v0.1' }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'https://acpspec.org/a2a/v1',
        'https://unknown.example/x',
        ',,',
        ' ',
        'https://a2agora.org/acmp/v0.1, https://acpspec.org/a2a/v1',
      )
      .map((uri) => ({ 'A2A-Extensions': uri })),
  },
);
