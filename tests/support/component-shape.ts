/**
 * The `Outbox` component's shape as other languages see it, read with the TypeScript type checker from
 * `components/outbox.ts` and the args interface its constructor takes: the input names, the output names, and
 * every construct Pulumi's component schema analyzer rejects or silently mangles.
 *
 * The rules mirror `@pulumi/pulumi/provider/experimental/analyzer` (see `/work/shared/reference/component-package.md`),
 * stricter where the analyzer is silent:
 * - a union is allowed only as `T | undefined`, `boolean`, `Input<T>`, or a literal union declared as a TS `enum` or
 *   an as-const object (`string | null`, `"a" | "b"` and `string | number` are not);
 * - no function type, no method on an args interface (the analyzer drops methods without a word);
 * - no intersection, inline object type, tuple, literal type, `unknown`, `bigint` or other type the schema cannot say;
 * - every class property, private or protected included, becomes an output, so each must be `public readonly` and
 *   an `Output<T>`; exactly one constructor, whose parameter `args` is typed by an interface.
 * Types from installed packages (the AWS args `transform` takes) are walked too: the analyzer copies them into the
 * package's schema.
 *
 * @packageDocumentation
 */
import * as path from "node:path";
import * as ts from "typescript";

/** The component's inputs, outputs and the problems found, each `<where>: <what>`. */
export interface ComponentShape {
    /** The args interface's property names, in declaration order. */
    readonly inputs: string[];
    /** The class's output property names, in declaration order. */
    readonly outputs: string[];
    /** What the analyzer would reject or mangle; empty when the component is analyzer-clean. */
    readonly problems: string[];
}

/** Where to read the component from, and source texts to use instead of the files (for mutation checks). */
export interface ShapeOptions {
    /** The repository root. @default this repository */
    readonly root?: string;
    /** The file holding the component class, relative to `root`. @default "components/outbox.ts" */
    readonly componentFile?: string;
    /** The class name. @default "Outbox" */
    readonly className?: string;
    /** Source texts by absolute path, replacing the files' contents. @default {} */
    readonly overrides?: Readonly<Record<string, string>>;
    /** A previous program whose unchanged files are reused. @default undefined */
    readonly oldProgram?: ts.Program;
    /** Whether to walk interfaces declared in installed packages too (the AWS args). @default true */
    readonly walkInstalledTypes?: boolean;
}

/** What the walk covered: the named interfaces and classes it read, each once. */
export interface WalkedTypes {
    /** Their names, declared in this repository. */
    readonly own: string[];
    /** Their names, declared in installed packages. */
    readonly installed: string[];
}

const ROOT = path.resolve(__dirname, "..", "..");

function declaredIn(symbol: ts.Symbol | undefined, names: readonly string[], fileSuffixes: readonly string[]): boolean {
    if (symbol === undefined || !names.includes(symbol.getName())) return false;
    const file = symbol.declarations?.[0]?.getSourceFile().fileName ?? "";
    return fileSuffixes.some((s) => file.endsWith(s));
}

function isOutputType(type: ts.Type): boolean {
    if (type.isIntersection()) return type.types.some(isOutputType);
    return declaredIn(type.getSymbol() ?? type.aliasSymbol, ["OutputInstance", "Output"], ["output.ts", "output.d.ts"]);
}

/** The `T` of `Output<T>` (`OutputInstance<T> & Lifted<T>`, a union of those for an optional T, or `OutputInstance<T>` alone). */
function outputInner(checker: ts.TypeChecker, type: ts.Type): ts.Type | undefined {
    // `Output<T | undefined>` is a union (Lifted<T> distributes over T): its alias still carries the T.
    if (type.aliasSymbol?.getName() === "Output" && type.aliasTypeArguments?.length === 1)
        return type.aliasTypeArguments[0];
    const instance = type.isIntersection() ? type.types.find(isOutputType) : type;
    if (instance === undefined) return undefined;
    return checker.getTypeArguments(instance as ts.TypeReference)[0];
}

