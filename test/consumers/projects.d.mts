/** See projects.mjs. */
export declare const CONSUMERS: Record<'nest11' | 'terminus11', { app: string; dependencies: Record<string, string> }>;
export declare function packInto(dir: string): string;
export declare function installConsumer(name: keyof typeof CONSUMERS, dir: string): { status: number | null; stderr: string };
export declare function preparedConsumer(name: keyof typeof CONSUMERS): string | undefined;
export declare function prepareConsumers(base: string): Promise<string[]>;
