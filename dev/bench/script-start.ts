/**
 * How a bench script (`npm run bench`, `npm run bench:burst`) starts: its command line read, or its usage printed, and
 * Java checked, with the exit codes each script gives.
 *
 * @packageDocumentation
 */
import { JAVA_MISSING_MESSAGE, javaAvailable } from "../emulators/dynamodb-local";

/**
 * The script's options from its command line; `undefined` when it asked for help, which is then printed. A bad
 * argument exits 2 with the parser's message.
 *
 * @param script - The command, first in the message, e.g. `npm run bench`.
 * @param parse - The script's parser: its options, or `"help"`.
 * @param usage - The usage text.
 */
export function optionsOrExit<T>(script: string, parse: (argv: string[]) => T | "help", usage: string): T | undefined {
    let parsed: T | "help";
    try {
        parsed = parse(process.argv.slice(2));
    } catch (err) {
        process.stderr.write(`${script}: ${(err as Error).message}\n`);
        process.exit(2);
    }
    if (parsed === "help") {
        process.stdout.write(`${usage}\n`);
        return undefined;
    }
    return parsed;
}

/** Exits 1 with {@link JAVA_MISSING_MESSAGE} when Java is missing (DynamoDB Local runs on it). */
export function exitWithoutJava(): void {
    if (!javaAvailable()) {
        process.stderr.write(`${JAVA_MISSING_MESSAGE}\n`);
        process.exit(1);
    }
}
