import fc from 'fast-check';
import { hookUrl, sendParams, text } from './a2a-messages.js';
import { either, idText, jsonText, maybe, obj, str } from './json-text.js';
import { bodyBytes, extensionsHeader, versionHeader, type FuzzRequest } from './request.js';

/** JSON-RPC requests for `/a2a/jsonrpc`: every v1.0 and v0.3 method with its params, around a request object. */

const idParams = fc
  .record({ id: idText, historyLength: maybe(either(fc.nat(5).map(String)), 4) })
  .map((p) => obj(Object.entries(p)));

/** Params of each method (anything, for names no method has). */
const PARAMS: Record<string, fc.Arbitrary<string>> = {
  SendMessage: sendParams('v1'),
  SendStreamingMessage: sendParams('v1'),
  GetTask: idParams,
  CancelTask: idParams,
  SubscribeToTask: idParams,
  ListTasks: fc
    .record({
      contextId: maybe(idText),
      pageSize: maybe(either(fc.integer({ min: 0, max: 200 }).map(String))),
      pageToken: maybe(text),
    })
    .map((p) => obj(Object.entries(p))),
  CreateTaskPushNotificationConfig: fc.tuple(idText, idText, hookUrl).map(([taskId, id, url]) =>
    obj([
      ['taskId', taskId],
      ['id', id],
      ['url', url],
    ]),
  ),
  GetTaskPushNotificationConfig: fc.tuple(idText, idText).map(([taskId, id]) =>
    obj([
      ['taskId', taskId],
      ['id', id],
    ]),
  ),
  ListTaskPushNotificationConfigs: idText.map((taskId) => obj([['taskId', taskId]])),
  DeleteTaskPushNotificationConfig: fc.tuple(idText, idText).map(([taskId, id]) =>
    obj([
      ['taskId', taskId],
      ['id', id],
    ]),
  ),
  GetExtendedAgentCard: fc.constant('{}'),
  'message/send': sendParams('v0.3'),
  'message/stream': sendParams('v0.3'),
  'tasks/get': idParams,
  'tasks/cancel': idParams,
  'tasks/resubscribe': idParams,
  'tasks/pushNotificationConfig/set': fc
    .tuple(
      idText,
      maybe(
        fc.tuple(idText, hookUrl).map(([id, url]) =>
          obj([
            ['id', id],
            ['url', url],
          ]),
        ),
      ),
    )
    .map(([taskId, config]) =>
      obj([
        ['taskId', taskId],
        ['pushNotificationConfig', config],
      ]),
    ),
  'tasks/pushNotificationConfig/get': fc.tuple(idText, maybe(idText)).map(([id, cid]) =>
    obj([
      ['id', id],
      ['pushNotificationConfigId', cid],
    ]),
  ),
  'tasks/pushNotificationConfig/list': idText.map((id) => obj([['id', id]])),
  'tasks/pushNotificationConfig/delete': fc.tuple(idText, maybe(idText)).map(([id, cid]) =>
    obj([
      ['id', id],
      ['pushNotificationConfigId', cid],
    ]),
  ),
  'agent/getAuthenticatedExtendedCard': fc.constant('{}'),
};
const V1_METHODS = Object.keys(PARAMS).filter((m) => !m.includes('/'));
const V03_METHODS = Object.keys(PARAMS).filter((m) => m.includes('/'));

/** A JSON-RPC id: valid mostly; a float, an object, an array, deep, or absent sometimes. */
const rpcId: fc.Arbitrary<string | undefined> = fc.oneof(
  {
    weight: 30,
    arbitrary: fc.oneof(fc.nat().map(String), fc.string({ maxLength: 12 }).map(str), fc.constant('null')),
  },
  { weight: 1, arbitrary: either(fc.constant('1'), 1) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      undefined,
      '1.5',
      '{"a":1}',
      '[1,2]',
      '9007199254740993',
      '1e309',
      '"\\ud800"',
      'true',
    ),
  },
);

/** A JSON-RPC request, v1.0 or v0.3, sometimes batched, sometimes not a request object at all. */
export const jsonRpcRequest: fc.Arbitrary<FuzzRequest> = fc
  .constantFrom<'v1' | 'v0.3'>('v1', 'v0.3')
  .chain((dialect) => {
    const methods = dialect === 'v1' ? V1_METHODS : V03_METHODS;
    const method = fc.oneof(
      { weight: 20, arbitrary: fc.constantFrom(...methods) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          ...V1_METHODS,
          ...V03_METHODS,
          'NoSuchMethod',
          '',
          'constructor',
          '__proto__',
          'toString',
        ),
      },
    );
    const envelope = method.chain((m) =>
      fc
        .record({
          jsonrpc: fc.oneof(
            { weight: 40, arbitrary: fc.constant('"2.0"') },
            { weight: 1, arbitrary: fc.constantFrom(undefined, '"1.0"', '2') },
          ),
          id: rpcId,
          method: either(fc.constant(str(m)), 60),
          params: fc.oneof(
            { weight: 40, arbitrary: Object.hasOwn(PARAMS, m) ? PARAMS[m]! : jsonText },
            { weight: 1, arbitrary: fc.constantFrom(undefined, '[]', '"x"', 'null') },
            { weight: 1, arbitrary: jsonText },
          ),
        })
        .map((e) => obj(Object.entries(e))),
    );
    const text = fc.oneof(
      { weight: 30, arbitrary: envelope },
      { weight: 1, arbitrary: envelope.map((e) => `[${e}]`) },
      { weight: 1, arbitrary: jsonText },
    );
    return fc.tuple(text.chain(bodyBytes), versionHeader(dialect), extensionsHeader);
  })
  .map(([{ body, headers }, version, extensions]) => ({
    endpoint: 'jsonrpc',
    method: 'POST',
    path: '/a2a/jsonrpc',
    headers: { ...headers, ...version, ...extensions },
    body,
  }));
