import { z } from 'zod';
import { ServiceError } from '../../core/errors.js';
import { ProfileInfo, StorageState } from '../../core/state/index.js';
import { operationOutput } from '../result.js';
import { defineTool, type ToolContext, type ToolOutput } from '../tool.js';

const ProfilesInput = z
  .object({
    action: z.enum(['list', 'save', 'delete', 'state']),
    name: z.string().min(1).max(64).optional(),
    sessionId: z.string().min(1).optional(),
    indexedDB: z.boolean().optional(),
  })
  .strict();

const ProfilesOutput = z.object({
  profiles: z.array(ProfileInfo).optional(),
  unreadable: z.number().int().optional(),
  saved: ProfileInfo.optional(),
  deleted: z.string().optional(),
  state: StorageState.optional(),
});
type ProfilesOutput = z.infer<typeof ProfilesOutput>;

/** One tool for the profile operations and the state operation: four tools would cost four times the tool-list tokens. */
export const profilesTool = defineTool({
  name: 'profiles',
  title: 'Saved logins (profiles)',
  description:
    'Saved logins (cookies + storage) of your key. list; save {sessionId, name?}; delete {name}; ' +
    "state {sessionId, indexedDB?}: the session's storage state. session_start {profile} starts from one.",
  input: ProfilesInput,
  output: ProfilesOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: (input, ctx) => runProfiles(input, ctx),
});

async function runProfiles(input: z.infer<typeof ProfilesInput>, ctx: ToolContext): Promise<ToolOutput<ProfilesOutput>> {
  const { service, owner } = ctx;
  switch (input.action) {
    case 'list': {
      const list = await service.listProfiles(owner);
      return { structured: list, text: list.profiles.map((p) => `${p.name} (saved ${p.savedAt})`).join('\n') || 'No profiles.' };
    }
    case 'delete':
      await service.deleteProfile(owner, required(input.name, 'name', 'delete'));
      return { structured: { deleted: input.name } };
    case 'save': {
      const outcome = await service.saveProfile(owner, required(input.sessionId, 'sessionId', 'save'), { name: input.name }, ctx);
      return operationOutput(outcome, (saved) => ({ structured: { saved }, text: `Saved profile "${saved.name}".` }));
    }
    case 'state': {
      const sessionId = required(input.sessionId, 'sessionId', 'state');
      const outcome = await service.sessionState(owner, sessionId, { indexedDB: input.indexedDB }, ctx);
      return operationOutput(outcome, (state) => ({ structured: { state } }));
    }
  }
}

function required<T>(value: T | undefined, field: string, action: string): T {
  if (value === undefined) throw new ServiceError('invalid_argument', `profiles ${action} needs ${field}.`);
  return value;
}
