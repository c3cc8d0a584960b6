/**
 * Requirement text → user stories ("As a <role>, I want <capability>, so that <benefit>") with
 * Given-When-Then acceptance criteria, by sentence/bullet splitting and phrase patterns (no model).
 */

export interface AcceptanceCriterion {
  given: string;
  when: string;
  then: string;
}

export interface UserStory {
  id: string;
  role: string;
  /** No actor was found in the sentence; `role` is the default "user". */
  roleMissing: boolean;
  capability: string;
  benefit: string | null;
  /** The sentence or bullet the story came from. */
  source: string;
  acceptanceCriteria: AcceptanceCriterion[];
  /** "As a ..., I want ..., so that ...". */
  text: string;
}

/** Role words recognised as actors (singular; plurals and "registered/logged-in ..." qualifiers accepted). */
export const ROLE_WORDS = [
  'user', 'admin', 'administrator', 'customer', 'client', 'visitor', 'guest', 'manager', 'developer', 'operator', 'editor',
  'author', 'reader', 'buyer', 'seller', 'vendor', 'member', 'owner', 'subscriber', 'student', 'teacher', 'instructor', 'patient',
  'doctor', 'nurse', 'employee', 'agent', 'analyst', 'auditor', 'tenant', 'moderator', 'reviewer', 'approver', 'shopper',
  'player', 'driver', 'passenger', 'merchant', 'support agent', 'product owner', 'team lead', 'maintainer', 'contributor', 'staff',
];

const ABBREVIATIONS = /\b(?:[Ee]\.g|[Ii]\.e|vs|approx|incl|Mr|Mrs|Dr)\.|\b[Ee]tc\.(?=\s*[,;)]|\s+[a-z])/g;
const BULLET = /^\s*(?:[-*•+]|\d+[.)]|[a-z][.)])\s+/;
const MODAL = /\b(should be able to|must be able to|will be able to|can|could|should|must|shall|will|needs? to|wants? to|would like to|may|is able to|are able to)\b/i;
const BENEFIT = /\s*,?\s*\b(so that|in order to|so they can|so we can|so I can|because)\b\s*(.+)$/i;
const QUALIFIERS = '(?:registered|logged[- ]in|signed[- ]in|authenticated|anonymous|new|existing|returning|premium|internal|external|super|system|site|store|account|billing|support|end)';

