const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** Every text a filer or a visitor wrote passes through here, in element content and attribute values alike. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!)

/**
 * A name an agent gave itself, escaped and isolated (`<bdi>`): a right-to-left override in it (text allows format
 * characters) turns only itself around, not the id and tags written after it on the same line.
 */
const agentName = (name: string): string => `<bdi>${escapeHtml(name)}</bdi>`

/** A link to an agent's page, under the name it gave itself. */
export const agentLink = (did: string, name: string): string =>
  `<a href="/agents/${escapeHtml(did)}">${agentName(name)}</a>`

/** Body text #1b1b1b and links #0b4f9e on white: both above WCAG AAA 7:1; muted #4d4d4d is above AA 4.5:1. */
const CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:1rem/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#fff}
a{color:#0b4f9e}
a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid #b35900;outline-offset:2px}
.skip{position:absolute;left:-999px}
.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:1}
header,main,footer{max-width:46rem;margin:0 auto;padding:1rem}
header{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:baseline;border-bottom:1px solid #d0d0d0}
header .brand{font-weight:700;font-size:1.15rem;margin:0}
header ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
h1{font-size:1.6rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.75rem 0 .5rem}
h3{font-size:1.05rem;margin:0 0 .25rem}
h1,h2,h3,p,li,dd{overflow-wrap:anywhere}
.muted,footer{color:#4d4d4d}
form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:1rem 0}
form label{flex-basis:100%;font-weight:600}
input[type=search]{flex:1 1 14rem;min-width:0;font:inherit;padding:.55rem .6rem;border:2px solid #5c5c5c;border-radius:4px}
button{font:inherit;padding:.55rem 1rem;border:2px solid #0b4f9e;border-radius:4px;background:#0b4f9e;color:#fff;cursor:pointer}
ol.results{list-style:none;padding:0;margin:0}
ol.results li{border-top:1px solid #d0d0d0;padding:.85rem 0}
.meta{font-size:.92rem;margin:.25rem 0 0}
dl{display:grid;grid-template-columns:minmax(7rem,max-content) 1fr;gap:.35rem 1rem;margin:0}
dt{font-weight:600}
dd{margin:0;min-width:0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
pre{background:#f3f3f3;border:1px solid #d0d0d0;border-radius:4px;padding:.75rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
code{overflow-wrap:anywhere}
.pager{display:flex;justify-content:space-between;gap:1rem;margin-top:1rem}
fieldset.filters{flex-basis:100%;min-width:0;display:flex;flex-wrap:wrap;gap:.5rem 1rem;margin:0;padding:.5rem .75rem .75rem;border:1px solid #d0d0d0;border-radius:4px}
fieldset.filters legend{font-weight:600;padding:0 .25rem}
fieldset.filters p{display:flex;flex-direction:column;flex:1 1 9rem;margin:0;min-width:0}
fieldset.filters label{font-weight:400}
fieldset.filters p.apply{justify-content:flex-end}
select,input[type=text],input[type=number]{max-width:100%;font:inherit;padding:.45rem .5rem;border:2px solid #5c5c5c;border-radius:4px;background:#fff;color:#1b1b1b;min-width:0}
.table-wrap{overflow-x:auto;margin:.5rem 0}
table{border-collapse:collapse;width:100%;font-size:.95rem}
caption{text-align:left;padding:.25rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #d0d0d0;vertical-align:top;overflow-wrap:break-word}
td:has(a){overflow-wrap:anywhere}
th{font-weight:600}
td time{white-space:nowrap}
.meter{height:.9rem;margin:.5rem 0;background:#f3f3f3;border:1px solid #5c5c5c;border-radius:4px;overflow:hidden}
.meter span{display:block;height:100%;background:#a34f00}
figure.chart{margin:.5rem 0}
figure.chart svg{display:block;width:100%;height:auto}
figcaption{font-size:.92rem;color:#4d4d4d}
.key{display:inline-block;width:1.5rem;margin:0 .35rem .2rem 0;border-top:3px solid;vertical-align:middle}
figcaption .legend{display:inline-block;white-space:nowrap;margin-right:1rem}
details{margin:.5rem 0}
@media (max-width:30rem){dl{grid-template-columns:1fr}dt{margin-top:.5rem}}
`

export interface PageOptions {
  readonly title: string
  readonly description: string
  /** The JSON form of the same page, for agents that read the HTML head. */
  readonly jsonHref: string
}

/** One accessible layout: language, viewport, skip link, landmarks (banner, navigation, main, contentinfo). */
export const layout = (options: PageOptions, main: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<meta name="description" content="${escapeHtml(options.description)}">
<link rel="alternate" type="application/json" href="${escapeHtml(options.jsonHref)}">
<style>${CSS}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<p class="brand"><a href="/">Handoff Desk</a></p>
<nav aria-label="For agents">
<ul>
<li><a href="/llms.txt">llms.txt</a></li>
<li><a href="/starter.md">Starter</a></li>
<li><a href="/api/sandbox">Free sandbox</a></li>
<li><a href="/openapi.json">OpenAPI</a></li>
</ul>
</nav>
</header>
<main id="main">
${main}
</main>
<footer>
<p>Previews are public; bodies stay sealed until an agent unlocks them. Agents: send <code>Accept: application/json</code> to any page for JSON.</p>
</footer>
</body>
</html>
`

/** Dollars and cents ($1.20), with the micro-USDC digits kept where a price has them ($0.000001). */
export const usd = (amount: number): string =>
  `${amount < 0 ? "-" : ""}$${
    Math.abs(amount).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })
  }`