/** The `T` of `Input<T>`, the union `T | Promise<T> | OutputInstance<T>`. */
function inputInner(checker: ts.TypeChecker, type: ts.Type): ts.Type | undefined {
    if (!type.isUnion()) return undefined;
    const promise = type.types.find((t) => t.getSymbol()?.getName() === "Promise");
    if (
        promise === undefined ||
        !type.types.some(isOutputType) ||
        !type.types.some((t) => t !== promise && !isOutputType(t))
    )
        return undefined;
    return checker.getTypeArguments(promise as ts.TypeReference)[0];
}

function isResourceClass(checker: ts.TypeChecker, type: ts.Type): boolean {
    if (!type.isClass()) return false;
    return checker
        .getBaseTypes(type)
        .some(
            (base) =>
                declaredIn(
                    base.getSymbol(),
                    ["CustomResource", "ComponentResource", "Resource"],
                    ["resource.ts", "resource.d.ts"],
                ) || isResourceClass(checker, base),
        );
}

/** Whether `name` is declared in `file` as `const name = { ... } as const`. */
function isAsConstObject(file: ts.SourceFile, name: string): boolean {
    let found = false;
    const visit = (node: ts.Node): void => {
        if (
            ts.isVariableDeclaration(node) &&
            ts.isIdentifier(node.name) &&
            node.name.text === name &&
            node.initializer !== undefined
        ) {
            const init = node.initializer;
            if (
                ts.isAsExpression(init) &&
                ts.isTypeReferenceNode(init.type) &&
                init.type.typeName.getText(file) === "const"
            )
                found = true;
        }
        if (!found) ts.forEachChild(node, visit);
    };
    visit(file);
    return found;
}

/** Whether a union of string or number literals is a TS enum or an as-const object's values, as the analyzer needs. */
function isDeclaredEnum(union: ts.UnionType, members: readonly ts.Type[]): boolean {
    if (members.every((t) => (t.flags & ts.TypeFlags.EnumLiteral) !== 0)) return true;
    const alias = union.aliasSymbol;
    const file = alias?.declarations?.[0]?.getSourceFile();
    return alias !== undefined && file !== undefined && isAsConstObject(file, alias.getName());
}

class Walker {
    readonly problems: string[] = [];
    readonly walked: WalkedTypes = { own: [], installed: [] };
    private readonly seen = new Set<ts.Type>();

    constructor(
        private readonly checker: ts.TypeChecker,
        private readonly walkInstalled: boolean,
    ) {}

    private problem(where: string, what: string, type: ts.Type): void {
        this.problems.push(`${where}: ${what} (${this.checker.typeToString(type)})`);
    }

