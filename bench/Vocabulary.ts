export interface Stack {
  readonly name: string
  readonly tags: ReadonlyArray<string>
  readonly versions: ReadonlyArray<string>
  readonly parts: ReadonlyArray<string>
}

export const STACKS: ReadonlyArray<Stack> = [
  {
    name: "PostgreSQL",
    tags: ["postgresql", "database"],
    versions: ["13", "14", "15", "16"],
    parts: ["autovacuum", "query planner", "replication slot", "connection pool", "GIN index", "WAL archiving"]
  },
  {
    name: "MySQL",
    tags: ["mysql", "database"],
    versions: ["5.7", "8.0", "8.4"],
    parts: ["InnoDB buffer pool", "binlog", "gap lock", "optimizer hint", "replica lag"]
  },
  {
    name: "Redis",
    tags: ["redis", "cache"],
    versions: ["6", "7", "7.2"],
    parts: ["eviction policy", "cluster slots", "Lua script", "keyspace events", "AOF rewrite"]
  },
  {
    name: "Kafka",
    tags: ["kafka", "streaming"],
    versions: ["2.8", "3.5", "3.7"],
    parts: ["consumer group", "rebalance", "exactly-once producer", "log compaction", "partition leader"]
  },
  {
    name: "Kubernetes",
    tags: ["kubernetes", "infrastructure"],
    versions: ["1.27", "1.28", "1.29", "1.30"],
    parts: ["HPA", "readiness probe", "CoreDNS", "PodDisruptionBudget", "cgroup memory limit", "ingress controller"]
  },
  {
    name: "Terraform",
    tags: ["terraform", "infrastructure"],
    versions: ["1.5", "1.6", "1.8"],
    parts: ["state lock", "provider upgrade", "for_each", "remote backend", "import block"]
  },
  {
    name: "Docker",
    tags: ["docker", "containers"],
    versions: ["24", "25", "26"],
    parts: ["BuildKit cache", "multi-stage build", "overlay2", "healthcheck", "layer size"]
  },
  {
    name: "Node.js",
    tags: ["nodejs", "javascript"],
    versions: ["18", "20", "22"],
    parts: ["event loop", "worker_threads", "ESM loader", "heap snapshot", "undici fetch"]
  },
  {
    name: "TypeScript",
    tags: ["typescript", "javascript"],
    versions: ["5.2", "5.4", "5.6"],
    parts: ["project references", "declaration emit", "module resolution", "type inference", "incremental build"]
  },
  {
    name: "React",
    tags: ["react", "frontend"],
    versions: ["17", "18", "19"],
    parts: ["hydration", "Suspense boundary", "useEffect cleanup", "server components", "concurrent rendering"]
  },
  {
    name: "Next.js",
    tags: ["nextjs", "frontend"],
    versions: ["13", "14", "15"],
    parts: ["app router", "middleware", "ISR cache", "edge runtime", "image optimizer"]
  },
  {
    name: "Vite",
    tags: ["vite", "build"],
    versions: ["4", "5", "6"],
    parts: ["dependency pre-bundling", "HMR", "Rollup chunking", "SSR externals", "env variables"]
  },
  {
    name: "webpack",
    tags: ["webpack", "build"],
    versions: ["4", "5"],
    parts: ["module federation", "tree shaking", "source maps", "persistent cache", "loader chain"]
  },
  {
    name: "Python",
    tags: ["python"],
    versions: ["3.9", "3.11", "3.12"],
    parts: ["GIL contention", "asyncio loop", "import system", "multiprocessing", "wheel build"]
  },
  {
    name: "Django",
    tags: ["django", "python"],
    versions: ["3.2", "4.2", "5.0"],
    parts: ["ORM prefetch", "migration graph", "middleware order", "Celery task", "admin query"]
  },
  {
    name: "FastAPI",
    tags: ["fastapi", "python"],
    versions: ["0.100", "0.110"],
    parts: ["dependency injection", "Pydantic v2 model", "background task", "lifespan handler", "OpenAPI schema"]
  },
  {
    name: "Pandas",
    tags: ["pandas", "data"],
    versions: ["1.5", "2.1", "2.2"],
    parts: ["groupby", "merge", "dtype inference", "copy-on-write", "parquet reader"]
  },
  {
    name: "PyTorch",
    tags: ["pytorch", "machine-learning"],
    versions: ["2.0", "2.2", "2.4"],
    parts: ["DataLoader workers", "CUDA memory", "torch.compile", "mixed precision", "DDP gradient sync"]
  },
  {
    name: "Rails",
    tags: ["rails", "ruby"],
    versions: ["6.1", "7.0", "7.1"],
    parts: ["ActiveRecord callbacks", "Zeitwerk autoloading", "asset pipeline", "ActionCable", "credentials"]
  },
  {
    name: "Sidekiq",
    tags: ["sidekiq", "ruby"],
    versions: ["6", "7"],
    parts: ["retry middleware", "dead set", "unique jobs", "scheduled set", "Redis connection pool"]
  },
  {
    name: "Go",
    tags: ["go"],
    versions: ["1.20", "1.21", "1.22"],
    parts: ["goroutine leak", "context cancellation", "module proxy", "race detector", "GC pacer"]
  },
  {
    name: "Rust",
    tags: ["rust"],
    versions: ["1.70", "1.75", "1.80"],
    parts: ["borrow checker", "async runtime", "trait object", "build script", "feature unification"]
  },
  {
    name: "Tokio",
    tags: ["tokio", "rust"],
    versions: ["1.28", "1.36"],
    parts: ["blocking task", "select loop", "runtime shutdown", "mpsc channel", "timer wheel"]
  },
  {
    name: "Java",
    tags: ["java", "jvm"],
    versions: ["11", "17", "21"],
    parts: ["G1 collector", "virtual threads", "classloader", "JIT deoptimization", "heap dump"]
  },
  {
    name: "Spring Boot",
    tags: ["spring", "java"],
    versions: ["2.7", "3.1", "3.2"],
    parts: ["bean lifecycle", "Hibernate session", "actuator", "auto-configuration", "transaction proxy"]
  },
  {
    name: "GitHub Actions",
    tags: ["github-actions", "ci"],
    versions: ["v3", "v4"],
    parts: ["cache key", "matrix build", "OIDC token", "reusable workflow", "self-hosted runner"]
  },
  {
    name: "AWS Lambda",
    tags: ["aws", "serverless"],
    versions: ["nodejs20.x", "python3.12"],
    parts: ["cold start", "provisioned concurrency", "VPC ENI", "layer size", "SQS trigger"]
  },
  {
    name: "Elasticsearch",
    tags: ["elasticsearch", "search"],
    versions: ["7.17", "8.11", "8.13"],
    parts: ["shard allocation", "mapping explosion", "refresh interval", "analyzer", "heap pressure"]
  },
  {
    name: "Nginx",
    tags: ["nginx", "infrastructure"],
    versions: ["1.24", "1.25"],
    parts: ["upstream keepalive", "proxy buffering", "rate limit zone", "TLS session cache", "gzip"]
  },
  {
    name: "GraphQL",
    tags: ["graphql", "api"],
    versions: ["16", "Apollo 4"],
    parts: ["N+1 resolver", "DataLoader batching", "persisted queries", "schema stitching", "subscription"]
  },
  {
    name: "OpenTelemetry",
    tags: ["opentelemetry", "observability"],
    versions: ["1.20", "1.24"],
    parts: ["span exporter", "context propagation", "sampling", "collector pipeline", "metric cardinality"]
  },
  {
    name: "Prometheus",
    tags: ["prometheus", "observability"],
    versions: ["2.45", "2.50"],
    parts: ["recording rule", "scrape timeout", "TSDB compaction", "relabeling", "alert rule"]
  },
  {
    name: "Electron",
    tags: ["electron", "desktop"],
    versions: ["27", "29", "31"],
    parts: ["IPC bridge", "auto updater", "code signing", "renderer crash", "native module"]
  },
  {
    name: "Swift",
    tags: ["swift", "ios"],
    versions: ["5.8", "5.9", "5.10"],
    parts: ["SwiftUI state", "Core Data migration", "concurrency actor", "App Store build", "keychain access"]
  },
  {
    name: "Android Gradle",
    tags: ["android", "gradle"],
    versions: ["8.1", "8.3", "8.5"],
    parts: ["R8 shrinking", "build variant", "Kotlin kapt", "configuration cache", "dex limit"]
  },
  {
    name: "Snowflake",
    tags: ["snowflake", "data"],
    versions: ["2024"],
    parts: ["warehouse sizing", "clustering key", "stream task", "query profile", "stage load"]
  },
  {
    name: "dbt",
    tags: ["dbt", "data"],
    versions: ["1.5", "1.7", "1.8"],
    parts: ["incremental model", "snapshot", "macro", "source freshness", "test selection"]
  },
  {
    name: "Airflow",
    tags: ["airflow", "data"],
    versions: ["2.6", "2.8", "2.9"],
    parts: ["scheduler loop", "XCom size", "sensor deadlock", "DAG parsing", "pool slots"]
  },
  {
    name: "Stripe",
    tags: ["stripe", "payments"],
    versions: ["2023-10", "2024-04"],
    parts: ["webhook retry", "idempotency key", "payment intent", "SCA challenge", "proration"]
  },
  {
    name: "OAuth",
    tags: ["oauth", "security"],
    versions: ["2.0", "2.1"],
    parts: ["PKCE flow", "refresh token rotation", "JWKS cache", "redirect URI", "token audience"]
  }
]

