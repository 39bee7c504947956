import { z } from 'zod';
import { DEFAULT_SETTLE_MS, MAX_SETTLE_MS, Settled } from '../settle/index.js';
import { ListedVariableValue, VariableValue } from '../variables.js';

/**
 * What act can do. Element methods need a ref; press and scroll take one optionally; history and waiting act on the
 * page. Kept in one operation (not a tool each) because every tool a client lists costs its model tokens each turn.
 */
export const ACT_METHODS = [
  'click',
  'dblclick',
  'fill',
  'type',
  'press',
  'selectOption',
  'check',
  'uncheck',
  'hover',
  'scroll',
  'dragTo',
  'upload',
  'selectText',
  'back',
  'forward',
  'reload',
  'wait',
  'newTab',
  'selectTab',
  'closeTab',
] as const;
export const ActMethod = z.enum(ACT_METHODS);
export type ActMethod = z.infer<typeof ActMethod>;

/** Methods that act on one element and so need its ref or a selector (or, for some, a point). */
export const ELEMENT_METHODS: ReadonlySet<ActMethod> = new Set([
  'click',
  'dblclick',
  'fill',
  'type',
  'selectOption',
  'check',
  'uncheck',
  'hover',
  'dragTo',
  'upload',
  'selectText',
]);
/** Element methods that also take a point of the viewport (action.x, action.y) instead of an element. */
export const POINT_METHODS: ReadonlySet<ActMethod> = new Set(['click', 'dblclick', 'hover', 'dragTo']);
/** Methods on the page as a whole; a ref given with them is ignored. */
export const PAGE_METHODS: ReadonlySet<ActMethod> = new Set(['back', 'forward', 'reload', 'wait', 'newTab', 'selectTab', 'closeTab']);

const Modifier = z.enum(['Alt', 'Control', 'ControlOrMeta', 'Meta', 'Shift']);
/** Longest press and hold of a click (`delay`), and most presses of one key (`times`) in one action. */
export const MAX_HOLD_MS = 10_000;
export const MAX_PRESS_TIMES = 100;
const ClickArguments = z
  .object({
    button: z.enum(['left', 'right', 'middle']).optional().describe('"right" opens a context menu.'),
    modifiers: z.array(Modifier).max(4).optional(),
    delay: z
      .number()
      .int()
      .min(0)
      .max(MAX_HOLD_MS)
      .optional()
      .describe(`Hold the button this long, ms (press and hold; at most ${MAX_HOLD_MS}).`),
  })
  .strict();
const Empty = z.object({}).strict();

/** Upload content limits: the REST body limit (1 MiB) is lower; the library has no body limit, so the core caps it too. */
export const MAX_UPLOAD_FILES = 20;
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
export const MAX_WAIT_MS = 30_000;
/** Longest selector an argument takes (as action.selector), and longest text `wait` looks for. */
export const MAX_SELECTOR_CHARS = 2_000;
export const MAX_WAIT_TEXT_CHARS = 2_000;
/** Farthest a drop `position` may be from its target's top-left, CSS px (a viewport is at most 4096 px wide). */
export const MAX_DROP_OFFSET = 10_000;
/** Most screens one scroll moves, and the highest occurrence selectText counts to. */
export const MAX_SCROLL_SCREENS = 20;
export const MAX_OCCURRENCE = 1000;
/**
 * Longest text a fill puts in a field, and longest a type types key by key (issue 40: a 10 MB fill was read back,
 * diffed and counted); a longer text is a file to upload. Option values and keys are short.
 */
export const MAX_FILL_CHARS = 100_000;
export const MAX_TYPE_CHARS = 10_000;
const MAX_OPTION_VALUES = 100;
const MAX_OPTION_CHARS = 1_000;
const MAX_KEY_CHARS = 100;
const MAX_URL_CHARS = 8_192;
const MAX_TAB_ID_CHARS = 100;
/** Largest act request a door reads: the largest upload as base64 (4/3 of its bytes) plus 1 MiB for the rest. */
export const MAX_ACT_INPUT_BYTES = Math.ceil((MAX_UPLOAD_BYTES * 4) / 3) + 1024 * 1024;

export const UploadFile = z
  .object({
    name: z.string().min(1).max(255).describe('File name the page sees.'),
    mimeType: z.string().min(1).max(255).optional().describe('Default application/octet-stream.'),
    contentBase64: z.string().describe('File content, base64.'),
  })
  .strict();

