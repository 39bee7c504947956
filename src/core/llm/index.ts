import type { Egress } from '../egress/index.js';
import { ServiceError } from '../errors.js';
import { AnthropicClient } from './anthropic.js';
import { DEFAULT_TIMEOUT_MS } from './common.js';
import { OpenAIClient } from './openai.js';
import type { LLMClient, ModelFallback, ModelSpec, Provider } from './types.js';

export type * from './types.js';

/** Where defaults come from: ServiceConfig (its `model` and `env`) and, for the agent, AgentConfig.provider. */
export interface ModelDefaults {
  /** Default model, e.g. "openai/gpt-4.1-mini" (--model / MODEL_NAME). */
  model?: string;
  env: Record<string, string | undefined>;
  /** Provider for a bare model name that has no recognisable prefix, or whose default model to use. */
  provider?: Provider;
  /** Outbound connections to the model API go through its fetch. */
  egress?: Egress;
}

/** The model each provider uses when only a key is configured. */
export const DEFAULT_MODELS: Record<Provider, string> = { openai: 'gpt-4.1-mini', anthropic: 'claude-sonnet-4-6' };

const ENV = {
  openai: { key: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL', organization: 'OPENAI_ORG_ID' },
  anthropic: { key: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL', organization: undefined },
} as const;

/** Client options a caller may pass besides apiKey/baseURL/organization; anything else is refused rather than handed to the SDK. */
const CLIENT_OPTION_TYPES: Record<string, 'number' | 'string' | 'headers'> = {
  timeout: 'number',
  maxRetries: 'number',
  project: 'string',
  defaultHeaders: 'headers',
  defaultQuery: 'headers',
};

/**
 * Picks provider, model name and credentials: `modelName` ("openai/gpt-4.1-mini", "anthropic/claude-...", or a bare name
 * recognised by its prefix) else the default model; `options` {apiKey, baseURL, organization, timeout, maxRetries, ...}
 * override the environment. Throws `model_not_configured` naming the variable when no key is available.
 */
export function resolveModel(
  modelName: string | undefined,
  options: Record<string, unknown> | undefined,
  defaults: ModelDefaults,
): ModelSpec {
  const opts = options ?? {};
  const apiKey = optionString(opts, 'apiKey');
  const baseURL = optionString(opts, 'baseURL');
  const organization = optionString(opts, 'organization');
  const clientOptions = pickClientOptions(opts);

  const name = modelName ?? defaults.model;
  let provider: Provider;
  let model: string;
  if (name) {
    ({ provider, model } = parseModelName(name, defaults.provider, baseURL !== undefined));
  } else {
    provider =
      defaults.provider ??
      (apiKey || !configuredKey(defaults.env.ANTHROPIC_API_KEY) || configuredKey(defaults.env.OPENAI_API_KEY) ? 'openai' : 'anthropic');
    model = DEFAULT_MODELS[provider];
  }

  const vars = ENV[provider];
  const envBaseURL = nonEmpty(defaults.env[vars.baseURL]);
  // The configured key only goes to the configured endpoint: a caller-chosen baseURL must bring its own key.
  const keyMayLeave = baseURL !== undefined && baseURL !== envBaseURL;
  const key = apiKey ?? (keyMayLeave ? undefined : configuredKey(defaults.env[vars.key]));
  if (!key) {
    if (keyMayLeave && provider === 'openai') {
      // OpenAI-compatible local servers (Ollama, vLLM, LM Studio) usually need no key, but the SDK insists on one.
      return { provider, model, apiKey: 'no-key', baseURL, organization, clientOptions, fetch: modelFetch(defaults, clientOptions) };
    }
    throw new MissingKeyError(
      { provider, model },
      keyMayLeave
        ? `No API key for the ${provider} model "${model}" at ${baseURL}: pass modelClientOptions.apiKey (the server's ${vars.key} is only sent to its configured endpoint).`
        : `No API key for the ${provider} model "${model}": set ${vars.key} in the server's environment or pass modelClientOptions.apiKey.`,
      keyMayLeave,
    );
  }
  return {
    provider,
    model,
    apiKey: key,
    baseURL: baseURL ?? envBaseURL,
    organization: organization ?? (vars.organization ? nonEmpty(defaults.env[vars.organization]) : undefined),
    clientOptions,
    fetch: modelFetch(defaults, clientOptions),
  };
}

/** The egress fetch for a model client: connect bounded by the policy's timeout, headers by the client's own timeout. */
function modelFetch(defaults: ModelDefaults, clientOptions: Record<string, unknown>): typeof fetch | undefined {
  const timeout = typeof clientOptions.timeout === 'number' ? clientOptions.timeout : DEFAULT_TIMEOUT_MS;
  return defaults.egress?.fetch({ headersTimeoutMs: timeout });
}

export function createLLMClient(spec: ModelSpec): LLMClient {
  return spec.provider === 'openai' ? new OpenAIClient(spec) : new AnthropicClient(spec);
}

/** `model_not_configured` from resolveModel, with the model that was wanted (not part of the error body). */
export class MissingKeyError extends ServiceError {
  constructor(
    readonly wanted: { provider: Provider; model: string },
    message: string,
    /** The caller chose the endpoint (modelClientOptions.baseURL): only its own key may go there. */
    readonly customEndpoint: boolean,
  ) {
    super('model_not_configured', message);
  }
}

/**
 * The client for an operation's model: the provider's SDK when a key is configured (server or modelClientOptions),
 * else the door's `fallback` (MCP sampling). A caller-chosen endpoint without its key is never handed to the fallback.
 */
export function createModelClient(
  modelName: string | undefined,
  options: Record<string, unknown> | undefined,
  defaults: ModelDefaults & { fallback?: ModelFallback },
): LLMClient {
  let spec: ModelSpec;
  try {
    spec = resolveModel(modelName, options, defaults);
  } catch (err) {
    if (!(err instanceof MissingKeyError) || err.customEndpoint || !defaults.fallback) throw err;
    return defaults.fallback({ ...err.wanted, named: Boolean(modelName ?? defaults.model), missingKey: err.message });
  }
  return createLLMClient(spec);
}

/** "provider/model" or a bare name recognised by its prefix. */
export function parseModelName(
  name: string,
  fallback: Provider | undefined,
  customEndpoint: boolean,
): { provider: Provider; model: string } {
  const trimmed = name.trim();
  const slash = trimmed.indexOf('/');
  if (slash > 0) {
    const prefix = trimmed.slice(0, slash).toLowerCase();
    const rest = trimmed.slice(slash + 1);
    if ((prefix === 'openai' || prefix === 'anthropic') && rest) return { provider: prefix, model: rest };
  }
  if (/^(gpt-|chatgpt-|o1|o3|o4|text-|davinci|babbage|ft:gpt)/i.test(trimmed)) return { provider: 'openai', model: trimmed };
  if (/^claude-/i.test(trimmed)) return { provider: 'anthropic', model: trimmed };
  if (fallback) return { provider: fallback, model: trimmed };
  // Models of OpenAI-compatible servers have any name ("llama3.1", "Qwen/Qwen2.5-7B").
  if (customEndpoint) return { provider: 'openai', model: trimmed };
  throw new ServiceError(
    'invalid_argument',
    `Unknown model "${name}": write it as "openai/<model>" or "anthropic/<model>" (bare names starting with gpt-, o1, o3, o4 or claude- are recognised).`,
  );
}

function optionString(opts: Record<string, unknown>, key: string): string | undefined {
  const value = opts[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ServiceError('invalid_argument', `modelClientOptions.${key} must be a string.`);
  return value;
}

function pickClientOptions(opts: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) {
    if (key === 'apiKey' || key === 'baseURL' || key === 'organization' || value === undefined) continue;
    const type = CLIENT_OPTION_TYPES[key];
    if (!type) {
      throw new ServiceError(
        'invalid_argument',
        `Unknown model client option "${key}". Allowed: apiKey, baseURL, organization, ${Object.keys(CLIENT_OPTION_TYPES).join(', ')}.`,
      );
    }
    const ok =
      type === 'number'
        ? typeof value === 'number' && Number.isFinite(value) && value >= 0
        : type === 'string'
          ? typeof value === 'string'
          : !!value && typeof value === 'object' && Object.values(value).every((v) => typeof v === 'string');
    if (!ok)
      throw new ServiceError('invalid_argument', `modelClientOptions.${key} must be ${expected(key, type)}, not ${describe(value)}.`);
    picked[key] = value;
  }
  return picked;
}

function expected(key: string, type: 'number' | 'string' | 'headers'): string {
  if (type === 'headers') return 'an object of strings';
  if (type === 'string') return 'a string';
  return key === 'timeout' ? 'a non-negative number (milliseconds)' : 'a non-negative number';
}

/** A short account of a refused value: the number itself, else its type. */
function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value ? value : undefined;
}

/**
 * A key from the environment, or undefined when it is empty or a placeholder no provider issues: an example's `sk-...`
 * pasted as is, or a desktop bundle's `${user_config.openai_api_key}` left unfilled. Counted as a key, either would
 * turn off the fallback to the client's own model (sampling) and fail every model call.
 */
export function configuredKey(value: string | undefined): string | undefined {
  const key = value?.trim();
  return key && !/\.\.\.|\$\{|^<.*>$|^your[-_ ]/i.test(key) ? key : undefined;
}
