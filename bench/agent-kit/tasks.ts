/**
 * The kit's tasks: an instruction, a start page, and a success check read from the page after the run (never from
 * what the model claims). Tasks with a `script` can also be run by the scripted model.
 */
import { latestPage } from '../../test/agent-fixtures.js';
import { lastReward } from '../../test/fixtures/task-policies.js';
import type { ReceivedRequest } from '../../test/fixtures/fake-llm.js';
import { done, ref, type Intent, type Turn } from './scripted.js';

export type Suite = 'todomvc' | 'miniwob' | 'sites' | 'novel';

export interface KitTask {
  name: string;
  suite: Suite;
  /** Start page on the test site server (test/sites; TodoMVC and MiniWoB++ under /apps/). */
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
  path: `/apps/todomvc/${app}/index.html`,
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

/**
 * Apps written for real-model runs and seen by no model before (test/sites/novel, TASKS.md there): no scripts, a real
 * model or the relay plays them. Success is what each app shows once the task is right (and only then).
 */
const NOVEL: KitTask[] = (
  [
    {
      name: 'novel-kanban',
      path: '/novel/kanban.html',
      instruction:
        "On the sprint board, the login redirect fix is finished: move the card 'Fix login redirect loop' into the Done column, and put it directly above 'Migrate user table' there.",
      check: (text) => /Board updated: login fix is done and prioritised/.test(text),
    },
    {
      name: 'novel-contacts',
      path: '/novel/contacts.html',
      instruction: "In my contacts, Chen Wei's name should be 'Chen Wei-Ling', please fix it. Also delete Eli Sandoval.",
      check: (text) => /All changes saved/.test(text),
    },
    {
      name: 'novel-datepicker',
      path: '/novel/datepicker.html',
      instruction: 'Book my dental check-up for Thursday 22 May 2025.',
      check: (text) => /Appointment booked for Thu, 22 May 2025\./.test(text),
    },
    {
      name: 'novel-filetree',
      path: '/novel/filetree.html',
      instruction: "There's a file called legacy-date.ts somewhere in the src folder. Move it into the archive folder.",
      check: (text) => /legacy-date\.ts archived\./.test(text),
    },
    {
      name: 'novel-canvas',
      path: '/novel/canvas.html',
      instruction: 'On the warehouse map, select the green zone labelled Delta.',
      check: (text) => /Zone Delta selected\.(?! —)/.test(text),
    },
    {
      name: 'novel-settings',
      path: '/novel/settings.html',
      instruction:
        'In my preferences, turn on push notifications and the weekly digest, change the language to Spanish, set the alert volume to about 75%, and save.',
      check: (text) =>
        /Settings saved/.test(text) &&
        /Español/.test(text) &&
        /\b(7\d|80)%/.test(text) &&
        [/Email notifications.*, on\)/, /Push notifications.*, on\)/, /Weekly digest.*, on\)/, /Sounds.*, on\)/].every((on) =>
          on.test(text),
        ) &&
        ![/Product news.*, on\)/, /Do not disturb.*, on\)/].some((on) => on.test(text)),
    },
  ] satisfies Array<Omit<KitTask, 'suite' | 'maxSteps'>>
).map((task) => ({ ...task, suite: 'novel' as const, maxSteps: 25 }));

export const TASKS: KitTask[] = [
  todoMvc('react'),
  todoMvc('vue'),
  ...Object.entries(MINIWOB).map(([name, script]): KitTask => ({
    name,
    suite: 'miniwob',
    path: `/apps/miniwob/miniwob/${name}.html`,
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
  ...NOVEL,
];
