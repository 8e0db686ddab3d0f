/**
 * A consumer's project with this package installed the way npm installs it: `npm run build`, `npm pack`, then
 * `npm install --offline --no-audit --no-fund <tarball>` into a fresh project, from the local npm cache only, so
 * no network is needed. Used by `tests/package/consume.test.ts` and by the bench's installed-layout figures.
 *
 * `npm ci` (what CI runs first) fills the cache with the lock's tarballs and their abbreviated registry
 * documents, but npm 11 resolves a dependency with no lock entry through the *full* registry document, which
 * `npm ci` never fetches: a bare `npm install --offline <tarball>` fails with ENOTCACHED on the first dependency.
 * So the consumer starts with a package-lock.json that lists this repository's locked versions of the tarball's
 * production dependency closure: the closure is walked from the `dependencies` of the package.json inside the
 * tarball, through the repository's package-lock.json. npm then reads the tarball's manifest itself, checks each
 * dependency against those entries, installs them from the cache and links the `bin`. A dependency the tarball
 * does not declare is not installed, as in a real consumer. `--prefer-offline` was not used: it would fetch every
 * full registry document and resolve newer versions than the lock's. No `--legacy-peer-deps` is needed: the
 * closure holds every required peer.
 *
 * @packageDocumentation
 */
import * as assert from "node:assert/strict";
import { spawnSync, SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Ran } from "../../support/run-async";

/** This repository's root. */
export const REPO = path.resolve(__dirname, "..", "..", "..");

/** The consumer fixtures: the Pulumi program, the application and the Lambda host. */
export const FIXTURES = path.join(__dirname, "..", "fixtures");

/** This repository's package.json: the name and version the tarball carries. */
export const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { name: string; version: string };

/** One `packages` entry of a package-lock.json (lockfileVersion 3). */
export interface LockEntry {
    version?: string;
    dev?: boolean;
    devOptional?: boolean;
    peer?: boolean;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    [field: string]: unknown;
}

/** This repository's package-lock.json `packages`, by location (`node_modules/a`). */
export function repositoryLock(): Record<string, LockEntry> {
    return (JSON.parse(fs.readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }).packages;
}

/**
 * The lock locations (`node_modules/a`, `node_modules/a/node_modules/b`) that `roots` need, walked through
 * `lock` as Node resolves: from the requiring package's folder up to the root. Required peers are followed,
 * optional ones are not.
 *
 * @param lock - a package-lock.json's `packages`.
 * @param roots - the package names to start from.
 * @throws when a dependency has no lock entry: the package.json and package-lock.json are out of step.
 */
export function lockClosure(lock: Record<string, LockEntry>, roots: readonly string[]): Set<string> {
    const locate = (from: string, name: string): string | undefined => {
        for (let base = from; ; ) {
            const location = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
            if (lock[location] !== undefined) return location;
            if (base === "") return undefined;
            const up = base.lastIndexOf("/node_modules/");
            base = up < 0 ? "" : base.slice(0, up);
        }
    };
    const seen = new Set<string>();
    const queue: [string, string][] = roots.map((name) => ["", name]);
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const [from, name] = next;
        const location = locate(from, name);
        if (location === undefined) {
            throw new Error(`${name} (needed by ${from || "the packed package.json"}) has no entry in package-lock.json: the lock is out of step with package.json; run npm install and commit package-lock.json`);
        }
        if (seen.has(location)) continue;
        seen.add(location);
        const entry = lock[location]!;
        for (const dep of [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {})]) queue.push([location, dep]);
        for (const dep of Object.keys(entry.peerDependencies ?? {})) if (entry.peerDependenciesMeta?.[dep]?.optional !== true) queue.push([location, dep]);
    }
    return seen;
}

/**
 * The consumer's package-lock.json before the install: this repository's locked versions of the tarball's
 * production closure (its `dependencies` and `optionalDependencies`, as npm installs both for a consumer), and of
 * the consumer's own devDependencies (flagged dev when only they need them). The package itself is not in it:
 * npm adds it from the tarball.
 *
 * @param packedDependencies - the tarball's `dependencies` and `optionalDependencies`, merged.
 * @param devDependencies - the consumer's own devDependencies.
 */
export function consumerLock(packedDependencies: Record<string, string>, devDependencies: Record<string, string>): object {
    const lock = repositoryLock();
    const production = lockClosure(lock, Object.keys(packedDependencies));
    const dev = lockClosure(lock, Object.keys(devDependencies));
    const packages: Record<string, object> = { "": { name: "consumer", version: "1.0.0", devDependencies } };
    for (const location of [...new Set([...production, ...dev])].sort()) {
        const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = lock[location]!;
        packages[location] = production.has(location) ? entry : { ...entry, dev: true };
    }
    return { name: "consumer", version: "1.0.0", lockfileVersion: 3, requires: true, packages };
}

/**
 * The environment for npm in the consumer: this process's, without the `npm_*` variables an enclosing
 * `npm test` sets (`npm_config_local_prefix` would point npm at this repository), but with `npm_config_cache`,
 * so that a cache chosen that way still applies.
 */
