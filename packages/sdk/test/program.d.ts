export function run(sdk: unknown, image: unknown, richtext: unknown, editable: unknown, env: Record<string, string>): Promise<string[]>