/** The arguments of each method; %name% placeholders in strings are filled from `variables` before these are checked. */
export const METHOD_ARGUMENTS: Record<ActMethod, z.ZodObject> = {
  click: ClickArguments,
  dblclick: ClickArguments,
  fill: z
    .object({
      value: z.string().max(MAX_FILL_CHARS).describe('Replaces the field text.'),
      submit: z.boolean().optional().describe('Press Enter after.'),
    })
    .strict(),
  type: z
    .object({ text: z.string().max(MAX_TYPE_CHARS).describe('Typed key by key at the end of the field (autocompletes, key handlers).') })
    .strict(),
  press: z
    .object({
      key: z.string().min(1).max(MAX_KEY_CHARS).describe('A key or chord: "Enter", "Escape", "Control+A".'),
      times: z.number().int().min(1).max(MAX_PRESS_TIMES).optional().describe(`Press it this many times (at most ${MAX_PRESS_TIMES}).`),
    })
    .strict(),
  selectOption: z
    .object({
      values: z
        .array(z.string().max(MAX_OPTION_CHARS))
        .min(1)
        .max(MAX_OPTION_VALUES)
        .describe('Option values or labels; several for a multi-select.'),
    })
    .strict(),
  check: Empty,
  uncheck: Empty,
  hover: Empty,
  scroll: z
    .object({
      direction: z.enum(['up', 'down']).optional().describe('Without it, a ref is scrolled into view and the page down.'),
      screens: z.number().positive().max(MAX_SCROLL_SCREENS).optional().describe('How far, in viewport (or element) heights; default 1.'),
    })
    .strict(),
  dragTo: z
    .object({
      targetRef: z.string().min(1).optional().describe('Ref of the element to drop onto.'),
      targetSelector: z.string().min(1).max(MAX_SELECTOR_CHARS).optional().describe('Or a selector of it.'),
      position: z
        .object({
          x: z.number().min(-MAX_DROP_OFFSET).max(MAX_DROP_OFFSET),
          y: z.number().min(-MAX_DROP_OFFSET).max(MAX_DROP_OFFSET),
        })
        .strict()
        .optional()
        .describe('Where in the target, CSS px from its top-left (above or below an item); default its centre.'),
      x: z.number().optional().describe('Or a point of the viewport to drop at (with y).'),
      y: z.number().optional(),
    })
    .strict(),
  upload: z.object({ files: z.array(UploadFile).min(1).max(MAX_UPLOAD_FILES) }).strict(),
  selectText: z
    .object({
      text: z.string().min(1).max(10_000).describe('The words to select, as the element shows them.'),
      occurrence: z.number().int().min(1).max(MAX_OCCURRENCE).optional().describe('Which of several, 1 = the first (default).'),
    })
    .strict(),
  back: Empty,
  forward: Empty,
  reload: Empty,
  wait: z
    .object({
      text: z.string().min(1).max(MAX_WAIT_TEXT_CHARS).optional().describe('Wait until this text is visible.'),
      textGone: z.string().min(1).max(MAX_WAIT_TEXT_CHARS).optional().describe('Wait until this text is no longer visible.'),
      ms: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe('Wait this long, ms.'),
    })
    .describe('With no arguments: wait for the page to settle.')
    .strict(),
  newTab: z.object({ url: z.string().min(1).max(MAX_URL_CHARS).describe('Opened in a new tab, which becomes the active one.') }).strict(),
  selectTab: z
    .object({ tabId: z.string().min(1).max(MAX_TAB_ID_CHARS).describe('A tabId from the session info or an act result.') })
    .strict(),
  closeTab: z.object({ tabId: z.string().min(1).max(MAX_TAB_ID_CHARS) }).strict(),
};

/** Each method's arguments as the MCP tool's description shows them in brief, with their bounds (the schema has the whole). */
export const METHOD_ARGUMENT_HINTS: Record<ActMethod, string> = {
  click: `{button?, delay? ≤${MAX_HOLD_MS}}`,
  dblclick: '',
  fill: `{value ≤${MAX_FILL_CHARS}, submit?}`,
  type: `{text ≤${MAX_TYPE_CHARS}}`,
  press: `{key, times? ≤${MAX_PRESS_TIMES}}`,
  selectOption: '{values}',
  check: '',
  uncheck: '',
  hover: '',
  scroll: `{direction?, screens? ≤${MAX_SCROLL_SCREENS}}`,
  dragTo: '{targetRef | targetSelector | x, y; position?}',
  upload: `{files: [{name, contentBase64}] ≤${MAX_UPLOAD_FILES}, ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB}`,
  selectText: `{text, occurrence? ≤${MAX_OCCURRENCE}}`,
  back: '',
  forward: '',
  reload: '',
  wait: `{text | textGone | ms ≤${MAX_WAIT_MS}}`,
  newTab: '{url}',
  selectTab: '{tabId}',
  closeTab: '{tabId}',
};

