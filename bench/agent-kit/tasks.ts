/**
 * The kit's tasks: an instruction, a start page, and a success check read from the page after the run (never from
 * what the model claims). Tasks with a `script` can also be run by the scripted model.
 */
import { latestPage } from '../../test/agent-fixtures.js';
import { lastReward } from '../../test/fixtures/task-policies.js';
import type { ReceivedRequest } from '../../test/fixtures/fake-llm.js';
import { done, ref, type Intent, type Turn } from './scripted.js';

export type Suite = 'todomvc' | 'miniwob' | 'sites';

export interface KitTask {
  name: string;
  suite: Suite;
  /** Start page on the test site server (test/sites, and ../shared under /shared/). */
  path: string;
  instruction: string;
  variables?: Record<string, string>;
  maxSteps: number;
  /** Success, from the page text read after the run. */
  check(pageText: string): boolean;
  /** Turns of a scripted model that does the task. */
  script?: Turn[];
}

const NEW_TODO = /textbox: (New Todo Input|What needs to be done)/;

const todoMvcScript: Turn[] = [
  ...['buy milk', 'walk dog', 'call mom'].map((item): Turn => (request) => [
    { method: 'fill', ref: ref(NEW_TODO)(request), value: item },
    { method: 'press', ref: ref(NEW_TODO)(request), key: 'Enter' },
  ]),
  (request) => [{ method: 'check', ref: ref(/checkbox: walk dog/)(request) }],
  (request) => [{ method: 'dblclick', ref: ref(/label: buy milk/)(request) }],
  (request) => {
    const field = ref(/textbox: .*= "buy milk"/)(request);
    return [
      { method: 'fill', ref: field, value: 'buy oat milk' },
      { method: 'press', ref: field, key: 'Enter' },
    ];
  },
  (request) => [{ method: 'click', ref: ref(/button: Clear completed/)(request) }],
  done(true, 'Added three todos, completed "walk dog", renamed "buy milk" and cleared the completed one.'),
];

const todoMvc = (app: string): KitTask => ({
  name: `todomvc-${app}`,
  suite: 'todomvc',
  path: `/shared/apps/todomvc/${app}/index.html`,
  instruction:
    'In this todo list, add three todos: "buy milk", "walk dog" and "call mom". Mark "walk dog" as completed, rename "buy milk" to "buy oat milk", then clear the completed todos.',
  maxSteps: 20,
  check: (text) => /buy oat milk/.test(text) && /call mom/.test(text) && !/walk dog|buy milk$/m.test(text) && /2 items left/.test(text),
  script: todoMvcScript,
});

const MINIWOB_INSTRUCTION =
  'This page is a MiniWoB++ task. Click START; the task then appears at the top of the page. Do it once, then call done.';
const quoted = (text: string) => /"([^"]+)"/.exec(text)?.[1] ?? '';
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The page text of the request's newest state, without its URL and title lines. */
const pageOf = (request: ReceivedRequest) => latestPage(request).split('Page text:')[1] ?? '';
const start: Turn = (request) => [{ method: 'click', ref: ref(/\bSTART\b/)(request) }];

/** MiniWoB++ tasks with a reward the page shows; success is a positive "Last reward". */
const MINIWOB: Record<string, Turn[] | undefined> = {
  'enter-text': [
    start,
    (request) => [
      { method: 'fill', ref: ref(/\] textbox/)(request), value: quoted(pageOf(request)) },
      { method: 'click', ref: ref(/button: Submit/)(request) },
    ],
    done(true, 'Entered the text and submitted.'),
  ],
  'click-dialog': [start, (request) => [{ method: 'click', ref: ref(/button: Close/)(request) }], done(true, 'Closed the dialog.')],
  'click-tab': [
    start,
    (request) => {
      const tab = /Click on (Tab #\d+)/.exec(pageOf(request))![1]!;
      return [{ method: 'click', ref: ref(new RegExp(`tab: ${escape(tab)}\\b`))(request) }];
    },
    done(true, 'Clicked the tab.'),
  ],
  'click-checkboxes': [
    start,
    (request) => {
      const names = /Select (.*) and click Submit/
        .exec(pageOf(request))![1]!
        .split(', ')
        .filter((name) => name && name !== 'nothing');
      return [
        ...names.map((name): Intent => ({ method: 'check', ref: ref(new RegExp(`checkbox: ${escape(name)}$`))(request) })),
        { method: 'click', ref: ref(/button: Submit/)(request) },
      ];
    },
    done(true, 'Checked the boxes and submitted.'),
  ],
  'click-option': undefined,
  'click-link': undefined,
  'choose-list': undefined,
  'login-user': [
    start,
    (request) => {
      const text = pageOf(request);
      const [user, password] = [...text.matchAll(/"([^"]+)"/g)].map((match) => match[1]!);
      const boxes = [...text.matchAll(/\[(\d+)\] textbox/g)].map((match) => match[1]!);
      return [
        { method: 'fill', ref: boxes[0], value: user },
        { method: 'fill', ref: boxes[1], value: password },
        { method: 'click', ref: ref(/button: Login/)(request) },
      ];
    },
    done(true, 'Logged in.'),
  ],
  'click-collapsible': undefined,
  'click-menu': undefined,
  'click-scroll-list': undefined,
  'email-inbox-delete': undefined,
};

export const TASKS: KitTask[] = [
  todoMvc('react'),
  todoMvc('vue'),
  ...Object.entries(MINIWOB).map(([name, script]): KitTask => ({
    name,
    suite: 'miniwob',
    path: `/shared/miniwob/miniwob/${name}.html`,
    instruction: MINIWOB_INSTRUCTION,
    maxSteps: 10,
    check: (text) => (lastReward(text) ?? -1) > 0,
    ...(script ? { script } : {}),
  })),
  {
    name: 'login',
    suite: 'sites',
    path: '/agent/login.html',
    instruction: 'Sign in as alice with the password %password%, then tell me the account balance.',
    variables: { password: 'correct horse battery' },
    maxSteps: 8,
    check: (text) => /Signed in as alice/.test(text) && /4,217\.93 EUR/.test(text),
    script: [
      (request) => [
        { method: 'fill', ref: ref(/Username/)(request), value: 'alice' },
        { method: 'fill', ref: ref(/Password/)(request), value: '%password%' },
        { method: 'click', ref: ref(/button: Sign in/)(request) },
      ],
      done(true, 'The balance is 4,217.93 EUR.'),
    ],
  },
  {
    name: 'archive',
    suite: 'sites',
    path: '/agent/chain/one.html',
    instruction: 'Find the vault code somewhere in this archive and tell me what it is.',
    maxSteps: 8,
    check: (text) => /7-ALPHA-42/.test(text),
    script: [
      (request) => [{ method: 'click', ref: ref(/Go to room two/)(request) }],
      (request) => [{ method: 'click', ref: ref(/Go to room three/)(request) }],
      done(true, 'The vault code is 7-ALPHA-42.'),
    ],
  },
];