    /** Checks one property or element type, recursing into named interfaces once each. */
    type(type: ts.Type, where: string): void {
        const c = this.checker;
        const f = type.flags;
        if (f & (ts.TypeFlags.String | ts.TypeFlags.Number | ts.TypeFlags.Boolean | ts.TypeFlags.Any)) return;
        if (
            f & (ts.TypeFlags.StringLiteral | ts.TypeFlags.NumberLiteral | ts.TypeFlags.BooleanLiteral) &&
            !(f & ts.TypeFlags.EnumLiteral)
        ) {
            return this.problem(
                where,
                "a literal type (the schema has no literal; use string, number or an enum)",
                type,
            );
        }
        const alias = type.aliasSymbol?.getName();
        if ((alias === "Partial" || alias === "Required") && type.aliasTypeArguments?.length === 1)
            return this.type(type.aliasTypeArguments[0]!, where);
        const input = inputInner(c, type);
        if (input !== undefined) return this.type(input, where);
        if (isOutputType(type)) {
            const inner = outputInner(c, type);
            return inner === undefined
                ? this.problem(where, "an Output without its type", type)
                : this.type(inner, where);
        }
        if (
            declaredIn(type.getSymbol(), ["Asset", "Archive"], ["asset.ts", "asset.d.ts", "archive.ts", "archive.d.ts"])
        )
            return;
        if (isResourceClass(c, type)) return;
        if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0)
            return this.problem(where, "a function type (other languages cannot pass a function)", type);
        if (type.isUnion()) return this.union(type, where);
        if (type.isIntersection()) return this.problem(where, "an intersection type", type);
        if (c.isTupleType(type)) return this.problem(where, "a tuple type", type);
        if (c.isArrayType(type)) return this.type(c.getTypeArguments(type as ts.TypeReference)[0]!, `${where}[]`);
        const index = c.getIndexInfoOfType(type, ts.IndexKind.String);
        if (index !== undefined) return this.type(index.type, `${where}{}`);
        if (type.isClassOrInterface()) return this.members(type, type.getSymbol()!.getName());
        if (f & ts.TypeFlags.Object)
            return this.problem(where, "an inline or aliased object type (declare a named interface)", type);
        return this.problem(where, "a type the schema cannot express", type);
    }

    private union(type: ts.UnionType, where: string): void {
        const members = type.types.filter((t) => !(t.flags & ts.TypeFlags.Undefined));
        if (members.length === 1) return this.type(members[0]!, where);
        // Without undefined the checker hands back the declared union, which carries the alias an enum check needs.
        if (members.length < type.types.length && !members.some((t) => t.flags & ts.TypeFlags.Null)) {
            const declared = this.checker.getNonNullableType(type);
            if (declared.isUnion() && declared.types.length === members.length) type = declared;
        }
        if (members.length === 2 && members.every((t) => t.flags & ts.TypeFlags.BooleanLiteral)) return;
        const literals = members.every((t) => t.isStringLiteral()) || members.every((t) => t.isNumberLiteral());
        if (literals && isDeclaredEnum(type, members)) return;
        const what = literals
            ? "a union of literals that is neither a TS enum nor an as-const object"
            : "a union type (only `T | undefined` is allowed; use an enum or an as-const object for a choice)";
        this.problem(where, what, type);
    }

    /** Every property of a named interface or class (the analyzer names a schema type after it). */
    members(type: ts.Type, name: string): void {
        if (this.seen.has(type)) return;
        this.seen.add(type);
        const installed = (type.getSymbol()?.declarations?.[0]?.getSourceFile().fileName ?? "").includes(
            "/node_modules/",
        );
        if (installed && !this.walkInstalled) return;
        (installed ? this.walked.installed : this.walked.own).push(name);
        for (const member of type.getProperties()) {
            const where = `${name}.${member.getName()}`;
            if (member.flags & ts.SymbolFlags.Method) {
                this.problems.push(
                    `${where}: a method (the analyzer drops it silently: other languages would never see it)`,
                );
                continue;
            }
            if (!(member.flags & ts.SymbolFlags.Property)) continue;
            const declaration = member.valueDeclaration ?? member.declarations?.[0];
            if (declaration === undefined) continue;
            this.type(this.checker.getTypeOfSymbolAtLocation(member, declaration), where);
        }
    }
}

function modifiers(node: ts.Node): ts.SyntaxKind[] {
    return (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : []).map((m) => m.kind);
}

/**
 * Reads the component's inputs and outputs and lists what the analyzer would reject or mangle.
 *
 * @returns the shape, the program it was read from (pass it as `oldProgram` to read a mutated copy faster), and
 *   the interfaces the walk read.
 */
export function componentShape(options: ShapeOptions = {}): {
    shape: ComponentShape;
    program: ts.Program;
    walked: WalkedTypes;
} {
    // The unmodified component is read by more than one test file; the type checker takes seconds.
    if (Object.keys(options).length === 0) return (unmodified ??= readShape(options));
    return readShape(options);
}

let unmodified: ReturnType<typeof readShape> | undefined;

