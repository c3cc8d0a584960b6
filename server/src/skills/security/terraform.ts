/**
 * Terraform checks (AWS, Google Cloud, Azure basics): public buckets, ingress open to the internet on
 * SSH, RDP or every port, unencrypted volumes, databases and buckets. The `.tf` files of the workspace
 * are read together, so a bucket whose encryption or public-access block is a separate resource
 * (AWS provider v4+) is judged with it. Literal settings only: a value computed from variables is not
 * guessed at (nothing is reported for it).
 */
import { fingerprint, normalizeLine, sortFindings, toWorkspacePath, type Finding, type Range, type RuleInfo, type Severity } from '../findings/finding';
import { parseHcl, literal, literalList, type HclAttr, type HclBlock, type HclValue } from './hcl';
import { iacRule } from './iac-common';

export const TERRAFORM_RULES: readonly RuleInfo[] = [
  iacRule('tf/s3-public-acl', 'high', 'terraform', 'S3 bucket ACL grants public (or any AWS user) read or write'),
  iacRule('tf/s3-public-access-block-off', 'high', 'terraform', 'S3 public access block leaves a protection off (block_public_acls, block_public_policy, ignore_public_acls, restrict_public_buckets)'),
  iacRule('tf/s3-unencrypted', 'low', 'terraform', 'S3 bucket without a server-side encryption configuration (KMS key) in the configuration'),
  iacRule('tf/open-ingress', 'critical', 'terraform', 'Ingress from 0.0.0.0/0 or ::/0 on SSH (22), RDP (3389) or every port'),
  iacRule('tf/ebs-unencrypted', 'medium', 'terraform', 'EBS volume (or an instance\'s block device) not encrypted'),
  iacRule('tf/rds-unencrypted', 'high', 'terraform', 'RDS instance or cluster storage not encrypted (storage_encrypted is not true)'),
  iacRule('tf/rds-public', 'high', 'terraform', 'RDS instance reachable from the internet (publicly_accessible = true)'),
  iacRule('tf/gcs-public', 'high', 'terraform', 'Google Cloud Storage bucket readable by allUsers or allAuthenticatedUsers'),
  iacRule('tf/azure-storage-public', 'high', 'terraform', 'Azure storage account or container allows anonymous public access'),
];

const RULE_SEVERITY = new Map<string, Severity>(TERRAFORM_RULES.map((r) => [r.id, r.severity]));

export function isTerraformFile(file: string): boolean {
  return /\.tf$/i.test(file);
}

interface Resource { type: string; name: string; block: HclBlock; file: string; lines: string[] }

const PUBLIC_ACLS = new Set(['public-read', 'public-read-write', 'authenticated-read']);
const WORLD = new Set(['0.0.0.0/0', '::/0']);
const AZURE_WORLD = new Set(['*', '0.0.0.0/0', '::/0', 'internet', 'any']);
const PUBLIC_MEMBERS = new Set(['allUsers', 'allAuthenticatedUsers']);
const SENSITIVE_PORTS: Array<[number, string]> = [[22, 'SSH'], [3389, 'RDP']];

function num(v: HclValue | undefined): number | undefined {
  const l = literal(v);
  return l !== undefined && /^-?[0-9]+$/.test(l) ? Number(l) : undefined;
}

function isTrue(a: HclAttr | undefined): boolean {
  return literal(a?.value) === 'true';
}

/** What a port range opens: a sensitive port's name, 'every port', or undefined. */
function exposure(from: number | undefined, to: number | undefined, protocol: string | undefined): string | undefined {
  const p = (protocol ?? 'tcp').toLowerCase();
  if (p === '-1' || p === 'all') return 'every port and protocol';
  if (from === undefined || to === undefined) return undefined;
  if ((from <= 0 && to >= 65535) || (from === 0 && to === 0 && p !== 'icmp')) return 'every port';
  for (const [port, name] of SENSITIVE_PORTS) if (from <= port && port <= to) return `${name} (${port})`;
  return undefined;
}

