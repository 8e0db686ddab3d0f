/**
 * Live progress of `npm start`: ONE line rewritten in place when stdout is a terminal, plain lines every few
 * seconds otherwise (CI logs, pipes), so a log never fills with carriage returns.
 *
 * @packageDocumentation
 */

/** Writes progress lines, and ordinary lines that must not collide with the live one. */
export interface ProgressLine {
    /** Show `text` as the current progress (rewrites the line on a TTY, rate-limited otherwise). */
    update(text: string): void;
    /** Print a normal line: the live line is cleared first and redrawn by the next update. */
    print(line: string): void;
    /** End the live line (leaves its last text on screen). */
    done(): void;
}

/** Options of {@link createProgressLine}. */
export interface ProgressLineOptions {
    /** Where to write. @default process.stdout */
    readonly stream?: NodeJS.WriteStream;
    /** Whether to rewrite one line in place. @default stream.isTTY */
    readonly tty?: boolean;
    /** On a non-TTY, the least time between two progress lines, ms. @default 2000 */
    readonly plainIntervalMs?: number;
}

/** Create the progress writer. */
export function createProgressLine(options: ProgressLineOptions = {}): ProgressLine {
    const stream = options.stream ?? process.stdout;
    const tty = options.tty ?? stream.isTTY === true;
    const plainIntervalMs = options.plainIntervalMs ?? 2000;
    let live = false;
    let lastPlain = 0;
    let lastText = "";
    const clear = (): void => {
        if (live) stream.write("\r\x1b[2K");
        live = false;
    };
    return {
        update(text) {
            if (tty) {
                // A pseudo-terminal without a size reports 0 columns.
                const width =
                    stream.columns !== undefined && stream.columns > 0 ? Math.max(20, stream.columns - 1) : 119;
                stream.write(`\r\x1b[2K${text.length > width ? text.slice(0, width) : text}`);
                live = true;
                return;
            }
            const now = Date.now();
            if (text !== lastText && now - lastPlain >= plainIntervalMs) {
                stream.write(`${text}\n`);
                lastPlain = now;
                lastText = text;
            }
        },
        print(line) {
            clear();
            stream.write(`${line}\n`);
        },
        done() {
            if (live) stream.write("\n");
            live = false;
        },
    };
}