function readShape(options: ShapeOptions): { shape: ComponentShape; program: ts.Program; walked: WalkedTypes } {
    const root = options.root ?? ROOT;
    const componentFile = path.join(root, options.componentFile ?? path.join("components", "outbox.ts"));
    const className = options.className ?? "Outbox";
    const overrides = options.overrides ?? {};
    const config = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile);
    const compilerOptions = {
        ...ts.parseJsonConfigFileContent(config.config, ts.sys, root).options,
        strictNullChecks: true,
        noEmit: true,
    };
    const host = ts.createCompilerHost(compilerOptions);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) =>
        overrides[path.resolve(fileName)] !== undefined
            ? ts.createSourceFile(fileName, overrides[path.resolve(fileName)]!, languageVersion, true)
            : getSourceFile(fileName, languageVersion, onError, shouldCreate);
    const readFile = host.readFile.bind(host);
    host.readFile = (fileName) => overrides[path.resolve(fileName)] ?? readFile(fileName);
    const program = ts.createProgram({
        rootNames: [componentFile],
        options: compilerOptions,
        host,
        oldProgram: options.oldProgram,
    });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(componentFile);
    if (source === undefined) throw new Error(`${componentFile} is not in the program`);
    const declaration = source.statements.find(
        (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === className,
    );
    if (declaration === undefined) throw new Error(`no class ${className} in ${componentFile}`);

    const walker = new Walker(checker, options.walkInstalledTypes ?? true);
    const problems = walker.problems;
    const inputs: string[] = [];
    const outputs: string[] = [];
    const constructors = declaration.members.filter(ts.isConstructorDeclaration);
    if (constructors.length !== 1)
        problems.push(`${className}: ${constructors.length} constructors (the analyzer needs exactly one)`);
    for (const ctor of constructors) {
        for (const param of ctor.parameters) {
            if (
                modifiers(param).some(
                    (k) =>
                        k === ts.SyntaxKind.PrivateKeyword ||
                        k === ts.SyntaxKind.ProtectedKeyword ||
                        k === ts.SyntaxKind.PublicKeyword ||
                        k === ts.SyntaxKind.ReadonlyKeyword,
                )
            ) {
                problems.push(
                    `${className}.constructor(${param.name.getText(source)}): a parameter property (it becomes a class property, so an output)`,
                );
            }
        }
        const args = ctor.parameters.find((p) => ts.isIdentifier(p.name) && p.name.text === "args");
        if (args?.type === undefined) {
            problems.push(`${className}.constructor: no parameter named exactly \`args\` with a type`);
            continue;
        }
        const argsType = checker.getTypeAtLocation(args.type);
        const argsSymbol = argsType.getSymbol();
        if (argsSymbol === undefined || !(argsSymbol.flags & ts.SymbolFlags.Interface)) {
            problems.push(
                `${className}.constructor(args): typed by ${checker.typeToString(argsType)}, not an interface`,
            );
            continue;
        }
        inputs.push(...argsType.getProperties().map((p) => p.getName()));
        walker.members(argsType, argsSymbol.getName());
    }
    for (const member of declaration.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        const name = member.name.getText(source);
        const kinds = modifiers(member);
        if (kinds.includes(ts.SyntaxKind.StaticKeyword)) continue;
        const type = checker.getTypeAtLocation(member);
        const isPublic =
            !kinds.includes(ts.SyntaxKind.PrivateKeyword) &&
            !kinds.includes(ts.SyntaxKind.ProtectedKeyword) &&
            !ts.isPrivateIdentifier(member.name);
        if (!isPublic || !kinds.includes(ts.SyntaxKind.ReadonlyKeyword) || !isOutputType(type)) {
            problems.push(
                `${className}.${name}: a class property that is not a public readonly Output (the analyzer makes every property an output) (${checker.typeToString(type)})`,
            );
            continue;
        }
        outputs.push(name);
        walker.type(type, `${className}.${name}`);
    }
    return { shape: { inputs, outputs, problems }, program, walked: walker.walked };
}
