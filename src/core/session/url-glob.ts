/**
 * A blockUrls glob in Playwright's syntax (`*`: any characters but `/`; `**`: any characters; `{a,b}`: either;
 * `\`: the next character as it is; a glob not starting with `*` is a URL, its origin compared in lower case), matched
 * by running the glob's automaton over the URL once: the work grows with the glob's length times the URL's, whatever
 * the glob. Playwright turns a glob into a RegExp, and V8 backtracks: `**\/` + `a*` x 14 + `b` against a URL of 36 `a`s
 * held the event loop, so the whole server, for 85 s (issue 32).
 */
export class UrlGlob {
  /** Work done by every `matches` so far: states visited, at most about size x (URL length + 1) per call. */
  steps = 0;
  private readonly marks: Int32Array;
  private generation = 0;
  private current: Int32Array;
  private reached: Int32Array;

  private constructor(
    /** Per state: what it reads (CHAR: `chars`, NOT_SLASH, ANY), or MATCH. */
    private readonly kinds: Uint8Array,
    private readonly chars: Uint16Array,
    /** Per state: the states reading the next character (or the match) once it has read its own. */
    private readonly after: Int32Array[],
    private readonly first: Int32Array,
  ) {
    this.marks = new Int32Array(kinds.length);
    this.current = new Int32Array(kinds.length);
    this.reached = new Int32Array(kinds.length);
  }

  /** Compiles `glob`; throws an Error saying what is wrong (a nested or unmatched brace). */
  static compile(glob: string): UrlGlob {
    const states: State[] = [{ kind: 'match' }];
    const start = build(parse(resolveGlob(glob)), 0, states);
    const closures = states.map((_, index) => closure(states, index));
    return new UrlGlob(
      Uint8Array.from(states, (state) => KINDS[state.kind]),
      Uint16Array.from(states, (state) => (state.kind === 'char' ? state.char.charCodeAt(0) : 0)),
      states.map((state) => (state.kind === 'char' || state.kind === 'notSlash' || state.kind === 'any' ? closures[state.next]! : EMPTY)),
      closures[start]!,
    );
  }

  /** Number of states of the automaton (about the glob's length). */
  get size(): number {
    return this.kinds.length;
  }

  /**
   * Whether the whole of `url` matches; undefined once more than `budget` steps went into it (the work is bounded
   * by size x URL length, yet a 2,048-character glob against a URL of 100,000 characters is 200 million steps).
   */
  matches(url: string, budget = Infinity): boolean | undefined {
    const { kinds, chars, after, marks } = this;
    let current = this.current;
    let reached = this.reached;
    current.set(this.first);
    let count = this.first.length;
    const limit = this.steps + budget;
    for (let i = 0; i < url.length && count > 0; i++) {
      const char = url.charCodeAt(i);
      const generation = ++this.generation;
      let next = 0;
      for (let j = 0; j < count; j++) {
        const state = current[j]!;
        const kind = kinds[state]!;
        this.steps++;
        const reads = kind === CHAR ? chars[state] === char : kind === NOT_SLASH ? char !== SLASH : kind === ANY && !isLineEnd(char);
        if (!reads) continue;
        for (const target of after[state]!) {
          this.steps++;
          if (marks[target] === generation) continue;
          marks[target] = generation;
          reached[next++] = target;
        }
      }
      [current, reached] = [reached, current];
      count = next;
      if (this.steps > limit) return undefined;
    }
    for (let j = 0; j < count; j++) if (kinds[current[j]!] === MATCH) return true;
    return false;
  }
}

const CHAR = 0;
const NOT_SLASH = 1;
const ANY = 2;
const MATCH = 3;
const SPLIT = 4;
const KINDS = { char: CHAR, notSlash: NOT_SLASH, any: ANY, match: MATCH, split: SPLIT } as const;
const SLASH = 0x2f;
const EMPTY = new Int32Array(0);

/** RegExp's `.` (what Playwright's `**` compiles to) does not match line terminators. */
function isLineEnd(char: number): boolean {
  return char === 0x0a || char === 0x0d || char === 0x2028 || char === 0x2029;
}

/** The states reached from `from` without reading a character, each once: those that read one, and the match. */
function closure(states: State[], from: number): Int32Array {
  const seen = new Set<number>();
  const out: number[] = [];
  const stack = [from];
  while (stack.length) {
    const index = stack.pop()!;
    if (seen.has(index)) continue;
    seen.add(index);
    const state = states[index]!;
    if (state.kind === 'split') stack.push(...state.next);
    else out.push(index);
  }
  return Int32Array.from(out);
}

type State =
  | { kind: 'match' }
  | { kind: 'char'; char: string; next: number }
  | { kind: 'notSlash' | 'any'; next: number }
  | { kind: 'split'; next: number[] };

