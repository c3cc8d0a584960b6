/**
 * Built-in detections over log lines and their MITRE ATT&CK mapping. The table is deliberately
 * small: each detection kind maps to exactly one technique that its evidence supports.
 */
import type { Severity } from '../findings/finding';

export interface Technique {
  id: string;
  name: string;
  tactic: string;
}

export type DetectionKind = 'ssh-brute-force' | 'unexpected-sudo' | 'web-shell' | 'encoded-powershell' | 'curl-pipe-shell' | 'ioc-contact' | 'scanner-user-agent';

export const TECHNIQUES: Readonly<Record<DetectionKind, Technique>> = {
  'ssh-brute-force': { id: 'T1110', name: 'Brute Force', tactic: 'Credential Access' },
  'unexpected-sudo': { id: 'T1548', name: 'Abuse Elevation Control Mechanism', tactic: 'Privilege Escalation' },
  'web-shell': { id: 'T1505.003', name: 'Server Software Component: Web Shell', tactic: 'Persistence' },
  'encoded-powershell': { id: 'T1059.001', name: 'Command and Scripting Interpreter: PowerShell', tactic: 'Execution' },
  'curl-pipe-shell': { id: 'T1059.004', name: 'Command and Scripting Interpreter: Unix Shell', tactic: 'Execution' },
  'ioc-contact': { id: 'T1071', name: 'Application Layer Protocol', tactic: 'Command and Control' },
  'scanner-user-agent': { id: 'T1595', name: 'Active Scanning', tactic: 'Reconnaissance' },
};

export function techniqueFor(kind: DetectionKind): Technique {
  return TECHNIQUES[kind];
}

export type LogFormat = 'access' | 'syslog' | 'json' | 'unknown';

/** One line, recognized: the text detections look at and the fields a format gives. */
export interface ParsedLine {
  format: LogFormat;
  /** Text the detections read: the raw line, or a JSON line's string values joined, percent-decoded for access logs. */
  text: string;
  clientIp?: string;
  request?: string;
  userAgent?: string;
  program?: string;
  message?: string;
}

