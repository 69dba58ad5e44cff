import fc from 'fast-check';
import { acmpDataText, envelopeText } from './acp-requests.js';
import { arr, either, idText, jsonText, maybe, obj, str } from './json-text.js';
import { PUSH_ORIGIN } from './request.js';

/**
 * A2A messages and SendMessage params in both codecs: v1.0 ProtoJSON (`ROLE_USER`, parts without `kind`,
 * `mediaType`) and v0.3 (`kind`-tagged parts, `"user"`, method names like `message/send`). Most are close
 * to valid, so that they reach deep into the SDK and the bindings; some fields are replaced by anything.
 */

const mediaType = fc.constantFrom(
  '"application/json"',
  '"application/acmp+json"',
  '"application/acp+json"',
  '"text/plain"',
  '""',
  '1',
);
export const text = fc.string({ maxLength: 30 }).map(str);
/** Webhook URLs: mostly at the fuzz host's allowed push origin, so configs are stored. */
export const hookUrl = fc.oneof(
  { weight: 4, arbitrary: fc.constant(str(`${PUSH_ORIGIN}/hook`)) },
  { weight: 1, arbitrary: either(text) },
);
/** Data part content: arbitrary JSON, an ACMP method, an ACPspec envelope. */
const dataText = fc.oneof(
  { weight: 3, arbitrary: jsonText },
  { weight: 1, arbitrary: acmpDataText },
  { weight: 1, arbitrary: envelopeText },
);

const v1Part: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: text.map((t) => obj([['text', t]])) },
  {
    weight: 4,
    arbitrary: fc.tuple(dataText, maybe(mediaType)).map(([d, m]) =>
      obj([
        ['data', d],
        ['mediaType', m],
      ]),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(text, mediaType).map(([u, m]) =>
      obj([
        ['url', u],
        ['mediaType', m],
        ['filename', '"f.txt"'],
      ]),
    ),
  },
  { weight: 1, arbitrary: either(fc.constant('"aGVsbG8="')).map((r) => obj([['raw', r]])) },
  // v0.3 spellings on a v1.0 request (the inbound normaliser accepts them).
  {
    weight: 1,
    arbitrary: text.map((t) =>
      obj([
        ['kind', '"text"'],
        ['text', t],
      ]),
    ),
  },
  {
    weight: 1,
    arbitrary: dataText.map((d) =>
      obj([
        ['kind', '"data"'],
        ['data', d],
      ]),
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('null', '1', '"x"', '[]', '{}') },
);

const v03Part: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: either(text).map((t) =>
      obj([
        ['kind', '"text"'],
        ['text', t],
      ]),
    ),
  },
  {
    weight: 4,
    arbitrary: fc.tuple(dataText, maybe(jsonText, 4)).map(([d, m]) =>
      obj([
        ['kind', '"data"'],
        ['data', d],
        ['metadata', m],
      ]),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(either(fc.constant('{"uri":"https://example.test/f"}')), fc.constantFrom('"uri"', '"bytes"'))
      .map(([file]) =>
        obj([
          ['kind', '"file"'],
          ['file', file],
        ]),
      ),
  },
  { weight: 1, arbitrary: fc.constant('{"kind":"file","file":{"bytes":5}}') },
  // No `kind`: the inbound normaliser infers it.
  { weight: 1, arbitrary: text.map((t) => obj([['text', t]])) },
  { weight: 1, arbitrary: fc.constantFrom('null', '1', '{"kind":"video"}', '{}') },
);

const role = (dialect: 'v1' | 'v0.3') =>
  either(fc.constant(dialect === 'v1' ? '"ROLE_USER"' : '"user"')).chain((r) =>
    fc.constantFrom(r, r, r, '"user"', '"ROLE_USER"', '"agent"'),
  );

/** A message in a dialect's spelling. */
function messageText(dialect: 'v1' | 'v0.3'): fc.Arbitrary<string> {
  const part = dialect === 'v1' ? v1Part : v03Part;
  return fc
    .record({
      messageId: either(fc.uuid().map(str)),
      role: role(dialect),
      parts: either(fc.array(part, { minLength: 1, maxLength: 3 }).map(arr)),
      contextId: maybe(idText),
      taskId: maybe(idText, 4),
      metadata: maybe(jsonText, 4),
      extensions: maybe(either(fc.constant('["https://a2agora.org/acmp/v0.1"]')), 6),
      referenceTaskIds: maybe(either(fc.array(idText, { maxLength: 2 }).map(arr)), 6),
    })
    .map((m) =>
      obj([...Object.entries(m), ...(dialect === 'v0.3' ? ([['kind', '"message"']] as const) : [])]),
    );
}

const v1Configuration = fc
  .record({
    acceptedOutputModes: maybe(fc.constant('["text/plain"]')),
    historyLength: maybe(either(fc.nat(5).map(String))),
    returnImmediately: maybe(either(fc.constantFrom('true', 'false'))),
    taskPushNotificationConfig: maybe(
      fc.tuple(idText, hookUrl).map(([id, url]) =>
        obj([
          ['id', id],
          ['url', url],
        ]),
      ),
      4,
    ),
  })
  .map((c) => obj(Object.entries(c)));

const v03Configuration = fc
  .record({
    blocking: maybe(either(fc.constantFrom('true', 'false'))),
    historyLength: maybe(either(fc.nat(5).map(String))),
    pushNotificationConfig: maybe(
      fc.tuple(idText, hookUrl).map(([id, url]) =>
        obj([
          ['id', id],
          ['url', url],
        ]),
      ),
      4,
    ),
  })
  .map((c) => obj(Object.entries(c)));

export const sendParams = (dialect: 'v1' | 'v0.3') =>
  fc
    .record({
      message: either(messageText(dialect), 30),
      configuration: maybe(dialect === 'v1' ? v1Configuration : v03Configuration, 3),
      metadata: maybe(jsonText, 5),
    })
    .map((p) => obj(Object.entries(p)));
