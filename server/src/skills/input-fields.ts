/**
 * Field shapes shared by the skills' input schemas (`Skill.inputSchema`). They check types only and
 * stay lenient where a value may arrive as text: the GET form of a direct action takes its input from
 * the query string, so numbers, booleans and objects may come as strings. What a value means (a file
 * that exists, a duration that parses, a command that runs) is still the skill's to judge, with the
 * file and line when there is one.
 */
import { z } from 'zod';

/** A workspace-relative file or folder, or a list of them. */
export const pathsField = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** A number, or its text (`"0.7"`, `"70"`). */
export const numberField = z.union([z.number(), z.string().regex(/^\s*-?\d+(\.\d+)?\s*%?\s*$/, 'expected a number')]);

/** A whole number, or its text. */
export const integerField = z.union([z.number().int(), z.string().regex(/^\s*\d+\s*$/, 'expected a whole number')]);

/** true/false, or their text. */
export const booleanField = z.union([z.boolean(), z.enum(['true', 'false'])]);

/** A number of points or a duration (`30`, `12h`, `30d`, `2w`). */
export const spanField = z.union([z.number().positive(), z.string().min(1)]);

/** An object or a list given inline, its JSON text, or a workspace file holding it. */
export const inlineOrFile = z.union([z.looseObject({}), z.array(z.unknown()), z.string().min(1)]);

/** A command line (run without a shell when given as argv). */
export const commandField = z.union([z.string().min(1), z.array(z.string()).min(1)]);

/** A time: ISO 8601 text or epoch milliseconds. */
export const timeField = z.union([z.string().min(1), z.number()]);