const ACCESS_RE = /^(\S+) \S+ \S+ \[([^\]]+)\] "([^"]*)" (\d{3}) (\S+)(?: "([^"]*)" "([^"]*)")?/;
const SYSLOG_RE = /^(?:[A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) (\S+) ([\w./-]+)(?:\[\d+\])?: (.*)$/;

export function percentDecode(s: string): string {
  return s.replace(/\+/g, ' ').replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

function jsonStrings(v: unknown, out: string[], depth = 0): void {
  if (depth > 6) return;
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
  else if (Array.isArray(v)) for (const x of v) jsonStrings(x, out, depth + 1);
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { if (typeof x !== 'object') out.push(`${k}=`); jsonStrings(x, out, depth + 1); }
}

export function parseLogLine(line: string): ParsedLine {
  const a = ACCESS_RE.exec(line);
  if (a) {
    const p: ParsedLine = { format: 'access', text: percentDecode(line), clientIp: a[1]!, request: percentDecode(a[3]!) };
    if (a[7] !== undefined) p.userAgent = a[7];
    return p;
  }
  const s = SYSLOG_RE.exec(line);
  if (s) return { format: 'syslog', text: line, program: s[2]!, message: s[3]! };
  const t = line.trimStart();
  if (t.startsWith('{')) {
    try {
      const obj = JSON.parse(t) as unknown;
      if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
        const parts: string[] = [];
        jsonStrings(obj, parts);
        const o = obj as Record<string, unknown>;
        const p: ParsedLine = { format: 'json', text: parts.join(' ') };
        const ip = o['ip'] ?? o['client_ip'] ?? o['remote_addr'] ?? o['src_ip'] ?? o['clientIp'];
        if (typeof ip === 'string') p.clientIp = ip;
        const ua = o['user_agent'] ?? o['userAgent'] ?? o['ua'];
        if (typeof ua === 'string') p.userAgent = ua;
        return p;
      }
    } catch { /* not JSON: unknown below */ }
  }
  return { format: 'unknown', text: line };
}

/** A per-line signal; aggregated into detections by `hunt` (e.g. failed logins counted per IP). */
export interface LineSignal {
  kind: DetectionKind;
  /** Aggregation key within a file (source IP, user, tool). */
  key: string;
  severity: Severity;
  detail: string;
  ip?: string;
  user?: string;
  /** A successful login (closes a brute-force series as compromised). */
  success?: boolean;
}

const SERVICE_ACCOUNTS = new Set(['www-data', 'nginx', 'apache', 'httpd', 'nobody', 'daemon', 'postgres', 'mysql', 'redis', 'tomcat', 'jenkins', 'node', 'git', 'ftp', 'mail', 'sshd']);
const SCANNERS = ['sqlmap', 'nikto', 'nmap', 'masscan', 'zgrab', 'wpscan', 'dirbuster', 'gobuster', 'nuclei', 'acunetix', 'w3af', 'openvas', 'nessus', 'zmeu', 'fimap', 'havij'];
const SCANNER_RE = new RegExp(`\\b(${SCANNERS.join('|')})\\b`, 'i');
const WEB_SHELL_RES = [
  /\.(?:php\d?|jsp|jspx|aspx?|cgi)\?(?:[^\s"]*&)?(?:c|cmd|exec|command|e|shell)=/i,
  /[?&]cmd=/i,
  /\/(?:c99|r57|wso|b374k|shell|cmd|webshell)\.(?:php\d?|jsp|aspx?)\b/i,
];
const PS_RE = /\bpowershell(?:\.exe)?\b[^\n]*?\s[-/](?:e|ec|en|enc|enco|encod|encode|encoded|encodedc\w*)\s+([A-Za-z0-9+/=]{16,})/i;
const CURL_SH_RE = /\b(?:curl|wget)\b[^|;\n]*\|\s*(?:sudo\s+)?(?:\/\S*\/)?(?:ba|z|da|k)?sh\b/i;
const FAILED_RE = /\b(?:Failed (?:password|publickey) for (?:invalid user )?(\S+)|Invalid user (\S+)) from (\S+)/;
const ACCEPTED_RE = /\bAccepted (?:password|publickey|keyboard-interactive\/pam) for (\S+) from (\S+)/;
const SUDO_RE = /\bsudo(?:\[\d+\])?:\s+(\S+)\s*:\s*(?:(user NOT in sudoers|command not allowed|\d+ incorrect password attempts)\s*;\s*)?.*?COMMAND=(.*)$/;

export interface DetectOptions {
  /** Users allowed to sudo; when given, any other sudo user is unexpected. */
  sudoUsers?: readonly string[];
}

/** Decodes a PowerShell -EncodedCommand payload (base64 UTF-16LE); undefined if it is not text. */
export function decodePowerShell(b64: string): string | undefined {
  try {
    const t = Buffer.from(b64, 'base64').toString('utf16le');
    return /^[\x09\x0a\x0d\x20-\x7e]+$/.test(t) ? t : undefined;
  } catch { return undefined; }
}

/** The built-in detections on one parsed line. */
export function detectLine(p: ParsedLine, opts: DetectOptions = {}): LineSignal[] {
  const out: LineSignal[] = [];
  const text = p.text;
  if (text.includes('Failed ') || text.includes('Invalid user')) {
    const m = FAILED_RE.exec(text);
    if (m) out.push({ kind: 'ssh-brute-force', key: m[3]!, ip: m[3]!, user: m[1] ?? m[2]!, severity: 'high', detail: 'failed login' });
  }
  if (text.includes('Accepted ')) {
    const m = ACCEPTED_RE.exec(text);
    if (m) out.push({ kind: 'ssh-brute-force', key: m[2]!, ip: m[2]!, user: m[1]!, severity: 'critical', detail: 'accepted login', success: true });
  }
  if (text.includes('sudo')) {
    const m = SUDO_RE.exec(text);
    if (m) {
      const user = m[1]!;
      const refused = m[2];
      const unexpected = opts.sudoUsers ? !opts.sudoUsers.includes(user) : SERVICE_ACCOUNTS.has(user);
      if (refused || unexpected) {
        out.push({ kind: 'unexpected-sudo', key: user, user, severity: unexpected ? 'high' : 'medium', detail: `sudo by ${user}${refused ? ` (${refused})` : ''}: ${m[3]!.trim()}` });
      }
    }
  }
  const req = p.request ?? (p.format === 'access' ? undefined : text);
  if (req && WEB_SHELL_RES.some((r) => r.test(req))) {
    out.push({ kind: 'web-shell', key: p.clientIp ?? 'unknown', ...(p.clientIp ? { ip: p.clientIp } : {}), severity: 'critical', detail: `web shell-like request: ${req.slice(0, 160)}` });
  }
  if (/powershell/i.test(text)) {
    const m = PS_RE.exec(text);
    if (m) {
      const decoded = decodePowerShell(m[1]!);
      out.push({ kind: 'encoded-powershell', key: m[1]!.slice(0, 24), severity: 'high', detail: decoded ? `encoded PowerShell decodes to: ${decoded.slice(0, 160)}` : 'encoded PowerShell command' });
    }
  }
  if (/curl|wget/i.test(text) && CURL_SH_RE.test(text)) {
    out.push({ kind: 'curl-pipe-shell', key: p.clientIp ?? 'line', ...(p.clientIp ? { ip: p.clientIp } : {}), severity: 'high', detail: 'download piped into a shell' });
  }
  const uaText = p.userAgent ?? (p.format === 'access' ? '' : text);
  const sc = SCANNER_RE.exec(uaText);
  if (sc) {
    const tool = sc[1]!.toLowerCase();
    out.push({ kind: 'scanner-user-agent', key: `${p.clientIp ?? 'unknown'}|${tool}`, ...(p.clientIp ? { ip: p.clientIp } : {}), severity: 'medium', detail: `scanner user agent ${tool}` });
  }
  return out;
}