/** One element of a glob, as Playwright's globToRegexPattern reads it. */
type Item =
  | { kind: 'char'; char: string }
  /** `*`, `**` */
  | { kind: 'notSlash' | 'any' }
  /** `**\/` after a character other than `/`: any characters, then `/` */
  | { kind: 'anyThenSlash' }
  /** `/**\/`: nothing, or at least one character then `/` */
  | { kind: 'dirs' }
  | { kind: 'group'; alternatives: Item[][] };

function parse(glob: string): Item[] {
  const items: Item[] = [];
  let group: Item[][] | undefined;
  let sequence = items;
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === '\\' && i + 1 < glob.length) {
      sequence.push({ kind: 'char', char: glob[++i]! });
    } else if (char === '*') {
      const before = glob[i - 1];
      let stars = 1;
      while (glob[i + 1] === '*') {
        stars++;
        i++;
      }
      if (stars === 1) sequence.push({ kind: 'notSlash' });
      else if (glob[i + 1] !== '/') sequence.push({ kind: 'any' });
      else {
        sequence.push({ kind: before === '/' ? 'dirs' : 'anyThenSlash' });
        i++;
      }
    } else if (char === '{') {
      if (group) throw new Error(`Invalid glob pattern ${JSON.stringify(glob)}: nested '{' is not supported`);
      group = [[]];
      items.push({ kind: 'group', alternatives: group });
      sequence = group[0]!;
    } else if (char === '}') {
      if (!group) throw new Error(`Invalid glob pattern ${JSON.stringify(glob)}: unmatched '}'`);
      group = undefined;
      sequence = items;
    } else if (char === ',' && group) {
      sequence = [];
      group.push(sequence);
    } else {
      sequence.push({ kind: 'char', char });
    }
  }
  if (group) throw new Error(`Invalid glob pattern ${JSON.stringify(glob)}: unmatched '{'`);
  return items;
}

/** Adds the states of `items` followed by state `next` (built from the end); returns the first one. */
function build(items: Item[], next: number, states: State[]): number {
  for (let i = items.length - 1; i >= 0; i--) next = buildItem(items[i]!, next, states);
  return next;
}

function buildItem(item: Item, next: number, states: State[]): number {
  const add = (state: State) => states.push(state) - 1;
  switch (item.kind) {
    case 'char':
      return add({ kind: 'char', char: item.char, next });
    case 'notSlash':
    case 'any': {
      const loop: State = { kind: 'split', next: [] };
      const index = add(loop);
      loop.next = [add({ kind: item.kind, next: index }), next];
      return index;
    }
    case 'anyThenSlash':
      return buildItem({ kind: 'any' }, add({ kind: 'char', char: '/', next }), states);
    case 'dirs': {
      const rest = buildItem({ kind: 'any' }, add({ kind: 'char', char: '/', next }), states);
      return add({ kind: 'split', next: [add({ kind: 'any', next: rest }), next] });
    }
    case 'group':
      return add({ kind: 'split', next: item.alternatives.map((alternative) => build(alternative, next, states)) });
  }
}

/**
 * Playwright's resolveGlobBase without a base URL: a glob that does not start with `*` and parses as a URL once its
 * wildcard segments are set aside is that URL as the URL parser writes it (the origin in lower case).
 */
function resolveGlob(glob: string): string {
  if (glob.startsWith('*')) return glob;
  glob = glob.replaceAll('\\\\?', '?');
  if (/^(about|data|chrome|edge|file):/.test(glob)) return glob;
  const tokens = new Map<string, string>();
  const setAside = (original: string, placeholder: string): string => {
    if (!original) return '';
    tokens.set(placeholder, original);
    return placeholder;
  };
  const relative = glob
    .split('/')
    .map((token, index) => {
      if (token === '.' || token === '..' || token === '') return token;
      if (index === 0 && token.endsWith(':')) return /[*{]/.test(token) ? setAside(token, 'http:') : token;
      if (!/[*?{}\\]/.test(token)) return token;
      const question = token.indexOf('?');
      if (question === -1) return setAside(token, `$_${index}_$`);
      return setAside(token.slice(0, question), `$_${index}_$`) + setAside(token.slice(question), `?$_${index}_$`);
    })
    .join('/');
  let resolved = relative;
  let origin: string | undefined;
  try {
    const url = new URL(relative);
    resolved = url.toString();
    origin = url.origin;
  } catch {
    // Not a URL: the glob as written.
  }
  for (const [placeholder, original] of tokens) {
    const replacement = origin?.includes(placeholder) ? original.toLowerCase() : original;
    resolved = resolved.replace(placeholder, () => replacement);
  }
  return resolved;
}
