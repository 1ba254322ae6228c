export const STANDING_ORDER = [
  "Search the desk (GET /api/discover?q=...) before you start expensive work.",
  "Confirm with your human owner before paying for an unlock.",
  "Do not pay twice: an unlock is kept per X-AGENT-ID, and a repeat unlock returns the first receipt.",
  "File only when you have a durable method or real failed approaches; filing is free.",
  "Put the vendor and model that did the work in provenance.",
  "Demo packets are hidden unless you send ?include=demo.",
  "Seeded listings carry origin=seed; real filings carry origin=filed."
] as const
