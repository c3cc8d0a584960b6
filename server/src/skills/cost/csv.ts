/**
 * An RFC 4180 CSV reader, small on purpose (no dependency; see docs/decisions.md "cost-ai and
 * billing-ai"): fields separated by commas, records by CRLF or LF; a field in double quotes may hold
 * commas, line breaks and doubled quotes (`""`). Every record carries the line its first character is
 * on, so a bad row is named by file and line even when an earlier field spanned lines.
 *
 * Strict where a billing export can only be broken: a quote inside an unquoted field, text after a
 * closing quote, or a quote never closed is an error naming the line; a blank line is skipped.
 * A UTF-8 byte-order mark at the start is dropped (exports written by spreadsheets carry one).
 */

export interface CsvRecord {
  /** 1-based line of the record's first character. */
  line: number;
  fields: string[];
}

export class CsvError extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

export function parseCsv(text: string): CsvRecord[] {
  const out: CsvRecord[] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    // One record: fields until an unquoted line break or the end.
    for (;;) {
      let value = '';
      if (text[i] === '"') {
        const open = line;
        i++;
        for (;;) {
          if (i >= n) throw new CsvError(open, 'a quoted field is never closed');
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') { value += '"'; i += 2; continue; }
            i++;
            break;
          }
          if (c === '\n') line++;
          value += c;
          i++;
        }
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') throw new CsvError(line, 'text after a closing quote (a quote inside a field must be doubled)');
      } else {
        let j = i;
        while (j < n) {
          const c = text[j]!;
          if (c === ',' || c === '\n' || c === '\r') break;
          if (c === '"') throw new CsvError(line, 'a quote inside an unquoted field (quote the field and double the quote)');
          j++;
        }
        value = text.slice(i, j);
        i = j;
      }
      fields.push(value);
      if (text[i] === ',') { i++; continue; }
      break;
    }
    // The record's line break: CRLF, LF or a lone CR.
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    line++;
    if (!(fields.length === 1 && fields[0] === '')) out.push({ line: start, fields });
  }
  return out;
}
