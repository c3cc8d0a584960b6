import { strict as assert } from 'node:assert';
import { literal, literalList, parseHcl } from '../../../../server/src/skills/security/hcl';
import { scanTerraform } from '../../../../server/src/skills/security/terraform';

const TF = `# comment
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.0" }
  }
}

/* a block comment with "quotes" and { braces } */
resource "aws_iam_policy" "p" {
  policy = <<EOF
{ "Statement": [ { "Effect": "Allow", "Action": "*" } ] }
EOF
  tags = merge(var.tags, { Name = "p-\${var.env}" })
}

resource "aws_s3_bucket_policy" "b" {
  bucket = aws_s3_bucket.site.id
  policy = jsonencode({
    Statement = [{ Effect = "Allow", Principal = "*", Action = ["s3:GetObject"] }]
  })
}

resource "aws_s3_bucket" "site" {
  bucket = "site-\${var.env}" // interpolated
  acl    = var.public ? "public-read" : "private"
}

resource "aws_s3_bucket_acl" "site" {
  bucket = aws_s3_bucket.site.id
  acl    = "public-read-write"
}
`;

describe('HCL reader', () => {
  it('reads blocks, attributes, literals, lists, objects, heredocs and comments, and goes on after them', () => {
    const blocks = parseHcl(TF);
    assert.deepEqual(blocks.map((b) => `${b.type} ${b.labels.join(' ')}`), ['terraform ', 'resource aws_iam_policy p', 'resource aws_s3_bucket_policy b', 'resource aws_s3_bucket site', 'resource aws_s3_bucket_acl site']);
    const policy = blocks[1]!.attrs.get('policy')!;
    assert.match(literal(policy.value)!, /"Action": "\*"/);
    const site = blocks[3]!;
    assert.equal(site.attrs.get('acl')!.value.kind, 'expr', 'a conditional is an expression, not its first literal');
    assert.equal(literal(site.attrs.get('bucket')!.value), 'site-${var.env}');
    assert.equal(blocks[4]!.attrs.get('acl')!.line, 30);
    assert.deepEqual(literalList({ kind: 'list', items: [{ kind: 'string', value: 'a' }, { kind: 'expr', text: 'var.b' }] }), ['a']);
  });

  it('judges literal settings only, at the attribute\'s line', () => {
    const f = scanTerraform([{ file: 'main.tf', text: TF }]);
    const acl = f.filter((x) => x.ruleId === 'tf/s3-public-acl');
    assert.deepEqual(acl.map((x) => x.range.startLine), [30], 'the conditional acl is not guessed; the literal one is found');
    assert.deepEqual(f.filter((x) => x.ruleId === 'tf/s3-unencrypted').map((x) => x.range.startLine), [23]);
  });

  it('survives an unbalanced file', () => {
    const text = 'resource "aws_s3_bucket" "x" {\n  acl = "public-read"\n  tags = {\n';
    assert.doesNotThrow(() => parseHcl(text));
    assert.equal(scanTerraform([{ file: 'x.tf', text }]).filter((f) => f.ruleId === 'tf/s3-public-acl').length, 1);
  });
});
