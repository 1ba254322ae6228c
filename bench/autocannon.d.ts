// The part of autocannon 8's API the benchmark uses; the package ships no types.
declare module "autocannon" {
  export interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
  }

  export interface RequestStep extends Request {
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void
  }

  export interface Options {
    url: string
    connections?: number
    duration?: number
    timeout?: number
    headers?: Record<string, string>
    requests?: Array<RequestStep>
  }

  export interface Histogram {
    average: number
    mean: number
    total: number
    p50: number
    p90: number
    p99: number
    max: number
  }

  export interface Result {
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    mismatches: number
    latency: Histogram
    requests: Histogram
    statusCodeStats: Record<string, { count: number }>
  }

  export interface Instance extends PromiseLike<Result> {
    stop(): void
  }

  export default function autocannon(options: Options): Instance
}