/** `click {button?, delay? ≤10000}, fill {value, submit?}, ...`: the methods that take arguments, in the table's order, with them in brief. */
export function methodList(): string {
  return ACT_METHODS.filter((method) => METHOD_ARGUMENT_HINTS[method])
    .map((method) => `${method} ${METHOD_ARGUMENT_HINTS[method]}`)
    .join(', ');
}

/** What each method does, in one line a model reads (the agent's tool descriptions). */
export const METHOD_DESCRIPTIONS: Record<ActMethod, string> = {
  click: 'Click (link, button, checkbox, ...); button "right" for a context menu, delay ms to press and hold.',
  dblclick: 'Double-click (opens many list items for editing).',
  fill: "Replace a field's text (submit: then press Enter); %name% stands for a variable you were given.",
  type: 'Type key by key at the end of a field (autocompletes); fill otherwise.',
  press: 'Press a key or chord ("Enter", "Control+A") on the target, or on the focused element; times: repeat it.',
  selectOption: 'Choose <select> options by value or label.',
  check: 'Check a checkbox or radio.',
  uncheck: 'Uncheck a checkbox.',
  hover: 'Hover (opens menus and tooltips).',
  scroll: 'Scroll the page or the target by screens; a target alone is scrolled into view.',
  dragTo: "Drag onto targetRef, targetSelector or x, y; position {x, y}: px from the target's top-left (drop above or below).",
  upload: "Set a file input's files.",
  selectText: 'Select these words in a field or an editable text (then format them, copy, or type over them).',
  back: 'Back in the tab history.',
  forward: 'Forward in the tab history.',
  reload: 'Reload the page.',
  wait: 'Wait for text to appear, textGone to go, or ms; with none, until the page settles.',
  newTab: 'Open a URL in a new tab, which becomes active.',
  selectTab: 'Make another tab active.',
  closeTab: 'Close a tab.',
};

export const Action = z
  .object({
    ref: z.string().min(1).optional().describe('From the page text, e.g. "12".'),
    selector: z.string().min(1).max(2000).optional().describe('Matching one visible element.'),
    x: z.number().optional().describe('CSS px, as a screenshot at scale 1 shows them.'),
    y: z.number().optional(),
    method: ActMethod,
    arguments: z.record(z.string(), z.unknown()).optional().describe('Per method, e.g. fill {value}.'),
    description: z.string().optional().describe('Ignored: lets an observe result be passed as is.'),
  })
  .strict();
export type Action = z.infer<typeof Action>;

/** Most actions one act call runs in order (`actions`). */
export const MAX_ACTIONS = 50;

const VARIABLES_DESCRIPTION =
  'Values for %name% placeholders in arguments, never shown to a model. {value, origins}: typed only on those origins, refused elsewhere.';

export const ActRequest = z
  .object({
    action: Action.optional().describe('What to do (no model); an observe result as is.'),
    // Each item is checked as an Action by act itself: listing Action's schema twice would cost every client's model
    // about 150 tokens a turn.
    actions: z
      .array(z.record(z.string(), z.unknown()))
      .min(1)
      .max(MAX_ACTIONS)
      .optional()
      .describe('Each like action, run in order; stops at the first that fails. One answer.'),
    instruction: z.string().min(1).optional().describe('What to do, in words; a model picks the action.'),
    variables: z.record(z.string(), VariableValue).optional().describe(VARIABLES_DESCRIPTION),
    modelName: z.string().min(1).optional(),
    modelClientOptions: z.record(z.string(), z.unknown()).optional(),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(120_000)
      .optional()
      .describe('Longest wait for the element to be actionable, ms (default 10000).'),
    maxTokens: z
      .number()
      .int()
      .min(0)
      .max(200_000)
      .optional()
      .describe('Budget for the page change in the result, o200k tokens (default 2000).'),
    settleMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_SETTLE_MS)
      .optional()
      .describe(`Wait for the page to settle after, ms (default ${DEFAULT_SETTLE_MS}).`),
  })
  .strict();
export type ActRequest = z.infer<typeof ActRequest>;

