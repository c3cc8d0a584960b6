/**
 * Node guards by SyntaxKind. The bundles load TypeScript lazily (esbuild.mjs): every function of the
 * `ts` stand-in is a getter that goes through the loader, and `ts.isIdentifier(n)` on each node of a
 * walk costs as much as the walk. These compare `node.kind` with the enum, which is plain data.
 */
import * as ts from 'typescript';

const K = ts.SyntaxKind;

export const isArrayLiteralExpression = (n: ts.Node): n is ts.ArrayLiteralExpression => n.kind === K.ArrayLiteralExpression;
export const isArrowFunction = (n: ts.Node): n is ts.ArrowFunction => n.kind === K.ArrowFunction;
export const isAsExpression = (n: ts.Node): n is ts.AsExpression => n.kind === K.AsExpression;
export const isAwaitExpression = (n: ts.Node): n is ts.AwaitExpression => n.kind === K.AwaitExpression;
export const isBinaryExpression = (n: ts.Node): n is ts.BinaryExpression => n.kind === K.BinaryExpression;
export const isBlock = (n: ts.Node): n is ts.Block => n.kind === K.Block;
export const isBreakStatement = (n: ts.Node): n is ts.BreakStatement => n.kind === K.BreakStatement;
export const isCallExpression = (n: ts.Node): n is ts.CallExpression => n.kind === K.CallExpression;
export const isConditionalExpression = (n: ts.Node): n is ts.ConditionalExpression => n.kind === K.ConditionalExpression;
export const isConstructorDeclaration = (n: ts.Node): n is ts.ConstructorDeclaration => n.kind === K.Constructor;
export const isContinueStatement = (n: ts.Node): n is ts.ContinueStatement => n.kind === K.ContinueStatement;
export const isElementAccessExpression = (n: ts.Node): n is ts.ElementAccessExpression => n.kind === K.ElementAccessExpression;
export const isExpressionStatement = (n: ts.Node): n is ts.ExpressionStatement => n.kind === K.ExpressionStatement;
export const isForInStatement = (n: ts.Node): n is ts.ForInStatement => n.kind === K.ForInStatement;
export const isFunctionDeclaration = (n: ts.Node): n is ts.FunctionDeclaration => n.kind === K.FunctionDeclaration;
export const isFunctionExpression = (n: ts.Node): n is ts.FunctionExpression => n.kind === K.FunctionExpression;
const FUNCTION_LIKE: ReadonlySet<ts.SyntaxKind> = new Set([K.FunctionDeclaration, K.FunctionExpression, K.ArrowFunction, K.MethodDeclaration, K.Constructor, K.GetAccessor, K.SetAccessor, K.MethodSignature, K.CallSignature, K.ConstructSignature, K.IndexSignature, K.FunctionType, K.ConstructorType]);
export const isFunctionLike = (n: ts.Node | undefined): n is ts.SignatureDeclaration => !!n && FUNCTION_LIKE.has(n.kind);
export const isGetAccessorDeclaration = (n: ts.Node): n is ts.GetAccessorDeclaration => n.kind === K.GetAccessor;
export const isIdentifier = (n: ts.Node): n is ts.Identifier => n.kind === K.Identifier;
export const isJsxExpression = (n: ts.Node): n is ts.JsxExpression => n.kind === K.JsxExpression;
export const isMethodDeclaration = (n: ts.Node): n is ts.MethodDeclaration => n.kind === K.MethodDeclaration;
export const isNamedImports = (n: ts.Node): n is ts.NamedImports => n.kind === K.NamedImports;
export const isNamespaceImport = (n: ts.Node): n is ts.NamespaceImport => n.kind === K.NamespaceImport;
export const isNewExpression = (n: ts.Node): n is ts.NewExpression => n.kind === K.NewExpression;
export const isNoSubstitutionTemplateLiteral = (n: ts.Node): n is ts.NoSubstitutionTemplateLiteral => n.kind === K.NoSubstitutionTemplateLiteral;
export const isNonNullExpression = (n: ts.Node): n is ts.NonNullExpression => n.kind === K.NonNullExpression;
export const isNumericLiteral = (n: ts.Node): n is ts.NumericLiteral => n.kind === K.NumericLiteral;
export const isObjectBindingPattern = (n: ts.Node): n is ts.ObjectBindingPattern => n.kind === K.ObjectBindingPattern;
export const isObjectLiteralExpression = (n: ts.Node): n is ts.ObjectLiteralExpression => n.kind === K.ObjectLiteralExpression;
export const isOmittedExpression = (n: ts.Node): n is ts.OmittedExpression => n.kind === K.OmittedExpression;
export const isParenthesizedExpression = (n: ts.Node): n is ts.ParenthesizedExpression => n.kind === K.ParenthesizedExpression;
export const isPropertyAccessExpression = (n: ts.Node): n is ts.PropertyAccessExpression => n.kind === K.PropertyAccessExpression;
export const isPropertyAssignment = (n: ts.Node): n is ts.PropertyAssignment => n.kind === K.PropertyAssignment;
export const isReturnStatement = (n: ts.Node): n is ts.ReturnStatement => n.kind === K.ReturnStatement;
export const isSatisfiesExpression = (n: ts.Node): n is ts.SatisfiesExpression => n.kind === K.SatisfiesExpression;
export const isSetAccessorDeclaration = (n: ts.Node): n is ts.SetAccessorDeclaration => n.kind === K.SetAccessor;
export const isShorthandPropertyAssignment = (n: ts.Node): n is ts.ShorthandPropertyAssignment => n.kind === K.ShorthandPropertyAssignment;
export const isSourceFile = (n: ts.Node): n is ts.SourceFile => n.kind === K.SourceFile;
export const isSpreadAssignment = (n: ts.Node): n is ts.SpreadAssignment => n.kind === K.SpreadAssignment;
export const isSpreadElement = (n: ts.Node): n is ts.SpreadElement => n.kind === K.SpreadElement;
export const isStringLiteral = (n: ts.Node): n is ts.StringLiteral => n.kind === K.StringLiteral;
export const isTaggedTemplateExpression = (n: ts.Node): n is ts.TaggedTemplateExpression => n.kind === K.TaggedTemplateExpression;
export const isTemplateExpression = (n: ts.Node): n is ts.TemplateExpression => n.kind === K.TemplateExpression;
export const isThrowStatement = (n: ts.Node): n is ts.ThrowStatement => n.kind === K.ThrowStatement;
export const isTypeAssertionExpression = (n: ts.Node): n is ts.TypeAssertion => n.kind === K.TypeAssertionExpression;
export const isVariableDeclaration = (n: ts.Node): n is ts.VariableDeclaration => n.kind === K.VariableDeclaration;
export const isVariableDeclarationList = (n: ts.Node): n is ts.VariableDeclarationList => n.kind === K.VariableDeclarationList;
export const isVariableStatement = (n: ts.Node): n is ts.VariableStatement => n.kind === K.VariableStatement;
