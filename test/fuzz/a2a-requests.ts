import fc from 'fast-check';
import { arr, either, idText, jsonText, maybe, obj, pathIdArb, str } from './json-text.js';
import { acmpDataText, envelopeText } from './acp-requests.js';
import { bodyBytes, extensionsHeader, PUSH_ORIGIN, versionHeader, type FuzzRequest } from './request.js';

/**
 * Requests for the A2A transports in both codecs: v1.0 ProtoJSON (`ROLE_USER`, parts without `kind`,
 * `mediaType`) and v0.3 (`kind`-tagged parts, `"user"`, method names like `message/send`). Most are close
 * to valid, so that they reach deep into the SDK and the bindings; some fields are replaced by anything.
 */

const mediaType = fc.constantFrom('"application/json"', '"application/acmp+json"', '"application/acp+json"', '"text/plain"', '""', '1');
const text = fc.string({ maxLength: 30 }).map(str);
/** Webhook URLs: mostly at the fuzz host's allowed push origin, so configs are stored. */
const hookUrl = fc.oneof({ weight: 4, arbitrary: fc.constant(str(`${PUSH_ORIGIN}/hook`)) }, { weight: 1, arbitrary: either(text) });
/** Data part content: arbitrary JSON, an ACMP method, an ACPspec envelope. */
const dataText = fc.oneof({ weight: 3, arbitrary: jsonText }, { weight: 1, arbitrary: acmpDataText }, { weight: 1, arbitrary: envelopeText });

const v1Part: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: text.map((t) => obj([['text', t]])) },
  { weight: 4, arbitrary: fc.tuple(dataText, maybe(mediaType)).map(([d, m]) => obj([['data', d], ['mediaType', m]])) },
  { weight: 1, arbitrary: fc.tuple(text, mediaType).map(([u, m]) => obj([['url', u], ['mediaType', m], ['filename', '"f.txt"']])) },
  { weight: 1, arbitrary: either(fc.constant('"aGVsbG8="')).map((r) => obj([['raw', r]])) },
  // v0.3 spellings on a v1.0 request (the inbound normaliser accepts them).
  { weight: 1, arbitrary: text.map((t) => obj([['kind', '"text"'], ['text', t]])) },
  { weight: 1, arbitrary: dataText.map((d) => obj([['kind', '"data"'], ['data', d]])) },
  { weight: 1, arbitrary: fc.constantFrom('null', '1', '"x"', '[]', '{}') },
);

const v03Part: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: either(text).map((t) => obj([['kind', '"text"'], ['text', t]])) },
  { weight: 4, arbitrary: fc.tuple(dataText, maybe(jsonText, 4)).map(([d, m]) => obj([['kind', '"data"'], ['data', d], ['metadata', m]])) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(either(fc.constant('{"uri":"https://example.test/f"}')), fc.constantFrom('"uri"', '"bytes"'))
      .map(([file]) => obj([['kind', '"file"'], ['file', file]])),
  },
  { weight: 1, arbitrary: fc.constant('{"kind":"file","file":{"bytes":5}}') },
  // No `kind`: the inbound normaliser infers it.
  { weight: 1, arbitrary: text.map((t) => obj([['text', t]])) },
  { weight: 1, arbitrary: fc.constantFrom('null', '1', '{"kind":"video"}', '{}') },
);

const role = (dialect: 'v1' | 'v0.3') =>
  either(fc.constant(dialect === 'v1' ? '"ROLE_USER"' : '"user"')).chain((r) => fc.constantFrom(r, r, r, '"user"', '"ROLE_USER"', '"agent"'));

/** A message in a dialect's spelling. */
export function messageText(dialect: 'v1' | 'v0.3'): fc.Arbitrary<string> {
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
    .map((m) => obj([...Object.entries(m), ...(dialect === 'v0.3' ? ([['kind', '"message"']] as const) : [])]));
}