/** The request as tools/list shows it: a variable's `{value, origins}` form said in words rather than in the schema. */
export const ActListedRequest = ActRequest.extend({
  variables: z.record(z.string(), ListedVariableValue).optional().describe(VARIABLES_DESCRIPTION),
});

export const ActResult = z.object({
  success: z.boolean(),
  message: z.string().describe('What was done, in one sentence.'),
  action: z.object({
    ref: z.string().optional(),
    selector: z.string().optional(),
    x: z.number().optional(),
    y: z.number().optional(),
    method: ActMethod,
    arguments: z.record(z.string(), z.unknown()).describe('As given or inferred: %name% placeholders stay placeholders.'),
    description: z.string(),
  }),
  url: z.string(),
  title: z.string(),
  pageChanged: z.boolean().describe('The page text or URL differs from before the action.'),
  navigated: z.boolean().describe('The page now shows another document: pageText is the new page.'),
  diff: z
    .object({
      added: z.array(z.string()),
      removed: z.array(z.string()),
      lines: z
        .array(z.string())
        .optional()
        .describe(
          'The change as the text answer shows it, in page order: "+ line", "- line", "- N lines (first … last)" for a run ' +
            'removed, "  line" for an unchanged line beside a change (the label of a value that changed). Absent when it ' +
            'would be the removed lines, then the added ones.',
        ),
    })
    .optional()
    .describe(
      'Lines of the page text added and removed since the last read (same document), each in page order; a stretch ' +
        'reordered or rewritten counts as all removed and all added.',
    ),
  pageText: z
    .string()
    .optional()
    .describe('The page text after the action: it navigated, had not been read before, or costs fewer tokens than its change.'),
  truncated: z.string().optional().describe('Says what was cut to stay within maxTokens.'),
  settled: Settled.optional(),
  steps: z
    .array(z.object({ method: ActMethod, message: z.string() }))
    .optional()
    .describe('With actions: what each one did, in order (the last action is `action`).'),
  failed: z
    .object({ step: z.number().int(), code: z.string(), message: z.string() })
    .optional()
    .describe('With actions: the one that failed (1-based), its error; those after it did not run.'),
  tabs: z
    .array(z.object({ tabId: z.string(), url: z.string(), active: z.boolean() }))
    .optional()
    .describe("The session's tabs, when it has more than one."),
});
export type ActResult = z.infer<typeof ActResult>;

export const ObserveRequest = z
  .object({
    instruction: z.string().min(1).optional().describe('Which elements, in words.'),
    selector: z.string().min(1).optional().describe('XPath limiting the search to one subtree.'),
    iframes: z.boolean().optional().describe('Include iframe content (default: when an iframe covers half the viewport).'),
    modelName: z.string().min(1).optional(),
    modelClientOptions: z.record(z.string(), z.unknown()).optional(),
    domSettleTimeoutMs: z.number().int().min(0).max(300_000).optional(),
  })
  .strict();
export type ObserveRequest = z.infer<typeof ObserveRequest>;

export const ObservedAction = z.object({
  ref: z.string(),
  description: z.string(),
  method: ActMethod,
  arguments: z.record(z.string(), z.unknown()),
});
export type ObservedAction = z.infer<typeof ObservedAction>;

export const ObserveResult = z.object({ actions: z.array(ObservedAction) });
export type ObserveResult = z.infer<typeof ObserveResult>;

export const ScreenshotRequest = z
  .object({
    fullPage: z.boolean().optional().describe('The whole page (down to a height cap) instead of the viewport.'),
    ref: z.string().min(1).optional().describe('Only this element.'),
    format: z.enum(['png', 'jpeg']).optional().describe('Default png.'),
    quality: z.number().int().min(0).max(100).optional().describe('JPEG quality (default 80).'),
    annotate: z.boolean().optional().describe('Draw the refs on it.'),
  })
  .strict();
export type ScreenshotRequest = z.infer<typeof ScreenshotRequest>;

export const ScreenshotInfo = z.object({
  mimeType: z.enum(['image/png', 'image/jpeg']),
  width: z.number().int(),
  height: z.number().int(),
  bytes: z.number().int(),
  scale: z.number().describe('Image pixels per CSS pixel; below 1 when scaled down to the size caps.'),
  clipped: z.boolean().describe('A full page taller than the height cap was cut at it.'),
  annotated: z.number().int().optional().describe('How many refs were drawn (annotate).'),
});
export type ScreenshotInfo = z.infer<typeof ScreenshotInfo>;
