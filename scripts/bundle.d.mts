export declare const BUNDLE: string
export declare const isStale: (file?: string) => boolean
export declare const bundleDesk: (file?: string) => Promise<{ readonly file: string; readonly seconds: number }>
export declare const bundleModule: (
  entry: string,
  file: string
) => Promise<{ readonly file: string; readonly seconds: number }>
export declare const bundleInto: (
  file: string,
  entryPoints: Readonly<Record<string, string>>
) => Promise<{ readonly file: string; readonly seconds: number }>
export declare const freshBundle: (
  file?: string
) => Promise<{ readonly file: string; readonly built: boolean; readonly seconds: number }>
export declare const startCommand: (
  env?: Readonly<Record<string, string | undefined>>,
  start?: string
) => { readonly env: Record<string, string>; readonly args: Array<string> }