const v1Configuration = fc
  .record({
    acceptedOutputModes: maybe(fc.constant('["text/plain"]')),
    historyLength: maybe(either(fc.nat(5).map(String))),
    returnImmediately: maybe(either(fc.constantFrom('true', 'false'))),
    taskPushNotificationConfig: maybe(fc.tuple(idText, hookUrl).map(([id, url]) => obj([['id', id], ['url', url]])), 4),
  })
  .map((c) => obj(Object.entries(c)));

const v03Configuration = fc
  .record({
    blocking: maybe(either(fc.constantFrom('true', 'false'))),
    historyLength: maybe(either(fc.nat(5).map(String))),
    pushNotificationConfig: maybe(fc.tuple(idText, hookUrl).map(([id, url]) => obj([['id', id], ['url', url]])), 4),
  })
  .map((c) => obj(Object.entries(c)));

const sendParams = (dialect: 'v1' | 'v0.3') =>
  fc
    .record({
      message: either(messageText(dialect), 30),
      configuration: maybe(dialect === 'v1' ? v1Configuration : v03Configuration, 3),
      metadata: maybe(jsonText, 5),
    })
    .map((p) => obj(Object.entries(p)));

const idParams = fc.record({ id: idText, historyLength: maybe(either(fc.nat(5).map(String)), 4) }).map((p) => obj(Object.entries(p)));

/** Params of each method (anything, for names no method has). */
const PARAMS: Record<string, fc.Arbitrary<string>> = {
  SendMessage: sendParams('v1'),
  SendStreamingMessage: sendParams('v1'),
  GetTask: idParams,
  CancelTask: idParams,
  SubscribeToTask: idParams,
  ListTasks: fc.record({ contextId: maybe(idText), pageSize: maybe(either(fc.integer({ min: 0, max: 200 }).map(String))), pageToken: maybe(text) }).map((p) => obj(Object.entries(p))),
  CreateTaskPushNotificationConfig: fc.tuple(idText, idText, hookUrl).map(([taskId, id, url]) => obj([['taskId', taskId], ['id', id], ['url', url]])),
  GetTaskPushNotificationConfig: fc.tuple(idText, idText).map(([taskId, id]) => obj([['taskId', taskId], ['id', id]])),
  ListTaskPushNotificationConfigs: idText.map((taskId) => obj([['taskId', taskId]])),
  DeleteTaskPushNotificationConfig: fc.tuple(idText, idText).map(([taskId, id]) => obj([['taskId', taskId], ['id', id]])),
  GetExtendedAgentCard: fc.constant('{}'),
  'message/send': sendParams('v0.3'),
  'message/stream': sendParams('v0.3'),
  'tasks/get': idParams,
  'tasks/cancel': idParams,
  'tasks/resubscribe': idParams,
  'tasks/pushNotificationConfig/set': fc
    .tuple(idText, maybe(fc.tuple(idText, hookUrl).map(([id, url]) => obj([['id', id], ['url', url]]))))
    .map(([taskId, config]) => obj([['taskId', taskId], ['pushNotificationConfig', config]])),
  'tasks/pushNotificationConfig/get': fc.tuple(idText, maybe(idText)).map(([id, cid]) => obj([['id', id], ['pushNotificationConfigId', cid]])),
  'tasks/pushNotificationConfig/list': idText.map((id) => obj([['id', id]])),
  'tasks/pushNotificationConfig/delete': fc.tuple(idText, maybe(idText)).map(([id, cid]) => obj([['id', id], ['pushNotificationConfigId', cid]])),
  'agent/getAuthenticatedExtendedCard': fc.constant('{}'),
};
const V1_METHODS = Object.keys(PARAMS).filter((m) => !m.includes('/'));
const V03_METHODS = Object.keys(PARAMS).filter((m) => m.includes('/'));