/** Splits a text into requirement statements: bullets first, then sentences. */
export function splitStatements(text: string): string[] {
  const protectedText = text.replace(ABBREVIATIONS, (m) => m.replace(/\./g, '\u0000'));
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    const p = paragraph.join(' ').trim();
    paragraph = [];
    if (!p) return;
    for (const s of p.split(/(?<=[.!?;])\s+(?=[A-Z"'(])/)) out.push(s);
  };
  for (const raw of protectedText.split(/\r?\n/)) {
    if (BULLET.test(raw)) { flush(); out.push(raw.replace(BULLET, '')); continue; }
    if (!raw.trim()) { flush(); continue; }
    paragraph.push(raw.trim());
  }
  flush();
  return out
    .map((s) => s.replace(/\u0000/g, '.').trim())
    .filter((s) => s.split(/\s+/).length >= 3 && !/:\s*$/.test(s));
}

function roleRegex(): RegExp {
  const roles = [...ROLE_WORDS].sort((a, b) => b.length - a.length).map((r) => r.replace(/ /g, '\\s+')).join('|');
  return new RegExp(`\\b((?:${QUALIFIERS}[\\s-]+)*(?:${roles}))(?:e?s)?(?![\\w-])`, 'i');
}
const ROLE_RE = roleRegex();

function singular(role: string): string {
  return role.toLowerCase().replace(/\s+/g, ' ').replace(/(admin|user|customer|member|owner|visitor|guest|manager|developer|operator|editor|author|reader|buyer|seller|student|teacher|employee|agent|analyst|auditor|tenant|moderator|reviewer|shopper|player|driver|merchant)s$/, '$1');
}

function clean(s: string): string {
  return s.replace(/\s+/g, ' ').replace(/^[,;:\s]+|[.,;:!\s]+$/g, '').trim();
}

function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

/** Extracts "when"/"if" conditions out of a clause, returning the rest. */
function conditions(s: string): { rest: string; when?: string; given?: string } {
  let rest = s;
  let when: string | undefined;
  let given: string | undefined;
  const lead = /^(when|whenever|once|after|if|given|while|unless)\s+([^,]+),\s*(.+)$/i.exec(rest);
  if (lead) {
    const kw = lead[1]!.toLowerCase();
    if (kw === 'if' || kw === 'given' || kw === 'while' || kw === 'unless') given = clean(`${kw === 'unless' ? 'not ' : ''}${lead[2]}`);
    else when = clean(lead[2]!);
    rest = lead[3]!;
  }
  const trail = /^(.+?)\s+\b(when|whenever|once|after|if|while)\b\s+(.+)$/i.exec(rest);
  if (trail) {
    const kw = trail[2]!.toLowerCase();
    if (kw === 'if' || kw === 'while') given ??= clean(trail[3]!);
    else when ??= clean(trail[3]!);
    rest = trail[1]!;
  }
  return { rest, ...(when ? { when } : {}), ...(given ? { given } : {}) };
}

const AS_A = /^\s*as an?\s+(.+?),\s*I\s+(?:want|would like|need|can)\s+(?:to\s+)?(.+?)(?:,?\s*(?:so that|in order to)\s+(.+?))?\s*\.?\s*$/i;

/** Derives one story from one statement; undefined when the statement has no capability. */
export function deriveStory(statement: string, id: string): UserStory | undefined {
  const source = clean(statement);
  let role: string | undefined;
  let capability: string | undefined;
  let benefit: string | null = null;
  let outcome: string | undefined;
  let cond: { when?: string; given?: string } = {};
  const asA = AS_A.exec(source);
  if (asA) {
    role = singular(asA[1]!);
    const c = conditions(asA[2]!);
    capability = clean(c.rest);
    cond = c;
    benefit = asA[3] ? clean(asA[3]) : null;
    outcome = `the ${role} can ${capability}`;
  } else {
    const b = BENEFIT.exec(source);
    const main = b ? source.slice(0, b.index) : source;
    if (b) benefit = clean(b[2]!);
    const c = conditions(main);
    cond = c;
    const body = clean(c.rest);
    const modal = MODAL.exec(body);
    const subject = modal ? clean(body.slice(0, modal.index)) : '';
    const predicate = modal ? clean(body.slice(modal.index + modal[0].length)).replace(/^(be able to|to)\s+/i, '') : body;
    if (!predicate || predicate.split(/\s+/).length < 1) return undefined;
    const roleInSubject = subject ? ROLE_RE.exec(subject) : null;
    const roleAnywhere = ROLE_RE.exec(source);
    if (roleInSubject) {
      role = singular(roleInSubject[1]!);
      capability = lowerFirst(predicate);
    } else {
      if (roleAnywhere) role = singular(roleAnywhere[1]!);
      capability = subject ? `${lowerFirst(subject)} to ${predicate}` : lowerFirst(predicate);
    }
    outcome = modal ? `${subject ? lowerFirst(subject) : `the ${role ?? 'user'}`} ${modal[0].toLowerCase()} ${predicate}` : lowerFirst(body);
  }
  if (!capability) return undefined;
  const roleMissing = !role;
  const actor = role ?? 'user';
  const article = /^[aeio]/i.test(actor) ? 'an' : 'a';
  const given = cond.given ? `${article} ${actor} and ${cond.given}` : `${article} ${actor}`;
  const nounFirst = /^(the|a|an|my|our|their|its|it|this|that|all|each|every)\b/i.test(capability);
  const subjectOfCapability = nounFirst ? /^(.+?) to /.exec(capability)?.[1] : undefined;
  const when = cond.when ?? (nounFirst ? `the ${actor} uses ${subjectOfCapability ?? 'the feature'}` : `the ${actor} attempts to ${capability}`);
  const criteria: AcceptanceCriterion[] = [{ given, when, then: outcome ?? `the ${actor} can ${capability}` }];
  const text = `As ${article} ${actor}, I want ${nounFirst ? '' : 'to '}${capability}, so that ${benefit ?? '[benefit not stated]'}.`;
  return { id, role: actor, roleMissing, capability, benefit, source, acceptanceCriteria: criteria, text };
}

/** Splits a requirement text into user stories (S1, S2...). */
export function analyzeRequirements(text: string): UserStory[] {
  const stories: UserStory[] = [];
  for (const s of splitStatements(text)) {
    const story = deriveStory(s, `S${stories.length + 1}`);
    if (story) stories.push(story);
  }
  return stories;
}

/** Share of the story's parts found in the text (actor, capability, benefit, a When and a Then). */
export function completeness(s: UserStory): number {
  const c = s.acceptanceCriteria[0];
  return ((s.roleMissing ? 0 : 1) + (s.capability ? 1 : 0) + (s.benefit ? 1 : 0) + (c && !/attempts to| uses /.test(c.when) ? 1 : 0.5) + (c?.then ? 1 : 0)) / 5;
}