export function npmEnvironment(): NodeJS.ProcessEnv {
    return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || /^npm_config_cache$/i.test(key)));
}

/**
 * Run `command` to completion, collecting its output (64 MB at most).
 *
 * @param command - the executable.
 * @param args - its arguments.
 * @param options - its working directory, and its environment. @default this process's environment
 * @throws the spawn error when it could not start.
 */
export function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): SpawnSyncReturns<string> {
    const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (result.error) throw result.error;
    return result;
}

/**
 * The command's stdout, after asserting that it exited 0 (the assertion shows its output).
 *
 * @param result - how the command ended.
 * @param what - what it was, for the message.
 */
export function ok(result: Ran, what: string): string {
    assert.equal(result.status, 0, `${what} exited ${result.status}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
    return result.stdout;
}

/**
 * The environment of the consumer's programs: `PATH` and a scratch `HOME` (so that no user's Pulumi or npm
 * settings apply), nothing else: no `NODE_PATH`, no `npm_*`.
 *
 * @param home - a scratch folder.
 */
export function consumerEnvironment(home: string): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH ?? "", HOME: home, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
}

/** The consumer's project after the install. */
export interface ConsumerProject {
    /** The project's folder (the consumer's `package.json`, `node_modules`). */
    readonly project: string;
    /** Where npm installed this package: `<project>/node_modules/<name>`. */
    readonly installed: string;
    /** The packed files, sorted, as `npm pack --json` lists them. */
    readonly packed: string[];
    /** The tarball's file name, in `work`. */
    readonly tarballName: string;
    /** The package.json inside the tarball. */
    readonly packedManifest: { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; bin?: unknown };
}

/**
 * Build, pack and install this package into `<work>/project`, a project as `pulumi new typescript` leaves it
 * (with `@types/node` as its devDependency). Fails (assertion) with npm's output when a step fails.
 *
 * @param work - an empty folder that receives the tarball and the project.
 */
export function installConsumerProject(work: string): ConsumerProject {
    ok(run("npm", ["run", "--silent", "build"], { cwd: REPO }), "npm run build");
    // --ignore-scripts: prepare would build a second time.
    const pack = JSON.parse(ok(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], { cwd: REPO }), "npm pack")) as { filename: string; files: { path: string }[] }[];
    const packed = pack[0]!.files.map((f) => f.path).sort();
    const tarballName = pack[0]!.filename;
    const tarball = path.join(work, tarballName);
    const packedManifest = JSON.parse(ok(run("tar", ["-xOzf", tarball, "package/package.json"], { cwd: work }), "tar (package.json)")) as ConsumerProject["packedManifest"];

    const project = path.join(work, "project");
    fs.mkdirSync(project);
    const lock = repositoryLock();
    const devDependencies = { "@types/node": lock["node_modules/@types/node"]!.version! };
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, main: "index.js", devDependencies }, null, 2));
    const shipped = { ...(packedManifest.dependencies ?? {}), ...(packedManifest.optionalDependencies ?? {}) };
    fs.writeFileSync(path.join(project, "package-lock.json"), JSON.stringify(consumerLock(shipped, devDependencies), null, 2));
    ok(run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: project, env: npmEnvironment() }), `npm install --offline ${tarballName} in the consumer`);
    return { project, installed: path.join(project, "node_modules", MANIFEST.name), packed, tarballName, packedManifest };
}

/**
 * Run the consumer's Pulumi program (`fixtures/consumer-program.js`, copied to `<project>/index.js`) under fresh
 * mocks in a child process: it declares `new Outbox("orders", {})` and writes each function's archive to
 * `<out>/publisher` and `<out>/sweeper`, then prints one JSON line describing them (see {@link ConsumerArchives}).
 *
 * @param project - the consumer's project, from {@link installConsumerProject}.
 * @param out - the folder the archives are written to.
 * @param env - the program's environment (no `NODE_PATH`, no `npm_*`).
 * @returns how the program ended; parse its output with {@link consumerArchivesOf}.
 */
export function runConsumerProgram(project: string, out: string, env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
    fs.copyFileSync(path.join(FIXTURES, "consumer-program.js"), path.join(project, "index.js"));
    return run(process.execPath, ["index.js", out], { cwd: project, env });
}

/** One function's archive as the consumer program wrote it. */
export interface ArchiveReport {
    /** Each archive entry's name, and whether it was a text asset or a file or folder. */
    entries: Record<string, "text" | "path">;
    /** The function's environment variables as the component set them. */
    environment: Record<string, string>;
}

/** The publisher's and sweeper's archives, as the consumer program describes them. */
export type ConsumerArchives = { publisher: ArchiveReport; sweeper: ArchiveReport };

/**
 * The archives the consumer program recorded, from its last line of output; fails (assertion) with the
 * program's output if it failed.
 *
 * @param program - how {@link runConsumerProgram} ended.
 */
export function consumerArchivesOf(program: Ran): ConsumerArchives {
    return JSON.parse(ok(program, "the consumer program (node index.js in the consumer project)").trim().split("\n").pop() as string) as ConsumerArchives;
}