/** A JSON-RPC id: valid mostly; a float, an object, an array, deep, or absent sometimes. */
const rpcId: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 30, arbitrary: fc.oneof(fc.nat().map(String), fc.string({ maxLength: 12 }).map(str), fc.constant('null')) },
  { weight: 1, arbitrary: either(fc.constant('1'), 1) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, '1.5', '{"a":1}', '[1,2]', '9007199254740993', '1e309', '"\\ud800"', 'true') },
);

/** A JSON-RPC request, v1.0 or v0.3, sometimes batched, sometimes not a request object at all. */
export const jsonRpcRequest: fc.Arbitrary<FuzzRequest> = fc
  .constantFrom<'v1' | 'v0.3'>('v1', 'v0.3')
  .chain((dialect) => {
    const methods = dialect === 'v1' ? V1_METHODS : V03_METHODS;
    const method = fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...methods) }, { weight: 1, arbitrary: fc.constantFrom(...V1_METHODS, ...V03_METHODS, 'NoSuchMethod', '') });
    const envelope = method.chain((m) =>
      fc
        .record({
          jsonrpc: fc.oneof({ weight: 40, arbitrary: fc.constant('"2.0"') }, { weight: 1, arbitrary: fc.constantFrom(undefined, '"1.0"', '2') }),
          id: rpcId,
          method: either(fc.constant(str(m)), 60),
          params: fc.oneof({ weight: 40, arbitrary: PARAMS[m] ?? jsonText }, { weight: 1, arbitrary: fc.constantFrom(undefined, '[]', '"x"', 'null') }, { weight: 1, arbitrary: jsonText }),
        })
        .map((e) => obj(Object.entries(e))),
    );
    const text = fc.oneof({ weight: 30, arbitrary: envelope }, { weight: 1, arbitrary: envelope.map((e) => `[${e}]`) }, { weight: 1, arbitrary: jsonText });
    return fc.tuple(text.chain(bodyBytes), versionHeader(dialect), extensionsHeader);
  })
  .map(([{ body, headers }, version, extensions]) => ({ endpoint: 'jsonrpc', method: 'POST', path: '/a2a/jsonrpc', headers: { ...headers, ...version, ...extensions }, body }));

/** v0.3 HTTP+JSON bodies use the v0.3 proto's JSON: `content` parts, `text` / `file` / `data`. */
const legacyPart = fc.oneof(
  { weight: 4, arbitrary: text.map((t) => obj([['text', t]])) },
  { weight: 2, arbitrary: jsonText.map((d) => obj([['data', obj([['data', d]])]])) },
  { weight: 1, arbitrary: either(fc.constant('"aGk="')).map((b) => obj([['file', obj([['fileWithBytes', b], ['mimeType', '"text/plain"']])]])) },
  { weight: 1, arbitrary: fc.constantFrom('null', '1', '{}') },
);
const legacyMessage = fc
  .record({ messageId: either(fc.uuid().map(str)), role: either(fc.constant('"ROLE_USER"')), content: either(fc.array(legacyPart, { minLength: 1, maxLength: 3 }).map(arr)), contextId: maybe(idText), taskId: maybe(idText, 4) })
  .map((m) => obj(Object.entries(m)));

/** One REST route with the body it takes (undefined: none). */
interface RestRoute {
  method: FuzzRequest['method'];
  path: string;
  body?: string;
  dialect: 'v1' | 'v0.3';
}

const query = fc
  .record({ historyLength: maybe(fc.constantFrom('1', '-1', 'abc', '99999999999999999999'), 4), tenant: maybe(fc.constantFrom('acme', 'acme', 'acme', 'a%00b', 't'.repeat(300)), 8), contextId: maybe(fc.constantFrom('c1', 'c1', 'c1', 'x'.repeat(37)), 8), pageSize: maybe(fc.constantFrom('0', '5', '101', 'x'), 8), dup: maybe(fc.constant('1'), 20) })
  .map((q) => {
    const pairs = Object.entries(q).filter(([, v]) => v !== undefined).flatMap(([k, v]) => (k === 'dup' ? [`tenant=a`, `tenant=b`] : [`${k}=${v!}`]));
    return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
  });