export const SYMPTOMS: ReadonlyArray<string> = [
  "retries stopped",
  "memory grows without bound",
  "deadlock under load",
  "flaky test in CI",
  "p99 latency doubled",
  "cold start over 10 seconds",
  "OOM kill",
  "silent data loss",
  "duplicate processing",
  "build time tripled",
  "timeouts after upgrade",
  "connection pool exhausted",
  "disk filled overnight",
  "CPU pinned at 100 percent",
  "wrong results after migration",
  "intermittent 502 errors",
  "slow first request",
  "leaked file descriptors",
  "race condition on startup",
  "stale cache served",
  "clock skew errors",
  "certificate rotation outage",
  "throughput collapse",
  "runaway query",
  "hanging shutdown",
  "lost messages",
  "inconsistent reads"
]

export const TRIGGERS: ReadonlyArray<string> = [
  "a major version upgrade",
  "a traffic spike",
  "a config change",
  "a dependency bump",
  "moving to containers",
  "a region failover",
  "a schema migration",
  "switching to ESM",
  "enabling TLS",
  "a bulk import",
  "a new deploy pipeline",
  "raising concurrency",
  "moving to ARM",
  "a library swap",
  "a cloud account move"
]

export const CAUSES: ReadonlyArray<string> = [
  "a changed default",
  "stale statistics",
  "an unbounded queue",
  "a missing index",
  "lock ordering",
  "a retry storm",
  "a connection leak",
  "DNS caching",
  "an eager loader",
  "a misread timeout unit",
  "a shared mutable singleton",
  "clock drift",
  "an implicit transaction",
  "a wrong cache key",
  "backpressure ignored"
]

