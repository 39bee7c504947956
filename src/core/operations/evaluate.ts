import {
  evaluate,
  EVALUATE_DEFAULT_TIMEOUT_MS,
  EVALUATE_MAX_RESULT_CHARS,
  EVALUATE_MAX_TIMEOUT_MS,
  EvaluateRequest,
  EvaluateResult,
} from '../act/evaluate.js';
import { defineSessionOperation } from './define.js';

export const evaluateOperation = defineSessionOperation({
  name: 'evaluate',
  title: 'Run JavaScript in the page',
  description: 'Run JavaScript in the page, for what act cannot do. Returns {result}: its JSON value.',
  summary:
    "Runs a JavaScript expression or function in the page (on a ref's element when given) and answers {result}, its JSON value " +
    `(undefined: null; longer than ${EVALUATE_MAX_RESULT_CHARS} characters of JSON: the first part as a string, truncated: true), ` +
    `the session's secrets masked. A script that throws is evaluation_failed; one still running after timeoutMs ` +
    `(default ${EVALUATE_DEFAULT_TIMEOUT_MS}, at most ${EVALUATE_MAX_TIMEOUT_MS}) is stopped and answers timeout.`,
  input: EvaluateRequest,
  output: EvaluateResult,
  kind: 'destructive',
  example: { expression: '1 + 1' },
  rest: { method: 'POST', path: '/v1/sessions/{id}/evaluate', operationId: 'SessionEvaluate' },
  text: ({ result, truncated }) =>
    truncated ? `${String(result)}\n(truncated: the first ${EVALUATE_MAX_RESULT_CHARS} characters of the JSON)` : JSON.stringify(result),
  work: async (session, input, { ctx }) => ({ result: await evaluate(session, input, ctx.signal) }),
});