const v1Route: fc.Arbitrary<RestRoute> = fc.tuple(pathIdArb, pathIdArb).chain(([taskId, configId]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom('message:send', 'message:stream'), either(sendParams('v1'), 12)).map(([m, body]): RestRoute => ({ method: 'POST', path: m, body, dialect: 'v1' })) },
    { weight: 2, arbitrary: query.map((q): RestRoute => ({ method: 'GET', path: `tasks/${taskId}${q}`, dialect: 'v1' })) },
    { weight: 1, arbitrary: query.map((q): RestRoute => ({ method: 'GET', path: `tasks${q}`, dialect: 'v1' })) },
    { weight: 2, arbitrary: fc.constantFrom<RestRoute>({ method: 'POST', path: `tasks/${taskId}:cancel`, body: '{}', dialect: 'v1' }, { method: 'GET', path: `tasks/${taskId}:subscribe`, dialect: 'v1' }) },
    {
      weight: 1,
      arbitrary: either(fc.tuple(idText, hookUrl).map(([id, url]) => obj([['id', id], ['url', url]]))).map((body): RestRoute => ({ method: 'POST', path: `tasks/${taskId}/pushNotificationConfigs`, body, dialect: 'v1' })),
    },
    { weight: 1, arbitrary: fc.constantFrom<RestRoute>({ method: 'GET', path: `tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v1' }, { method: 'DELETE', path: `tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v1' }, { method: 'GET', path: 'extendedAgentCard', dialect: 'v1' }) },
  ),
);

const v03Route: fc.Arbitrary<RestRoute> = fc.tuple(pathIdArb, pathIdArb).chain(([taskId, configId]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom('v1/message:send', 'v1/message:stream'), either(legacyMessage.map((m) => obj([['message', m]])), 12)).map(([path, body]): RestRoute => ({ method: 'POST', path, body, dialect: 'v0.3' })) },
    { weight: 2, arbitrary: fc.constantFrom<RestRoute>({ method: 'GET', path: `v1/tasks/${taskId}`, dialect: 'v0.3' }, { method: 'POST', path: `v1/tasks/${taskId}:cancel`, body: 'null', dialect: 'v0.3' }, { method: 'GET', path: `v1/tasks/${taskId}:subscribe`, dialect: 'v0.3' }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(idText, idText)
        .map(([name, id]): RestRoute => ({ method: 'POST', path: `v1/tasks/${taskId}/pushNotificationConfigs`, body: obj([['name', name], ['pushNotificationConfig', obj([['id', id], ['url', str(`${PUSH_ORIGIN}/hook`)]])]]), dialect: 'v0.3' })),
    },
    { weight: 1, arbitrary: fc.constantFrom<RestRoute>({ method: 'GET', path: `v1/tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v0.3' }, { method: 'DELETE', path: `v1/tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v0.3' }, { method: 'GET', path: 'v1/card', dialect: 'v0.3' }) },
  ),
);

const tenantPrefix = fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 2, arbitrary: pathIdArb.map((t) => `${t}/`) });

/** An HTTP+JSON request, v1.0 (with an optional tenant) or v0.3. */
export const restRequest: fc.Arbitrary<FuzzRequest> = fc
  .oneof(fc.tuple(tenantPrefix, v1Route), fc.tuple(fc.constant(''), v03Route))
  .chain(([tenant, route]) => {
    const body = route.body === undefined ? fc.constant(undefined) : bodyBytes(route.body);
    return fc.tuple(fc.constant(tenant), fc.constant(route), body, versionHeader(route.dialect), extensionsHeader);
  })
  .map(([tenant, route, body, version, extensions]) => ({
    endpoint: 'rest',
    method: route.method,
    path: `/a2a/rest/${tenant}${route.path}`,
    headers: { ...(body?.headers ?? {}), ...version, ...extensions },
    ...(body ? { body: body.body } : {}),
  }));