export const HERRINGS: ReadonlyArray<string> = [
  "the network",
  "the hardware",
  "the ORM",
  "the load balancer",
  "garbage collection",
  "the kernel",
  "the cloud provider",
  "the driver version",
  "the test runner"
]

export const FIXES: ReadonlyArray<string> = [
  "one-line config change",
  "index and ANALYZE",
  "bounded queue",
  "idempotency key",
  "explicit timeout",
  "connection reuse",
  "lock order rule",
  "cache key fix",
  "batching change",
  "backoff with jitter",
  "version pin",
  "health check rewrite",
  "rollout guard",
  "schema backfill",
  "memory limit tune"
]

export const DOMAINS: ReadonlyArray<string> = [
  "performance",
  "reliability",
  "migration",
  "debugging",
  "security",
  "cost",
  "testing",
  "scaling",
  "incident",
  "upgrade"
]

export const OPTIONAL_SECTIONS: ReadonlyArray<string> = [
  "Context",
  "Objective",
  "Work performed",
  "Decision",
  "Evidence"
]

export const NEVER_CONTAINS: ReadonlyArray<string> = [
  "password",
  "api key",
  "customer data",
  "private key",
  "access token"
]

export const VENDORS: ReadonlyArray<
  { readonly vendor: string; readonly models: ReadonlyArray<string>; readonly context: number }
> = [
  { vendor: "Anthropic", models: ["claude-sonnet-4", "claude-opus-4", "claude-haiku-4"], context: 200_000 },
  { vendor: "OpenAI", models: ["gpt-4.1", "o3", "gpt-4o"], context: 128_000 },
  { vendor: "Google", models: ["gemini-2.5-pro", "gemini-2.5-flash"], context: 1_000_000 },
  { vendor: "Mistral", models: ["mistral-large", "codestral"], context: 128_000 },
  { vendor: "DeepSeek", models: ["deepseek-v3", "deepseek-r1"], context: 64_000 },
  { vendor: "Meta", models: ["llama-4-maverick"], context: 1_000_000 }
]

export const TOOLS: ReadonlyArray<string> = [
  "bash",
  "psql",
  "git",
  "kubectl",
  "curl",
  "browser",
  "python",
  "node",
  "docker",
  "terraform",
  "grep",
  "profiler"
]

export const AGENT_NAMES: ReadonlyArray<string> = [
  "fixer",
  "scout",
  "ops-bot",
  "migrator",
  "triage",
  "builder",
  "auditor",
  "tuner",
  "pathfinder",
  "oncall"
]

const ONSETS = ["b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "kr", "tr", "st", "pl"]
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"]
const CODAS = ["", "n", "x", "r", "l", "sh", "nt", "k"]

/** Distinct names of the long tail (libraries, services, jobs, error codes): what makes a real title specific. */
export const NAMES = 20_000
export const nameAt = (k: number) => {
  const syllable = (n: number) => ONSETS[n % ONSETS.length]! + VOWELS[Math.floor(n / ONSETS.length) % VOWELS.length]!
  const first = k % (ONSETS.length * VOWELS.length)
  const rest = Math.floor(k / (ONSETS.length * VOWELS.length))
  return syllable(first) + syllable(rest % (ONSETS.length * VOWELS.length)) +
    CODAS[Math.floor(rest / (ONSETS.length * VOWELS.length)) % CODAS.length]!
}

export const NAME_ROLES: ReadonlyArray<string> = [
  "service",
  "worker",
  "importer",
  "gateway",
  "scheduler",
  "plugin",
  "client",
  "exporter"
]