/** Ports of an Azure rule: '*', '22', '20-25', or a list. */
function azurePortExposure(ranges: string[]): string | undefined {
  for (const r of ranges) {
    if (r === '*') return 'every port';
    const m = /^([0-9]+)(?:-([0-9]+))?$/.exec(r.trim());
    if (!m) continue;
    const e = exposure(Number(m[1]), Number(m[2] ?? m[1]), 'tcp');
    if (e) return e;
  }
  return undefined;
}

/** Terraform checks over the given files' texts (workspace-relative names). */
export function scanTerraform(files: ReadonlyArray<{ file: string; text: string }>): Finding[] {
  const resources: Resource[] = [];
  for (const { file, text } of files) {
    const lines = text.split(/\r?\n/);
    for (const b of parseHcl(text)) {
      if (b.type === 'resource' && b.labels.length >= 2) resources.push({ type: b.labels[0]!, name: b.labels[1]!, block: b, file: toWorkspacePath(file), lines });
    }
  }
  const findings: Finding[] = [];
  const push = (res: Resource, ruleId: string, message: string, at: { line: number; column: number; endLine?: number; endColumn?: number }, identity: string) => {
    const text = res.lines[at.line - 1] ?? '';
    const range: Range = { startLine: at.line, startColumn: at.column, endLine: at.endLine ?? at.line, endColumn: at.endColumn ?? text.length + 1 };
    findings.push({
      ruleId, severity: RULE_SEVERITY.get(ruleId) ?? 'medium', message, file: res.file, range, snippet: normalizeLine(text).slice(0, 200),
      fingerprint: fingerprint(ruleId, res.file, `${res.type}.${res.name}`, identity),
    });
  };
  const addr = (r: Resource) => `${r.type}.${r.name}`;
  /** Other resources of `type` whose `attr` expression names this resource. */
  const referencing = (r: Resource, type: string, attr = 'bucket') => resources.some((o) => o.type === type && (() => {
    const v = o.block.attrs.get(attr)?.value;
    const t = v?.kind === 'expr' ? v.text : literal(v) ?? '';
    return t.includes(`${addr(r)}.`) || t === literal(r.block.attrs.get('bucket')?.value);
  })());

  for (const r of resources) {
    const attrs = r.block.attrs;
    const where = `${addr(r)}`;
    switch (r.type) {
      case 'aws_s3_bucket': {
        const acl = attrs.get('acl');
        if (acl && PUBLIC_ACLS.has(literal(acl.value) ?? '')) push(r, 'tf/s3-public-acl', `${where} has acl = "${literal(acl.value)}": its objects are readable${literal(acl.value) === 'public-read-write' ? ' and writable' : ''} by anyone; use "private" and grant access through a policy`, acl, 'acl');
        const inline = r.block.blocks.some((b) => b.type === 'server_side_encryption_configuration');
        if (!inline && !referencing(r, 'aws_s3_bucket_server_side_encryption_configuration')) {
          push(r, 'tf/s3-unencrypted', `${where} has no server-side encryption configuration (inline or aws_s3_bucket_server_side_encryption_configuration); declare SSE with a KMS key you control`, r.block, 'sse');
        }
        break;
      }
      case 'aws_s3_bucket_acl': {
        const acl = attrs.get('acl');
        if (acl && PUBLIC_ACLS.has(literal(acl.value) ?? '')) push(r, 'tf/s3-public-acl', `${where} sets acl = "${literal(acl.value)}"; use "private"`, acl, 'acl');
        break;
      }
      case 'aws_s3_bucket_public_access_block':
      case 'aws_s3_account_public_access_block': {
        const off = ['block_public_acls', 'block_public_policy', 'ignore_public_acls', 'restrict_public_buckets'].filter((k) => !isTrue(attrs.get(k)));
        if (off.length) {
          const at = off.map((k) => attrs.get(k)).find((a) => a) ?? r.block;
          push(r, 'tf/s3-public-access-block-off', `${where} leaves ${off.join(', ')} off (false or unset, which means false); set all four to true`, at, 'pab');
        }
        break;
      }
      case 'aws_security_group': {
        r.block.blocks.filter((b) => b.type === 'ingress').forEach((b, i) => {
          const cidrs = [...literalList(b.attrs.get('cidr_blocks')?.value), ...literalList(b.attrs.get('ipv6_cidr_blocks')?.value)];
          if (!cidrs.some((c) => WORLD.has(c))) return;
          const e = exposure(num(b.attrs.get('from_port')?.value), num(b.attrs.get('to_port')?.value), literal(b.attrs.get('protocol')?.value));
          if (e) push(r, 'tf/open-ingress', `${where} ingress ${i + 1} opens ${e} to the whole internet (${cidrs.filter((c) => WORLD.has(c)).join(', ')}); restrict the source range or use a bastion / SSM`, b.attrs.get('cidr_blocks') ?? b, `ingress${i}`);
        });
        break;
      }
      case 'aws_security_group_rule': {
        if (literal(attrs.get('type')?.value) !== 'ingress') break;
        const cidrs = [...literalList(attrs.get('cidr_blocks')?.value), ...literalList(attrs.get('ipv6_cidr_blocks')?.value)];
        if (!cidrs.some((c) => WORLD.has(c))) break;
        const e = exposure(num(attrs.get('from_port')?.value), num(attrs.get('to_port')?.value), literal(attrs.get('protocol')?.value));
        if (e) push(r, 'tf/open-ingress', `${where} opens ${e} to the whole internet; restrict cidr_blocks`, attrs.get('cidr_blocks') ?? r.block, 'rule');
        break;
      }
      case 'aws_vpc_security_group_ingress_rule': {
        const cidr = literal(attrs.get('cidr_ipv4')?.value) ?? literal(attrs.get('cidr_ipv6')?.value);
        if (!cidr || !WORLD.has(cidr)) break;
        const e = exposure(num(attrs.get('from_port')?.value), num(attrs.get('to_port')?.value), literal(attrs.get('ip_protocol')?.value));
        if (e) push(r, 'tf/open-ingress', `${where} opens ${e} to ${cidr}; restrict the source range`, attrs.get('cidr_ipv4') ?? attrs.get('cidr_ipv6') ?? r.block, 'rule');
        break;
      }
      case 'google_compute_firewall': {
        if ((literal(attrs.get('direction')?.value) ?? 'INGRESS').toUpperCase() !== 'INGRESS') break;
        const ranges = literalList(attrs.get('source_ranges')?.value);
        if (!ranges.some((c) => WORLD.has(c))) break;
        for (const allow of r.block.blocks.filter((b) => b.type === 'allow')) {
          const protocol = literal(allow.attrs.get('protocol')?.value) ?? 'all';
          const ports = literalList(allow.attrs.get('ports')?.value);
          const e = protocol === 'all' ? 'every port and protocol' : ports.length === 0 && protocol !== 'icmp' ? `every ${protocol} port` : azurePortExposure(ports);
          if (e) { push(r, 'tf/open-ingress', `${where} allows ${e} from ${ranges.filter((c) => WORLD.has(c)).join(', ')}; restrict source_ranges (IAP range 35.235.240.0/20 for SSH)`, attrs.get('source_ranges') ?? r.block, 'allow'); break; }
        }
        break;
      }
      case 'azurerm_network_security_rule':
      case 'azurerm_network_security_group': {
        const rules = r.type === 'azurerm_network_security_rule' ? [{ attrs, at: r.block as HclBlock }] : r.block.blocks.filter((b) => b.type === 'security_rule').map((b) => ({ attrs: b.attrs, at: b }));
        rules.forEach((rule, i) => {
          const a = rule.attrs;
          if ((literal(a.get('direction')?.value) ?? '').toLowerCase() !== 'inbound' || (literal(a.get('access')?.value) ?? '').toLowerCase() !== 'allow') return;
          const sources = [...literalList(a.get('source_address_prefix')?.value), ...literalList(a.get('source_address_prefixes')?.value)];
          if (!sources.some((s) => AZURE_WORLD.has(s.toLowerCase()))) return;
          const e = azurePortExposure([...literalList(a.get('destination_port_range')?.value), ...literalList(a.get('destination_port_ranges')?.value)]);
          if (e) push(r, 'tf/open-ingress', `${where} rule ${literal(a.get('name')?.value) ?? i + 1} allows ${e} inbound from ${sources.join(', ')}; restrict the source`, a.get('source_address_prefix') ?? rule.at, `rule${i}`);
        });
        break;
      }
      case 'aws_ebs_volume': {
        const enc = attrs.get('encrypted');
        if (!isTrue(enc)) push(r, 'tf/ebs-unencrypted', `${where} is not encrypted (encrypted = true, with kms_key_id for a key you control)`, enc ?? r.block, 'encrypted');
        break;
      }
      case 'aws_instance':
      case 'aws_launch_template': {
        for (const b of r.block.blocks) {
          const devices = b.type === 'block_device_mappings' ? b.blocks.filter((x) => x.type === 'ebs') : ['root_block_device', 'ebs_block_device'].includes(b.type) ? [b] : [];
          for (const d of devices) {
            const enc = d.attrs.get('encrypted');
            if (enc && literal(enc.value) === 'false') push(r, 'tf/ebs-unencrypted', `${where} ${b.type} sets encrypted = false`, enc, `${b.type}`);
          }
        }
        break;
      }
      case 'aws_db_instance':
      case 'aws_rds_cluster': {
        const enc = attrs.get('storage_encrypted');
        if (!isTrue(enc)) push(r, 'tf/rds-unencrypted', `${where} does not set storage_encrypted = true; its data, backups and snapshots are stored unencrypted`, enc ?? r.block, 'storage_encrypted');
        const pub = attrs.get('publicly_accessible');
        if (isTrue(pub)) push(r, 'tf/rds-public', `${where} sets publicly_accessible = true; keep databases in private subnets`, pub!, 'public');
        break;
      }
      case 'google_storage_bucket_iam_member':
      case 'google_storage_bucket_iam_binding': {
        const members = [...literalList(attrs.get('member')?.value), ...literalList(attrs.get('members')?.value)];
        const pub = members.filter((m) => PUBLIC_MEMBERS.has(m));
        if (pub.length) push(r, 'tf/gcs-public', `${where} grants ${literal(attrs.get('role')?.value) ?? 'a role'} to ${pub.join(', ')}: the bucket is public`, attrs.get('member') ?? attrs.get('members') ?? r.block, 'member');
        break;
      }
      case 'google_storage_bucket_acl':
      case 'google_storage_default_object_acl':
      case 'google_storage_object_acl': {
        const entities = literalList(attrs.get('role_entity')?.value).filter((e) => /:(allUsers|allAuthenticatedUsers)$/.test(e));
        const predefined = literal(attrs.get('predefined_acl')?.value);
        if (entities.length || predefined === 'publicRead' || predefined === 'publicReadWrite') {
          push(r, 'tf/gcs-public', `${where} makes objects public (${entities.join(', ') || predefined}); use uniform bucket-level access without allUsers`, attrs.get('role_entity') ?? attrs.get('predefined_acl') ?? r.block, 'acl');
        }
        break;
      }
      case 'azurerm_storage_account': {
        const a = attrs.get('allow_nested_items_to_be_public') ?? attrs.get('allow_blob_public_access');
        if (isTrue(a)) push(r, 'tf/azure-storage-public', `${where} sets ${a!.name} = true: containers can be made anonymously readable; set it to false`, a!, 'nested');
        break;
      }
      case 'azurerm_storage_container': {
        const t = attrs.get('container_access_type');
        const v = literal(t?.value);
        if (v === 'blob' || v === 'container') push(r, 'tf/azure-storage-public', `${where} has container_access_type = "${v}": anyone can read its blobs${v === 'container' ? ' and list them' : ''}; use "private"`, t!, 'access');
        break;
      }
      default:
        break;
    }
  }
  return sortFindings(findings);
}
