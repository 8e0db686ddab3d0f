/**
 * The Lambda code exactly as Pulumi serializes it: read from a `CallbackFunction`'s recorded archive under the
 * mocks, measured, and loaded the way Lambda's Node.js runtime loads it (a CommonJS module, so sloppy mode:
 * the emitted code uses `with` blocks, which strict mode and ES modules reject).
 */
import * as fs from "node:fs";
import Module from "node:module";
import * as path from "node:path";
import * as zlib from "node:zlib";
import type { RecordedResource } from "./pulumi-mocks";

/** The file Lambda loads: `handler: "__index.handler"`. */
export const ENTRY_FILE = "__index.js";

interface MockAsset {
    text?: Promise<string> | string;
    path?: Promise<string> | string;
    assets?: Promise<Record<string, MockAsset>> | Record<string, MockAsset>;
}

/** The assets of a recorded `aws:lambda/function:Function`'s `code` archive, by archive path. */
export async function archiveAssets(fn: RecordedResource): Promise<Record<string, MockAsset>> {
    const code = fn.inputs.code as MockAsset | undefined;
    if (code?.assets === undefined) throw new Error(`${fn.name} has no AssetArchive code (type ${fn.type})`);
    return await code.assets;
}

/** The text of the archive's `__index.js`: the serialized handler module. */
export async function entryText(fn: RecordedResource): Promise<string> {
    const entry = (await archiveAssets(fn))[ENTRY_FILE];
    if (entry?.text === undefined) throw new Error(`${fn.name}'s archive has no ${ENTRY_FILE} StringAsset`);
    return await entry.text;
}

/**
 * Every file at or under `p`: `p` itself when it is a file, else the files in it and its subfolders.
 *
 * @param p - a file or folder.
 */
export function filesUnder(p: string): string[] {
    const stat = fs.statSync(p);
    if (!stat.isDirectory()) return [p];
    return fs.readdirSync(p).flatMap((entry) => filesUnder(path.join(p, entry)));
}

/** What the archive would hold: every file's path and contents (string assets and files under archived folders). */
export async function archiveContents(fn: RecordedResource): Promise<{ name: string; bytes: Buffer }[]> {
    const out: { name: string; bytes: Buffer }[] = [];
    for (const [name, asset] of Object.entries(await archiveAssets(fn))) {
        if (asset.text !== undefined) {
            out.push({ name, bytes: Buffer.from(await asset.text, "utf8") });
        } else if (asset.path !== undefined) {
            const root = await asset.path;
            for (const file of filesUnder(root))
                out.push({ name: path.join(name, path.relative(root, file)), bytes: fs.readFileSync(file) });
        } else {
            throw new Error(`${fn.name}'s archive entry ${name} is neither a text asset nor a file/folder`);
        }
    }
    return out;
}

/** The archive's size: `raw` bytes of all files, and `deflated` (what the zip's compressed entries weigh). */
export async function archiveSize(fn: RecordedResource): Promise<{ files: number; raw: number; deflated: number }> {
    const contents = await archiveContents(fn);
    return {
        files: contents.length,
        raw: contents.reduce((n, c) => n + c.bytes.length, 0),
        deflated: contents.reduce((n, c) => n + zlib.deflateRawSync(c.bytes).length, 0),
    };
}

/**
 * The size of an archive written out as a folder: its `files`, their `raw` bytes and `deflated` (what the zip's
 * compressed entries weigh).
 *
 * @param dir - the folder (`__index.js` at its root).
 */
export function folderSize(dir: string): { files: number; raw: number; deflated: number } {
    const files = filesUnder(dir);
    let raw = 0;
    let deflated = 0;
    for (const file of files) {
        const bytes = fs.readFileSync(file);
        raw += bytes.length;
        deflated += zlib.deflateRawSync(bytes).length;
    }
    return { files: files.length, raw, deflated };
}

/**
 * Load serialized handler text as a CommonJS module (sloppy mode, like Lambda) and return its export.
 * `require()` inside it resolves from this repository's `node_modules`, so `@aws-sdk/*` resolves to the
 * same module instances the test process uses.
 *
 * @param text - the module text, e.g. from {@link entryText} or `pulumi.runtime.serializeFunction`.
 * @param exportName - the export to return. @default "handler"
 */
export function loadSerialized<T = unknown>(text: string, exportName = "handler"): T {
    const file = path.join(__dirname, "..", "..", ".serialized", ENTRY_FILE);
    const m = new Module(file) as Module & { _compile(content: string, filename: string): void; paths: string[] };
    m.filename = file;
    m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
    m._compile(text, file);
    return (m.exports as Record<string, T>)[exportName];
}
