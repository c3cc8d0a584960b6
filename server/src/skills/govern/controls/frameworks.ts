/**
 * The control checklists of SOC2, HIPAA and PCI-DSS as data: one table per framework, each control
 * with its id as the framework names it, its title, what evidence counts, and either the probes that
 * check it in a repository (probes.ts: how) or why a repository cannot show it (an organisational
 * control: policies, training, contracts, physical security).
 *
 * The selection is the part of each framework a code repository can speak to plus the organisational
 * controls a reader expects to see named; it is not the full text of the framework (SOC2 Trust Services
 * Criteria 2017 rev. 2022, HIPAA Security Rule 45 CFR 164.308-316, PCI DSS v4.0).
 */
import { PROBES } from './probes';

export const FRAMEWORKS = ['soc2', 'hipaa', 'pci-dss'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export const FRAMEWORK_NAMES: Readonly<Record<Framework, string>> = {
  soc2: 'SOC 2 (Trust Services Criteria)',
  hipaa: 'HIPAA Security Rule (45 CFR Part 164)',
  'pci-dss': 'PCI DSS v4.0',
};

export interface ControlDef {
  id: string;
  title: string;
  /** What evidence counts for this control. */
  evidence: string;
  /** Probe ids (probes.ts); empty with `organisational`. */
  probes: readonly string[];
  /** Why a repository cannot evidence it (organisational control). */
  organisational?: string;
}

const ORG = 'organisational control, not visible in a repository';
const org = (id: string, title: string, evidence: string): ControlDef => ({ id, title, evidence, probes: [], organisational: `${ORG} (${evidence})` });
const repo = (id: string, title: string, evidence: string, ...probes: string[]): ControlDef => ({ id, title, evidence, probes });

export const CONTROLS: Readonly<Record<Framework, readonly ControlDef[]>> = {
  soc2: [
    org('CC1.1', 'The entity demonstrates a commitment to integrity and ethical values', 'code of conduct, HR policies, acknowledgements'),
    org('CC2.2', 'The entity internally communicates information, including objectives and responsibilities for internal control', 'policies communicated to staff, training records'),
    org('CC3.2', 'The entity identifies and analyzes risk to the achievement of its objectives', 'a risk assessment and its register'),
    repo('CC6.1', 'Logical access security software, infrastructure and architectures protect information assets', 'access control in code or configuration; no credential committed', 'access-control', 'secrets'),
    org('CC6.2', 'Users are registered and authorized before system credentials are issued', 'access requests and approvals in the identity provider'),
    repo('CC6.6', 'Logical access security measures protect against threats from sources outside system boundaries', 'TLS enforced on inbound connections, TLS verification never off', 'encryption-in-transit'),
    repo('CC6.7', 'The transmission, movement and removal of information is restricted and protected', 'encryption in transit and at rest', 'encryption-in-transit', 'encryption-at-rest'),
    repo('CC6.8', 'Controls prevent or detect and act upon the introduction of unauthorized or malicious software', 'security scanning in CI, dependency updates, lock files', 'vulnerability-management'),
    repo('CC7.1', 'Detection and monitoring procedures identify changes that introduce vulnerabilities', 'dependency updates and security scanning in CI', 'vulnerability-management'),
    repo('CC7.2', 'The entity monitors system components for anomalies indicative of malicious acts', 'audit logging in code or configuration; a verified audit trail', 'audit-logging', 'audit-integrity'),
    repo('CC7.3', 'The entity evaluates security events to determine whether they could be incidents', 'a security policy and an incident response procedure', 'incident-response'),
    repo('CC7.4', 'The entity responds to identified security incidents by executing a defined incident response program', 'an incident response procedure (runbook)', 'incident-response'),
    repo('CC8.1', 'The entity authorizes, designs, develops, tests, approves and implements changes', 'CI running tests, required review (CODEOWNERS, branch protection), approvals decided by a person in the audit trail', 'change-management', 'approved-changes'),
    org('CC9.2', 'The entity assesses and manages risks associated with vendors and business partners', 'vendor reviews and contracts'),
    repo('A1.2', 'Environmental protections, software, data backup processes and recovery infrastructure are implemented', 'backups configured with retention', 'backups'),
  ],
  hipaa: [
    org('164.308(a)(1)(ii)(A)', 'Risk analysis', 'a documented risk analysis of ePHI'),
    org('164.308(a)(5)', 'Security awareness and training', 'training records of the workforce'),
    repo('164.308(a)(6)', 'Security incident procedures', 'a security policy and an incident response procedure', 'incident-response'),
    repo('164.308(a)(7)(ii)(A)', 'Contingency plan: data backup plan', 'backups configured with retention', 'backups'),
    org('164.308(b)(1)', 'Business associate contracts', 'signed business associate agreements'),
    org('164.310(a)(1)', 'Facility access controls', 'physical access records of the facilities'),
    repo('164.312(a)(1)', 'Access control', 'access control in code or configuration; no credential committed', 'access-control', 'secrets'),
    repo('164.312(a)(2)(iv)', 'Encryption and decryption (addressable)', 'storage declared encrypted', 'encryption-at-rest'),
    repo('164.312(b)', 'Audit controls', 'audit logging in code or configuration; a verified audit trail', 'audit-logging', 'audit-integrity'),
    repo('164.312(c)(1)', 'Integrity', 'changes reviewed and tested before they reach ePHI systems', 'change-management'),
    repo('164.312(d)', 'Person or entity authentication', 'an authentication library and multi-factor authentication', 'authentication'),
    repo('164.312(e)(1)', 'Transmission security', 'TLS enforced, TLS verification never off', 'encryption-in-transit'),
  ],
  'pci-dss': [
    org('1.2', 'Network security controls are configured and maintained', 'firewall and network rule reviews'),
    repo('3.5', 'Primary account number (PAN) is secured wherever it is stored', 'storage declared encrypted; no key or credential committed', 'encryption-at-rest', 'secrets'),
    repo('4.2', 'PAN is protected with strong cryptography during transmission', 'TLS enforced, TLS verification never off', 'encryption-in-transit'),
    repo('6.2', 'Bespoke and custom software is developed securely', 'required review, tests and a security scanner in CI', 'secure-development'),
    repo('6.3.3', 'All system components are protected from known vulnerabilities by installing applicable security patches', 'Dependabot or Renovate, lock files', 'patching'),
    repo('6.4', 'Public-facing web applications are protected against attacks', 'TLS enforced and a security scanner in CI', 'encryption-in-transit', 'security-scanning'),
    repo('6.5.1', 'Changes to all system components are managed', 'CI running tests, required review, approvals decided by a person', 'change-management', 'approved-changes'),
    repo('7.2', 'Access to system components and data is appropriately defined and assigned', 'access control in code or configuration', 'access-control'),
    repo('8.3', 'Strong authentication for users and administrators is established and managed', 'an authentication library and multi-factor authentication', 'authentication'),
    repo('10.2', 'Audit logs are implemented to support the detection of anomalies and suspicious activity', 'audit logging in code or configuration', 'audit-logging'),
    repo('10.3', 'Audit logs are protected from destruction and unauthorized modifications', 'a verified hash-chained audit trail', 'audit-integrity'),
    repo('11.3', 'External and internal vulnerabilities are regularly identified, prioritized and addressed', 'security scanning in CI and dependency updates', 'vulnerability-management'),
    org('12.1', 'A comprehensive information security policy is known and current', 'the approved information security policy'),
    repo('12.10', 'Suspected and confirmed security incidents are responded to immediately', 'a security policy and an incident response procedure', 'incident-response'),
  ],
};

/** Every probe named by a control exists (checked at load: a typo in the table fails loudly, not as "missing"). */
for (const [fw, list] of Object.entries(CONTROLS)) {
  for (const c of list) {
    for (const p of c.probes) if (!PROBES[p]) throw new Error(`compliance control ${fw} ${c.id} names an unknown probe ${p}`);
  }
}

/** `soc2`, `SOC 2`, `pci`, `PCI-DSS`, `pci_dss` → the framework id; undefined when unknown. */
export function frameworkOf(raw: string): Framework | undefined {
  const k = raw.trim().toLowerCase().replace(/[\s_]+/g, '-');
  if (k === 'soc2' || k === 'soc-2') return 'soc2';
  if (k === 'hipaa') return 'hipaa';
  if (k === 'pci-dss' || k === 'pci' || k === 'pcidss' || k === 'pci-dss-4' || k === 'pci-dss-4.0') return 'pci-dss';
  return undefined;
}
